"""A model zoo's expected counts, PyTorch-style: one committed file, every target's counts, and a
gate that fails when they move either way.

PyTorch's benchmark CI keeps per-model expected results and fails on improvements too, printing
the command that updates them, so the file never goes stale. ``--expected FILE`` (``check``,
``merge``) does the same for each target's graphs, root-cause breaks, graph calls per call,
recompiles, kernels launched per call and, with ``--compile-time``, the cold compile's
instructions and seconds (each lower is better; a compile figure within :data:`TOLERANCE` of
its value is unchanged, and its change names the dependencies that changed since the file was
written), and whether it scans and compiles at all:

- ``PASS``: as expected; ``FAIL``: a count went up, one the file has was not measured, or it
  no longer scans; ``IMPROVED``: something went down and nothing up (fails unless
  ``--allow-improvements``); ``NEW``: not in the file; ``MISSING``: in the file, not in the run.

``--update-expected`` rewrites the file from the run. The file is read as data. Imports no torch.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..model.result import ModelRun
from ..model.verdicts import ExpectedCheck
from .cache import torch_version

FORMAT = 1
COUNTS = ("graphs", "root_breaks", "graph_calls_per_call", "recompiles", "kernels_per_call",
          "compile_instructions", "compile_s")
# The cold compile's figures (``--compile-time``) move a little from run to run: a change within
# this share of the expected value is no change. Instructions are counted (PyTorch's own CI
# allows 1.5 %), seconds are timed on a machine other jobs share.
TOLERANCE = {"compile_instructions": 0.05, "compile_s": 0.5}


def counts_of(run: ModelRun) -> dict[str, Any]:
    """What the file records for a run: ``ok`` (it scanned and compiled) and each measured
    count (a count the run did not measure, kernels without ``--kernels``, is left out)."""
    result = run.result
    ok = run.error is None and result is not None and result.compile_error is None
    if result is None:
        return {"ok": False}
    s = result.summary
    cold = result.compile_time.cold if result.compile_time is not None else None
    counts = {"graphs": s.graph_count, "root_breaks": s.graph_break_count,
              "graph_calls_per_call": s.graph_calls_per_call,
              "recompiles": s.recompile_count if result.recompiles is not None else None,
              "kernels_per_call": s.kernels_per_call,
              "compile_instructions": cold.instructions if cold is not None else None,
              "compile_s": round(cold.frames_s, 3) if cold is not None else None}
    return {"ok": ok, **{k: int(v) if v == int(v) else v for k, v in counts.items()
                         if v is not None}}


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def judge(run: ModelRun, expected: dict[str, Any] | None, *,
          allow_improvements: bool, moved: str = "") -> ExpectedCheck:
    """One target's status against its entry (None: not in the file); ``moved``: the
    dependencies that changed since the file was written, said next to a compile figure's
    change ("torch 2.13.0 -> 2.15.0")."""
    now = counts_of(run)
    if expected is None:
        return ExpectedCheck(status="NEW", changes=["not in the expected file"], counts=now)
    worse, better = [], []
    if expected.get("ok") is True and not now["ok"]:
        worse.append(f"no longer scans and compiles ({run.error or 'torch.compile fails'})")
    elif expected.get("ok") is False and now["ok"]:
        better.append("scans and compiles now")
    for name in COUNTS:
        before, after = expected.get(name), now.get(name)
        if before is None:
            continue
        if after is None:
            if now["ok"]:
                worse.append(f"{name} not measured this run (expected {_number(before)})")
            continue
        tolerance = TOLERANCE.get(name, 0.0)
        said = f"{name} {_number(before)} -> {_number(after)}"
        if name in TOLERANCE and moved:
            said += f" ({moved} since the file was written: the change may come from that)"
        if after > before * (1 + tolerance):
            worse.append(said)
        elif after < before * (1 - tolerance):
            better.append(said)
    if worse:
        return ExpectedCheck(status="FAIL", changes=worse + better, counts=now)
    if better:
        return ExpectedCheck(status="IMPROVED", changes=better, counts=now,
                             fails_gate=not allow_improvements)
    return ExpectedCheck(status="PASS", counts=now, fails_gate=False)


@dataclass
class ZooVerdict:
    """The zoo against its expected file: the note when the file was made on another torch.
    Each run is judged in place (``run.expected``); a target the file has and the run lacks is
    added as a failed run (MISSING), so every report and the exit code agree."""

    note: str | None = None

    @staticmethod
    def failed(runs: list[ModelRun]) -> bool:
        return any(r.expected is not None and r.expected.fails_gate and not r.flaky
                   for r in runs)


def apply_expected(runs: list[ModelRun], document: dict[str, Any], *, allow_improvements: bool,
                   complete: bool) -> ZooVerdict:
    """Judge every run (a run failing its expected counts gets exit 1 at least); ``complete``:
    the runs are the whole zoo (not one shard), so a target the file has and they lack is
    MISSING."""
    targets = document["targets"]
    for run in runs:
        run.expected = judge(run, targets.get(run.target), allow_improvements=allow_improvements,
                             moved=_moved(document, run))
        if run.expected.fails_gate:
            run.exit_code = max(run.exit_code, 1)
    seen = {r.target for r in runs}
    for target in sorted(t for t in targets if t not in seen) if complete else []:
        runs.append(ModelRun(target=target, result=None, exit_code=1,
                             error="MISSING: in the expected counts file, not in this run",
                             expected=ExpectedCheck(status="MISSING",
                                                    changes=["not in this run"])))
    torches = {r.origin.torch for r in runs if r.origin} or {torch_version()}
    made = document.get("torch_version")
    note = (f"expected counts from torch {made}, this run {', '.join(sorted(torches))}"
            if made and torches != {made} else None)
    return ZooVerdict(note=note)



def dependencies(run: ModelRun | None = None) -> dict[str, str]:
    """What a compile's cost depends on besides the model: torch, Python and, where installed,
    triton; a run from a results file (``merge``) says its own torch and Python."""
    import platform
    from importlib import metadata

    found = {"torch": run.origin.torch if run and run.origin else torch_version(),
             "python": run.origin.python if run and run.origin else platform.python_version()}
    try:
        found["triton"] = metadata.version("triton")
    except metadata.PackageNotFoundError:
        pass
    return found


def _moved(document: dict[str, Any], run: ModelRun) -> str:
    """'torch 2.13.0 -> 2.15.0' for each dependency the file names that differs in this run."""
    then = document.get("dependencies") or {"torch": document.get("torch_version")}
    now = dependencies(run)
    return ", ".join(f"{name} {then[name]} -> {now[name]}" for name in sorted(then)
                     if then.get(name) and name in now and now[name] != then[name])


MAX_COUNT = 1e12  # far above any real count: a larger number is no count


def _count_error(value: Any) -> str | None:
    """Why ``value`` is no count (a finite non-negative number; NaN, infinity, a bool are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if not (0 <= value <= MAX_COUNT and math.isfinite(value)):
        return f"{value!r} is not a finite non-negative count"
    return None


def read_expected(path: Path) -> dict[str, Any]:
    """The expected file, checked as data: a regular file of JSON (no NaN or Infinity), every
    count a finite non-negative number; one line naming what is wrong otherwise."""
    from ..files import load_json_data, read_regular

    try:
        document = load_json_data(read_regular(path, "--expected"), "a count")
    except FileNotFoundError:
        raise UsageError(f"--expected {path} does not exist (write it with "
                         "--update-expected)") from None
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise UsageError(f"--expected {path} is not readable JSON ({exc})") from None
    targets = document.get("targets") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("breakscan_expected") != FORMAT or \
            not isinstance(targets, dict):
        raise UsageError(f"--expected {path} is not a breakscan expected-counts file "
                         f"(breakscan_expected: {FORMAT} with targets)")
    made = document.get("torch_version")
    if made is not None and not isinstance(made, str):
        raise UsageError(f"--expected {path}: torch_version must be a version string, not "
                         f"{made!r}")
    deps = document.get("dependencies")
    if deps is not None and (not isinstance(deps, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in deps.items())):
        raise UsageError(f"--expected {path}: dependencies must map names to version strings")
    for target, entry in targets.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("ok"), bool) or \
                set(entry) - {"ok", *COUNTS}:
            raise UsageError(f"--expected {path}: the entry of {target!r} is not "
                             f"{{ok, {', '.join(COUNTS)}}}")
        for name in COUNTS:
            wrong = _count_error(entry[name]) if name in entry else None
            if wrong:
                raise UsageError(f"--expected {path}: the entry of {target!r}: {name} {wrong}")
    return document


