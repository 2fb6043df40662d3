"""Capture overhead: breakscan's capture + analysis vs a bare ``torch._dynamo.explain``.

Both run in this one process on the same model and inputs, interleaved, after a warm-up, and
the median of several repeats is reported. The goal (issue #2) is a ratio of at most 1.25x:
breakscan's records come from the same Dynamo pass as explain's, so the extra cost is the log
handlers, the bytecode hook, the metrics read and the analysis.

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

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breakscan.analyse import analyse  # noqa: E402
from breakscan.capture import clean_dynamo_state, run_explain  # noqa: E402
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


def sample_targets() -> list[tuple[str, tuple]]:
    targets = []
    for path in sorted((ROOT / "sample_models").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and "Expected scan" in (ast.get_docstring(node) or ""):
                loaded = load_target(f"{path}:{node.name}", input_shapes=["8,16"])
                targets.append((f"{path.name}:{node.name}", (loaded.fn, loaded.args)))
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
    """breakscan's capture stage and analysis, end to end (resets included)."""
    start = time.perf_counter()
    analyse(run_explain(fn, args, {}))
    return time.perf_counter() - start


def measure(fn, args, repeats: int) -> tuple[float, float]:
    bare, ours = [], []
    bare_explain(fn, args)  # warm-up: imports, lazy init
    breakscan_capture(fn, args)
    for _ in range(repeats):
        bare.append(bare_explain(fn, args))
        ours.append(breakscan_capture(fn, args))
    return statistics.median(bare), statistics.median(ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    torch.manual_seed(0)
    models = sample_targets()
    models.append(("DeepMLP (24 layers, 64 wide)", (DeepMLP().eval(), (torch.randn(8, 64),))))
    models.append(("SmallTransformer (2 layers)", (SmallTransformer().eval(),
                                                    (torch.randn(4, 16, 64),))))
    print(f"# torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {torch.get_num_threads()} threads, median of {opts.repeats}")
    print("| model | explain (ms) | breakscan capture (ms) | ratio |")
    print("|---|---:|---:|---:|")
    total_bare = total_ours = 0.0
    for name, (fn, args) in models:
        bare, ours = measure(fn, args, opts.repeats)
        total_bare += bare
        total_ours += ours
        print(f"| {name} | {bare * 1e3:.0f} | {ours * 1e3:.0f} | {ours / bare:.2f}x |")
    print(f"| **all models** | {total_bare * 1e3:.0f} | {total_ours * 1e3:.0f} | "
          f"**{total_ours / total_bare:.2f}x** |")


if __name__ == "__main__":
    main()
