"""How fast `breakscan trace` reads TORCH_TRACE files, and whether memory stays flat (not a test).

A trace folder of about ``--megabytes`` MB is made by copying the recorded trace fixture
(tests/fixtures/traces/step) as many rank files as needed; the folder is then read the way
`breakscan trace` reads it (every file streamed record by record, one core): the throughput of
one pass, and the peak of Python's own allocations (tracemalloc) in a second pass. Goal: at least 50 MB/s,
memory flat (the peak does not grow with the folder).

    python benchmarks/trace_parse.py [--megabytes 100]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breakscan.trace.reader import read_rank, trace_files  # noqa: E402

FIXTURE = ROOT / "tests/fixtures/traces/step/dedicated_log_torch_trace_rank_0_recorded.log"


def _read(folder: Path) -> tuple[float, int, int]:
    """Seconds and bytes of one timed pass, then the allocation peak of a second pass (tracing
    allocations slows Python several-fold, so it is not on while timing)."""
    start = time.perf_counter()
    total = sum(read_rank(path).bytes for path in trace_files(folder))
    seconds = time.perf_counter() - start
    tracemalloc.start()
    for path in trace_files(folder):
        read_rank(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, total, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    args = parser.parse_args()
    size = FIXTURE.stat().st_size
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (args.megabytes // 10, args.megabytes):
            folder = Path(tmp) / f"mb{scale}"
            folder.mkdir()
            for rank in range(max(1, scale * 1024 * 1024 // size)):
                shutil.copy(FIXTURE, folder / f"dedicated_log_torch_trace_rank_{rank}_x.log")
            seconds, total, peak = _read(folder)
            print(f"{total / 1e6:.0f} MB in {seconds:.2f} s: {total / 1e6 / seconds:.0f} MB/s; "
                  f"peak Python memory {peak / 1e6:.1f} MB (per rank file kept: the records "
                  f"breakscan uses)")


if __name__ == "__main__":
    main()
