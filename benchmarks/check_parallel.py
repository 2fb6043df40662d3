"""`breakscan check` over 8 sample targets: -j 2 vs -j 1, and a fully cached re-run (not a test).

A project folder with copies of the sample files and a [tool.breakscan] listing 8 targets is made
in a temporary folder. Each configuration runs as its own process, ``--repeats`` times
(interleaved), and the median wall time is reported: ``-j 1 --no-cache``, ``-j 2 --no-cache``,
then ``-j 2`` twice (the first fills the cache, the second is answered from it). Goals: -j 2 at
most 0.6x of -j 1; a cached re-run at most 1 s per target and 5 s in all.

    python benchmarks/check_parallel.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
TARGETS = ["tensor_branch.py:TensorIf", "tensor_branch.py:TensorWhere",
           "item_logging.py:LogInsideForward", "print_in_forward.py:PrintInForward",
           "nested_break.py:NestedBreak", "per_layer_branch.py:PerLayerBranch",
           "loop_break.py:PrintInLoop", "explicit_break.py:ExplicitBreak"]


def _project(folder: Path) -> None:
    for name in {t.split(":")[0] for t in TARGETS} | {"nested_helpers.py"}:
        shutil.copy(SAMPLES / name, folder / name)
    entries = "".join(f'[[tool.breakscan.targets]]\ntarget = "{t}"\ninput-shape = ["8,16"]\n\n'
                      for t in TARGETS)
    (folder / "pyproject.toml").write_text("[tool.breakscan]\nmax-breaks = 5\n\n" + entries)


def _seconds(folder: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "breakscan", "check", "-q", *args], cwd=folder,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}; "
          f"{len(TARGETS)} targets; median of {args.repeats}")
    serial, parallel, cached = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _project(folder)
        _seconds(folder, "-j", "1", "--no-cache")  # warm-up: page cache, pyc files
        for i in range(args.repeats):
            runs = [(serial, ("-j", "1", "--no-cache")), (parallel, ("-j", "2", "--no-cache"))]
            for sink, flags in (runs if i % 2 == 0 else runs[::-1]):
                sink.append(_seconds(folder, *flags))
            shutil.rmtree(folder / ".breakscan_cache", ignore_errors=True)
            _seconds(folder, "-j", "2")  # fills the cache
            cached.append(_seconds(folder, "-j", "2"))
    one, two, hit = (statistics.median(x) for x in (serial, parallel, cached))
    print(f"-j 1: {one:.1f} s   -j 2: {two:.1f} s   -> {two / one:.2f}x (goal <= 0.6x)")
    print(f"cached re-run: {hit:.2f} s, {hit / len(TARGETS):.2f} s per target "
          "(goal <= 1 s per target, 5 s in all)")


if __name__ == "__main__":
    main()
