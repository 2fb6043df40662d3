"""What ``--kernels`` adds to a scan (not a test).

For each target, ``breakscan TARGET -f json`` with and without ``--kernels``, interleaved (A, B,
A, B, ...) after one warm-up run of each, whole processes, medians with 95 % intervals
(``breakscan.model.stats``). Also from the ``--kernels`` report: the ``kernels`` stage's seconds and
the sum of the graphs' Inductor compile seconds, to show the stage is one Inductor compile per
graph and little else. Inductor's C++ compile cache (not the FX-graph cache, which the stage
bypasses) is warm after the warm-up run, as it is on a developer's machine after the first scan.

    python benchmarks/kernels_cost.py                    # a sample, a real transformer, a program
    python benchmarks/kernels_cost.py --repeats 5 --only sample
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from breakscan.model.stats import median_interval  # noqa: E402

TARGETS = {
    "sample": [f"{ROOT}/sample_models/kernels.py:SortForMax", "-s", "4,64"],
    "bert": [f"{ROOT}/tests/fixtures/third_party/hf_models.py:bert", "-s", "2,16",
             "--dtype", "int64"],
    # `breakscan run`: the program's own Inductor compiles are the inspected ones (10 graphs)
    "program": ["run", "-q", f"{ROOT}/sample_models/train_loop.py", "--epochs", "1"],
}


def _show(samples: list[float]) -> str:
    i = median_interval(samples)
    return f"{i.value:.2f} s [{i.low:.2f}, {i.high:.2f}]"


def _run(args: list[str], kernels: bool) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        flags = ["-f", "json", "-o", str(out)] + (["--kernels"] if kernels else [])
        if args[0] == "run":  # breakscan's flags go before the program's
            cmd = [sys.executable, "-m", "breakscan", "run", *flags, *args[1:]]
        else:
            cmd = [sys.executable, "-m", "breakscan", *args, *flags]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
        return time.perf_counter() - start, json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=sorted(TARGETS))
    opts = parser.parse_args()
    for name, args in TARGETS.items():
        if opts.only and name != opts.only:
            continue
        _run(args, False), _run(args, True)  # warm-up: imports, C++ compile cache
        plain, inspected, stage, inductor = [], [], [], []
        graphs = 0
        for _ in range(opts.repeats):
            seconds, _ = _run(args, False)
            plain.append(seconds)
            seconds, doc = _run(args, True)
            inspected.append(seconds)
            stage.append(doc["stages"].get("kernels", 0.0))
            inductor.append(sum(g["inductor_compile_s"] or 0 for g in doc["graphs"]))
            graphs = len(doc["graphs"])
        p, k = median_interval(plain).value, median_interval(inspected).value
        print(f"{name}: {graphs} graph(s), {opts.repeats} interleaved pairs")
        print(f"  without --kernels  {_show(plain)}")
        print(f"  with --kernels     {_show(inspected)}  (+{k - p:.2f} s, {k / p:.2f}x)")
        print(f"  kernels stage      {_show(stage)} (none for run: no stage of its own); "
              f"Inductor compiles {_show(inductor)}")


if __name__ == "__main__":
    main()