def not_scanned(runs: list[ModelRun]) -> list[str]:
    """The targets of a run that were not scanned to an end: interrupted, or refused before a
    scan (the config's or the target's error, exit 2). Their counts are not measurements."""
    return [r.target for r in runs if r.interrupted or (r.exit_code == 2 and r.result is None)]


def write_expected(path: Path, runs: list[ModelRun]) -> None:
    """The file for these runs (sorted, one target per key: a readable diff in review); keys
    of the file's own that breakscan does not write (a note) are kept. Written only from a run
    in which every target was scanned: the committed file is never replaced by a partial one."""
    from ..files import write_atomic

    skipped = not_scanned(runs)
    if skipped:
        raise UsageError(f"--update-expected: {path} left unchanged: {len(skipped)} target(s) "
                         f"were not scanned ({', '.join(skipped)}); write expected counts "
                         "from a run that scans every target")
    kept: dict[str, Any] = {}
    if os.path.lexists(path) and not (os.path.isfile(path) and os.path.getsize(path) == 0):
        try:
            kept = {k: v for k, v in read_expected(path).items() if k not in _WRITTEN}
        except UsageError as exc:
            raise UsageError(f"refusing to rewrite {path}: {exc}; name an expected-counts file "
                             "or a new one") from None
    document = {"breakscan_expected": FORMAT, "torch_version": torch_version(),
                "dependencies": dependencies(runs[0] if runs else None),
                "lower_is_better": list(COUNTS), **kept,
                "targets": {r.target: counts_of(r) for r in sorted(runs, key=lambda r: r.target)}}
    try:
        write_atomic(path, json.dumps(document, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write --expected {path}: {exc.strerror or exc} (it is "
                         "unchanged)") from None


_WRITTEN = ("breakscan_expected", "torch_version", "dependencies", "lower_is_better",
            "targets")


def update_command(argv: list[str], *, sharded: bool = False) -> str:
    """The command that rewrites the expected file: this one, with ``--update-expected``; for
    one shard, the merge of every shard's results (one shard cannot write the whole file)."""
    kept = [a for a in argv if a not in ("--allow-improvements", "--update-expected")]
    if sharded:
        expected = next((kept[i + 1] for i, a in enumerate(kept[:-1]) if a == "--expected"),
                        None)
        config = next((kept[i + 1] for i, a in enumerate(kept[:-1]) if a == "--config"), None)
        return shlex.join(["breakscan", "merge", *(["--config", config] if config else []),
                           *(["--expected", expected] if expected else []),
                           "--update-expected"]) + " RESULTS... (every shard's --results file)"
    return shlex.join(["breakscan", *kept, "--update-expected"])


def summary_lines(runs: list[ModelRun], verdict: ZooVerdict, path: os.PathLike[str] | str,
                  argv: list[str], *, sharded: bool = False) -> list[str]:
    """What the gate says: the count per status, each target that is not PASS, and, when it
    fails, the command that updates the file."""
    from collections import Counter

    statuses = Counter(r.expected.status for r in runs if r.expected is not None)
    order = ("PASS", "IMPROVED", "FAIL", "NEW", "MISSING")
    lines = [f"expected counts ({path}): " + ", ".join(
        f"{statuses[s]} {s}" for s in order if statuses[s])]
    for run in runs:
        check = run.expected
        if check is not None and check.status != "PASS":
            flaky = " (flaky: reported, not failing)" if run.flaky else ""
            allowed = "" if check.fails_gate else " (allowed)"
            lines.append(f"  {check.status} {run.target}: {'; '.join(check.changes)}"
                         f"{allowed}{flaky}")
    if verdict.note:
        lines.append(f"  note: {verdict.note}")
    if verdict.failed(runs):
        lines.append(f"update the expected counts: {update_command(argv, sharded=sharded)}")
    return lines


def gate_zoo(runs: list[ModelRun], path: Path, *, update: bool, allow_improvements: bool,
             complete: bool, argv: list[str]) -> list[str]:
    """``--expected``: the file rewritten first with ``update``, every run judged (a failing
    one's exit code raised, MISSING ones added); the lines to print."""
    if update:
        write_expected(path, runs)
    verdict = apply_expected(runs, read_expected(path), allow_improvements=allow_improvements,
                             complete=complete)
    lines = summary_lines(runs, verdict, path, argv, sharded=not complete)
    if update:
        lines.insert(0, f"wrote {path} ({len(runs)} targets)")
    return lines


def gate_zoo_runs(runs: list[ModelRun], flaky: frozenset, expected: Path | None, *, update: bool,
                  allow_improvements: bool, complete: bool, argv: list[str]) -> list[str]:
    """The config's ``flaky`` targets marked (their failure is reported, it does not fail the
    run), then the runs gated by the expected counts: the lines to print."""
    for run in runs:
        run.flaky = run.target in flaky
    if expected is None:
        return []
    return gate_zoo(runs, expected, update=update, allow_improvements=allow_improvements,
                    complete=complete, argv=argv)
