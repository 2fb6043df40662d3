"""`breakscan compare` over every bad/good sample pair: the README's "Fixed twins" table.

    python benchmarks/compare_pairs.py                 # inductor, 1 thread
    python benchmarks/compare_pairs.py --backend eager # quick

Pairs come from the good twins' docstrings (``twin_of:``). Each pair is scanned in its own
processes; a third gives the twin the original's weights, compares outputs on the same inputs and
times both compiled models in that one process, interleaved: the latency and speedup columns come
from there (median per call, 95 % interval of the speedup, verdict).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import sample_expectations  # noqa: E402

from breakscan.runs.compare import compare_targets  # noqa: E402
from breakscan.options import Limits, ScanOptions, TimingOptions  # noqa: E402
from breakscan.report.wording import bound  # noqa: E402

VARY = {"ShapeBranch": "2,4,16", "NoShapeBranch": "2,4,16"}


def us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args()
    os.chdir(ROOT)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"backend={args.backend}, 1 thread")
    print("| pair (A → B) | graphs | breaks | graph calls per call | recompiles | ops "
          "| compiled latency, one process | B vs A (95 % CI) | outputs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for good in sample_expectations():
        for bad in filter(None, (n.strip() for n in good.facts.get("twin_of", "").split(","))):
            options = ScanOptions(input_shapes=["8,16"], vary_batch=VARY.get(bad),
                                  timing=TimingOptions(backend=args.backend))
            c = compare_targets(f"{good.file}:{bad}", good.target, options, Limits(timeout=600))
            a, b = c.a.result, c.b.result
            if a is None or b is None:
                print(f"| {bad} → {good.name} | error: {c.a.error or c.b.error} |")
                continue

            def pair(get):
                return f"{get(a)} → {get(b)}"

            recompiles = pair(lambda r: r.summary.recompile_count) if a.recompiles else "-"
            out = "-" if c.outputs is None else ("match" if c.outputs.match else "differ")
            ab = c.ab
            latency = f"{us(ab.original.value)} → {us(ab.fixed.value)}" if ab else "-"
            s = ab.speedup if ab else None
            verdict = (f"{s.value:.2f}× ({bound(s.low)}–{bound(s.high)}) {ab.verdict}" if ab
                       else "-")
            print(f"| `{good.file.name}` {bad} → {good.name} "
                  f"| {pair(lambda r: r.summary.graph_count)} "
                  f"| {pair(lambda r: r.summary.graph_break_count)} "
                  f"| {pair(lambda r: f'{r.summary.graph_calls_per_call:g}')} | {recompiles} "
                  f"| {pair(lambda r: r.summary.op_count)} | {latency} | {verdict} "
                  f"| {out} |", flush=True)


if __name__ == "__main__":
    main()
