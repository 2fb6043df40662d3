"""What a scan costs against the explain a user would otherwise run (not a test).

Two comparisons, each interleaved (A, B, A, B, ...) after one warm-up run of each, medians with
95 % intervals (``breakscan.model.stats``):

- **whole process**: ``breakscan scan TARGET -f json -o FILE`` (everything a user waits for:
  the CLI, the isolated scan process, load, lint, the three calls of the one compiled model,
  the eager run, analysis, the report) against a process that builds the same fresh model and
  runs a bare ``torch._dynamo.explain`` on it (``--bare``). Goal: at most 1.25x.
- **capture, in one process**: the scan's first compiled call with everything it records and its
  analysis (the ``explain`` stage of ``result.stages``) against a bare explain of another fresh
  copy of the model; also shown, the three calls together (``explain`` + ``later call`` +
  ``run-time counts``). Goal: at most 1.1x for the capture.

    python benchmarks/capture_overhead.py                 # a sample and a real 22-graph model
    python benchmarks/capture_overhead.py --repeats 9 --only sample
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HF = "tests/fixtures/third_party/hf_models.py"
MODELS = {  # name -> (target, scan options as CLI arguments)
    "sample": ("sample_models/per_layer_branch.py:PerLayerBranch", ["--input-shape", "8,16"]),
    "mimi": (f"{HF}:mimi", ["--inputs", f"{HF}:codec_inputs"]),
}


def _load(target: str, cli: list[str]):
    from breakscan.pipeline.load import load_target

    options = dict(zip(cli[::2], cli[1::2]))
    return load_target(target, input_shapes=[options["--input-shape"]]
                       if "--input-shape" in options else None,
                       inputs=options.get("--inputs"))


def bare_explain(target: str, cli: list[str]) -> float:
    """A fresh model, one bare explain (prints and warnings kept off the terminal, as a scan
    does); returns explain's seconds."""
    import torch

    loaded = _load(target, cli)
    start = time.perf_counter()
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._dynamo.explain(loaded.fn)(*loaded.args, **loaded.kwargs)
    seconds = time.perf_counter() - start
    torch._dynamo.reset()
    return seconds


def scan_stages(target: str, cli: list[str]) -> dict[str, float]:
    """A fresh model, scanned in this process: seconds per stage."""
    from breakscan.options import ScanOptions
    from breakscan.pipeline.scan import scan_loaded

    loaded = _load(target, cli)
    return scan_loaded(loaded, ScanOptions()).stages


def _process(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - start


def whole_process(target: str, cli: list[str], repeats: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        scan = [sys.executable, "-m", "breakscan", "scan", target, *cli, "-f", "json", "-o",
                os.path.join(tmp, "scan.json")]
        bare = [sys.executable, __file__, "--bare", target, *cli]
        _process(bare), _process(scan)  # warm-up: page cache, .pyc files
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(repeats):
            times[0].append(_process(bare))
            times[1].append(_process(scan))
    return times


def in_process(target: str, cli: list[str], repeats: int
               ) -> tuple[list[float], list[float], list[float]]:
    bare_explain(target, cli), scan_stages(target, cli)  # warm-up: imports, lazy init
    bare, first, three = [], [], []
    for _ in range(repeats):
        bare.append(bare_explain(target, cli))
        stages = scan_stages(target, cli)
        first.append(stages["explain"])
        three.append(stages["explain"] + stages["later call"] + stages["run-time counts"])
    return bare, first, three


def _line(name: str, base: list[float], ours: list[float], goal: float) -> str:
    from breakscan.model.stats import median_interval, speedup_interval

    b, o = median_interval(base), median_interval(ours)
    ratio = speedup_interval(ours, base)
    verdict = "within" if ratio.high <= goal else ("over" if ratio.low > goal else "around")
    return (f"| {name} | {b.value:.2f} s | {o.value:.2f} s | **{ratio.value:.2f}x** "
            f"({ratio.low:.2f}-{ratio.high:.2f}) | {verdict} {goal}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=sorted(MODELS))
    parser.add_argument("--bare", nargs=argparse.REMAINDER,
                        help="(internal) TARGET [scan options]: one bare explain process")
    args = parser.parse_args()
    if args.bare:
        bare_explain(args.bare[0], args.bare[1:])
        return
    import torch

    print(f"# torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs; interleaved, median of "
          f"{args.repeats} (95 % interval) after a warm-up of each")
    print("| model, comparison | bare explain | breakscan | ratio | goal |")
    print("|---|---:|---:|---:|---|")
    for name, (target, cli) in MODELS.items():
        if args.only and name != args.only:
            continue
        bare, scan = whole_process(target, cli, args.repeats)
        print(_line(f"{name}: whole process", bare, scan, 1.25), flush=True)
        bare, first, three = in_process(target, cli, args.repeats)
        print(_line(f"{name}: capture (first call), in process", bare, first, 1.1), flush=True)
        print(_line(f"{name}: all three calls, in process", bare, three, 1.25), flush=True)


if __name__ == "__main__":
    main()
