"""How much does `--time`'s compiled median move between runs of the same command?

Runs ``breakscan TARGET -s 8,16 --time --format json`` N times (default 10), each a fresh
process as a user's would be, and reports the compiled and eager medians of every run, their
spread around the median of the runs (max |deviation| in %), how many runs were marked noisy,
and the load average. The goal on a quiet 2-core machine: the compiled median within ±5 %.

    python benchmarks/timing_spread.py                      # the headline sample, 10 runs
    python benchmarks/timing_spread.py --runs 5 --target sample_models/item_logging.py:LogInsideForward
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADLINE = "sample_models/per_layer_branch.py:PerLayerBranch"


def one_run(target: str, max_run_time: float) -> dict:
    proc = subprocess.run([sys.executable, "-m", "breakscan", target, "-s", "8,16", "--time",
                           "--max-run-time", str(max_run_time), "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"breakscan failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)["timings"]


def spread(values: list[float]) -> float:
    """Largest deviation from the median of the runs, in % of it."""
    median = statistics.median(values)
    return max(abs(v - median) for v in values) / median * 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=HEADLINE)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--max-run-time", type=float, default=2.0)
    args = parser.parse_args()
    print(f"{args.runs} × breakscan {args.target} -s 8,16 --time --max-run-time "
          f"{args.max_run_time:g} on {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.2f}")
    compiled, eager, noisy = [], [], 0
    start = time.perf_counter()
    for k in range(args.runs):
        t = one_run(args.target, args.max_run_time)
        compiled.append(t["compiled"]["median_s"])
        eager.append(t["eager"]["median_s"])
        noisy += bool(t["eager"]["noisy"] or t["compiled"]["noisy"])
        print(f"  run {k + 1:2d}: compiled {compiled[-1] * 1e6:8.1f} µs  eager "
              f"{eager[-1] * 1e6:8.1f} µs  load {t['load_average']}")
    print(f"compiled median of runs {statistics.median(compiled) * 1e6:.1f} µs, spread "
          f"±{spread(compiled):.1f} % (min {min(compiled) * 1e6:.1f}, max "
          f"{max(compiled) * 1e6:.1f})")
    print(f"eager median of runs {statistics.median(eager) * 1e6:.1f} µs, spread "
          f"±{spread(eager):.1f} %")
    print(f"runs marked noisy: {noisy}/{args.runs}; wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
