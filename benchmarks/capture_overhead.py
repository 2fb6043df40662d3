"""Capture overhead: breakscan's capture + analysis vs a bare ``torch._dynamo.explain``.

Both run in this one process on freshly built copies of the same model (same seed) and the same
inputs, interleaved, after a warm-up, and the median of several repeats is reported. The goal is
a ratio of at most 1.25x per captured call: breakscan's records come from the same Dynamo pass
as explain's, so the extra cost is the log handlers, the bytecode hook, the metrics read and the
analysis. A scan captures two calls (the first call of the fresh model, then a later call, to
tell first-call-only breaks apart); the next columns time both, against one bare explain. The
last column is the run-time count (``capture.run_counted``: the compiled model called again after
a warm-up, graph calls and returns to Python counted), a pass of its own.

    python benchmarks/capture_overhead.py            # all sample models + two larger models
    python benchmarks/capture_overhead.py --repeats 9
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breakscan.analyse import analyse  # noqa: E402
from breakscan.capture import run_explain  # noqa: E402
from breakscan.dynamo import clean_dynamo_state  # noqa: E402
from breakscan.load import load_target  # noqa: E402


class DeepMLP(nn.Module):
    """24 Linear+GELU layers with a `.item()` log in the middle: a larger graph to trace."""

    def __init__(self, width: int = 64, depth: int = 24):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = nn.functional.gelu(layer(x))
            if i == len(self.layers) // 2:
                self.mid_norm = x.norm().item()
        return x


class SmallTransformer(nn.Module):
    """torch's own 2-layer TransformerEncoder (batch_first), no breaks."""

    def __init__(self, d_model: int = 64):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=128,
                                           batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def sample_targets() -> list[tuple[str, Callable[[], tuple]]]:
    targets = []
    for path in sorted((ROOT / "sample_models").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            doc = (ast.get_docstring(node) or "") if isinstance(node, ast.ClassDef) else ""
            # A model that does not compile has no explain to compare with (it raises).
            if "Expected scan" in doc and "compile_error:" not in doc:
                def make(target=f"{path}:{node.name}") -> tuple:
                    loaded = load_target(target, input_shapes=["8,16"])
                    return loaded.fn, loaded.args
                targets.append((f"{path.name}:{node.name}", make))
    return targets


def bare_explain(fn, args) -> float:
    """What a user would do by hand: reset Dynamo, run explain once."""
    start = time.perf_counter()
    clean_dynamo_state()
    # breakscan also keeps the model's prints and Dynamo's warnings off the terminal
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch._dynamo.explain(fn)(*args)
    return time.perf_counter() - start


def breakscan_capture(fn, args) -> float:
    """breakscan's capture stage and analysis of one call, end to end (resets included)."""
    start = time.perf_counter()
    analyse(run_explain(fn, args, {}))
    return time.perf_counter() - start


def breakscan_two_calls(fn, args) -> float:
    """What a scan captures: the first call, then a later call, compared."""
    from breakscan.analyse import compare_calls
    from breakscan.result import ScanResult

    start = time.perf_counter()
    found = analyse(run_explain(fn, args, {}))
    result = ScanResult(target="", method="forward", torch_version="", python_version="",
                        device="cpu", training=False, inputs=[], summary=found.summary,
                        explain=found.explain, graphs=found.graphs, breaks=found.breaks,
                        frames=found.frames, discrepancies=found.discrepancies,
                        capture_seconds=0.0)
    compare_calls(result, run_explain(fn, args, {}))
    return time.perf_counter() - start


def breakscan_runtime_counts(fn, args) -> float:
    """The run-time count every scan adds: compile (eager backend), warm up, count 3 calls."""
    from breakscan.capture import run_counted

    start = time.perf_counter()
    run_counted(fn, args, {}, training=False, eager_frames=set())
    return time.perf_counter() - start


def measure(make: Callable[[], tuple], repeats: int) -> tuple[float, float, float, float]:
    """Medians of (bare explain, breakscan one call, breakscan two calls, run-time counts),
    each on a fresh model."""
    bare, ours, both, counts = [], [], [], []
    bare_explain(*make())  # warm-up: imports, lazy init
    breakscan_capture(*make())
    for _ in range(repeats):
        bare.append(bare_explain(*make()))
        ours.append(breakscan_capture(*make()))
        both.append(breakscan_two_calls(*make()))
        counts.append(breakscan_runtime_counts(*make()))
    return (statistics.median(bare), statistics.median(ours), statistics.median(both),
            statistics.median(counts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    models = sample_targets()

    def seeded(cls, *shape):
        def make() -> tuple:
            torch.manual_seed(0)
            return cls().eval(), (torch.randn(*shape),)
        return make

    models.append(("DeepMLP (24 layers, 64 wide)", seeded(DeepMLP, 8, 64)))
    models.append(("SmallTransformer (2 layers)", seeded(SmallTransformer, 4, 16, 64)))
    print(f"# torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {torch.get_num_threads()} threads, median of {opts.repeats}, "
          "each on a freshly built model")
    print("| model | explain (ms) | breakscan, first call (ms) | ratio | breakscan, both "
          "calls (ms) | ratio per call | run-time counts (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total = [0.0, 0.0, 0.0, 0.0]
    for name, make in models:
        bare, ours, both, counts = measure(make, opts.repeats)
        for i, value in enumerate((bare, ours, both, counts)):
            total[i] += value
        print(f"| {name} | {bare * 1e3:.0f} | {ours * 1e3:.0f} | {ours / bare:.2f}x | "
              f"{both * 1e3:.0f} | {both / bare / 2:.2f}x | {counts * 1e3:.0f} |")
    print(f"| **all models** | {total[0] * 1e3:.0f} | {total[1] * 1e3:.0f} | "
          f"**{total[1] / total[0]:.2f}x** | {total[2] * 1e3:.0f} | "
          f"**{total[2] / total[0] / 2:.2f}x** | {total[3] * 1e3:.0f} |")


if __name__ == "__main__":
    main()
