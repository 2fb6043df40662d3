"""Which targets a CI shard scans: ``breakscan check --shard K/N``, no scheduler of breakscan's.

The zoo's targets are sorted by name and split deterministically, the way PyTorch's benchmark
CI (``--total-partitions N --partition-id i``) and pytest-split (``--splits N --group i``) do:
contiguous slices of the sorted list by default; with the durations an earlier run recorded,
greedy longest-first onto the least-loaded shard (ties by name), so the slowest shard stays
near the mean. Every target lands in exactly one shard. ``K`` may come from the environment a
job array hands its tasks (``env``: ``JOB_COMPLETION_INDEX`` of a Kubernetes Indexed Job, else
``SLURM_ARRAY_TASK_ID`` minus ``SLURM_ARRAY_TASK_MIN``; both count from 0). Torch-free.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from ..errors import UsageError

if TYPE_CHECKING:
    from ..model.result import ModelRun

# Where a job array hands its task its index (0-based), in the order they are read.
INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID")


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); ``"env/4"`` reads the index from the job array's variable."""
    environ = os.environ if environ is None else environ
    head, sep, tail = text.partition("/")
    if not sep or not _digits(tail) or int(tail) < 1:
        raise UsageError(f"--shard takes K/N (1 <= K <= N) or env/N, got {text!r}")
    total = int(tail)
    if head.strip() == "env":
        index = _index_from(environ)
    elif _digits(head):
        index = int(head)
    else:
        raise UsageError(f"--shard takes K/N (1 <= K <= N) or env/N, got {text!r}")
    if not 1 <= index <= total:
        raise UsageError(f"--shard {index}/{total}: the shard must be between 1 and {total}")
    return index, total


def _index_from(environ: Mapping[str, str]) -> int:
    """The 1-based shard of a job array's task (its variables count from 0)."""
    for name in INDEX_VARIABLES:
        raw = environ.get(name)
        if raw is None:
            continue
        lowest = environ.get("SLURM_ARRAY_TASK_MIN", "0") if name.startswith("SLURM") else "0"
        if not _digits(raw) or not _digits(lowest):
            raise UsageError(f"--shard env/N: ${name} is {raw!r}, not a task index")
        return int(raw) - int(lowest) + 1
    raise UsageError("--shard env/N: neither $JOB_COMPLETION_INDEX nor $SLURM_ARRAY_TASK_ID is "
                     "set")


def _digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes ``²``, which ``int`` refuses), at most 9."""
    return re.fullmatch(r"[0-9]{1,9}", text.strip()) is not None


def split(targets: list[str], index: int, total: int,
          durations: Mapping[str, float] | None = None) -> list[str]:
    """Shard ``index`` of ``total`` (1-based): the targets it scans, in sorted order."""
    names = sorted(set(targets))
    if not durations:
        size, extra = divmod(len(names), total)
        start = (index - 1) * size + min(index - 1, extra)
        return names[start:start + size + (1 if index <= extra else 0)]
    known = [durations[n] for n in names if n in durations]
    unknown = sum(known) / len(known) if known else 1.0  # a new target: the mean
    cost = {n: float(durations.get(n, unknown)) for n in names}
    loads = [0.0] * total
    owner: dict[str, int] = {}
    for name in sorted(names, key=lambda n: (-cost[n], n)):  # longest first, ties by name
        shard = min(range(total), key=lambda s: (loads[s], s))
        loads[shard] += cost[name]
        owner[name] = shard + 1
    return [n for n in names if owner[n] == index]


MAX_SECONDS = 1e9  # a target's seconds: more is no duration



def read_durations(path: str | os.PathLike[str]) -> dict[str, float]:
    """``{target: seconds}`` from an earlier run; a missing file is none. Anything but a
    regular file holding one JSON object of finite non-negative seconds is refused (data from
    another job: never executed, every value checked)."""
    from ..files import load_json_data, read_regular

    try:
        doc = load_json_data(read_regular(path, "durations file"), "a duration")
    except FileNotFoundError:
        return {}
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"cannot read durations {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path} is not a durations file ({{target: seconds}})")
    for target, seconds in doc.items():
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
                not (0 <= seconds <= MAX_SECONDS and math.isfinite(seconds)):
            raise UsageError(f"{path} is not a durations file ({{target: seconds}}): "
                             f"{target!r} has {str(seconds)[:40]!r}")
    return {k: float(v) for k, v in doc.items()}


def record_durations(path: Path, runs: list[ModelRun]) -> None:
    """Each scanned target's wall seconds (its process start included: what a shard spends
    on it) added to the durations file; a cached or resumed target keeps the time it had. A
    file that is not a durations file is never rewritten."""
    from ..files import write_atomic

    try:
        known = read_durations(path)
    except UsageError as exc:
        raise UsageError(f"refusing to rewrite --write-durations {path}: {exc}") from None
    for run in runs:
        if run.seconds is not None and not run.cached:
            known[run.target] = run.seconds
    try:
        write_atomic(path, json.dumps(dict(sorted(known.items())), indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write --write-durations {path}: {exc.strerror or exc} (it "
                         "is unchanged)") from None
