"""What `breakscan run` costs on top of the program's own run (not a test).

Two comparisons, each a whole process per run, interleaved, the median of ``--repeats`` runs
(5 by default) after one warm-up run of each command (so both find inductor's on-disk cache
equally warm):

- ``breakscan run --capture-only PROGRAM`` vs ``TORCH_LOGS=graph_breaks python PROGRAM`` (what
  users run today to see breaks; the program compiles with its own backend, inductor);
- ``breakscan run PROGRAM`` (the program's own backend kept) vs ``python PROGRAM``.

Goals: at most 1.25x and 1.1x. The program defaults to the sample training loop.

    python benchmarks/program_overhead.py
    python benchmarks/program_overhead.py --program sample_models/train_loop.py --epochs 3
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breakscan.model.stats import median_interval, speedup_interval  # noqa: E402


def _seconds(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="sample_models/train_loop.py")
    parser.add_argument("--epochs", default="1")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    python = [sys.executable]
    program = [args.program, "--epochs", args.epochs]
    breakscan = python + ["-m", "breakscan", "run", "-q"]
    pairs = {
        "capture-only vs TORCH_LOGS=graph_breaks": (
            (python + program, {**env, "TORCH_LOGS": "graph_breaks"}),
            (breakscan + ["--capture-only"] + program, env), 1.25),
        "run (inductor kept) vs the program alone": (
            (python + program, env), (breakscan + program, env), 1.10),
    }
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}; {' '.join(program)}; median of {args.repeats}")
    for name, ((base_cmd, base_env), (bs_cmd, bs_env), goal) in pairs.items():
        _seconds(base_cmd, base_env), _seconds(bs_cmd, bs_env)  # warm-up: caches, page cache
        base, ours = [], []
        for i in range(args.repeats):
            order = [(base, base_cmd, base_env), (ours, bs_cmd, bs_env)]
            for sink, cmd, cmd_env in (order if i % 2 == 0 else order[::-1]):
                sink.append(_seconds(cmd, cmd_env))
        b, o = median_interval(base), median_interval(ours)
        ratio = speedup_interval(base, ours)  # base / ours: below 1 means breakscan is slower
        print(f"{name}: {b.value:.2f} s vs {o.value:.2f} s -> {o.value / b.value:.2f}x "
              f"(95% CI {1 / ratio.high:.2f}-{1 / ratio.low:.2f}; goal <= {goal:.2f}x)")


if __name__ == "__main__":
    main()
