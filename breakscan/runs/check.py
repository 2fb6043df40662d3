"""Gate one model or a whole repository: ``breakscan check`` reads ``[tool.breakscan]``.

    [tool.breakscan]
    max-breaks = 0                      # defaults for every target
    baseline = "breakscan-baseline.json"

    [[tool.breakscan.targets]]
    target = "models/encoder.py:Encoder"
    input-shape = ["8,16"]
    fail-on = ["item", "data_dependent_branch"]

Each target is scanned and gated on its own; one that fails (or cannot be scanned) does not stop
the others, and one that cannot load (``target.check_loadable``) is refused before any process
starts. Keys are the CLI's option names without the dashes in front.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..config import GATE_KEYS, LIMIT_KEYS, SCAN_KEYS, check_types, from_config
from ..errors import Interrupted, UsageError, interrupt_signal
from ..model.result import ModelRun
from ..options import GateOptions, Limits, ScanOptions
from ..process.isolate import Cancel
from ..target import check_loadable, parse_target
from .cache import ResultCache
from .runner import gated, run_model

if TYPE_CHECKING:
    from .results import ResultsLog

# Keys the section itself may set as defaults for every target (scan keys are per target).
DEFAULT_KEYS = set(SCAN_KEYS) | set(GATE_KEYS) | set(LIMIT_KEYS) | {"baseline"}


ZOO_KEYS = ("expected", "flaky")  # about the whole zoo, not each target


@dataclass(frozen=True)
class ZooSettings:
    """The section's zoo-wide keys: the expected-counts file (relative to the config) and the
    targets whose failure is reported but does not fail the run."""

    expected: Path | None = None
    flaky: frozenset[str] = frozenset()


def zoo_settings(section: dict[str, Any], config_path: str | Path) -> tuple[dict[str, Any],
                                                                            ZooSettings]:
    """The section without its zoo-wide keys, and those keys checked."""
    where = f"{config_path} [tool.breakscan]"
    expected, flaky = section.get("expected"), section.get("flaky", [])
    if expected is not None and (not isinstance(expected, str) or not expected):
        raise UsageError(f"{where}: 'expected' must be a file name, not {expected!r}")
    if not isinstance(flaky, list) or not all(isinstance(t, str) for t in flaky):
        raise UsageError(f"{where}: 'flaky' must be a list of targets, not {flaky!r}")
    listed = _listed_once(section.get("targets", []), config_path)
    unknown = [t for t in flaky if t not in listed]
    if unknown:
        raise UsageError(f"{where}: 'flaky' names target(s) it does not list: "
                         f"{', '.join(unknown)}")
    rest = {k: v for k, v in section.items() if k not in ZOO_KEYS}
    base = Path(config_path).resolve().parent
    return rest, ZooSettings(expected=base / expected if expected else None,
                             flaky=frozenset(flaky))


def _listed_once(entries: list[Any], config_path: str | Path) -> set[Any]:
    """The targets the entries name, each named once: a second entry for a target (other
    input shapes, say) would be a second run under the same name, which ``merge`` (and the
    cache, the baseline, the expected counts) cannot tell apart, so it is refused."""
    first: dict[str, int] = {}
    for number, entry in enumerate(entries, 1):
        target = entry.get("target") if isinstance(entry, dict) else None
        if not isinstance(target, str):
            continue  # config_targets says what is wrong with it
        if target in first:
            raise UsageError(f"{config_path} lists target {target} twice (targets "
                             f"#{first[target]} and #{number}): one entry per target")
        first[target] = number
    return set(first)


@dataclass(frozen=True)
class CheckTarget:
    """One [[tool.breakscan.targets]] entry, resolved: what to scan and how to gate it."""

    target: str
    options: ScanOptions
    gate: GateOptions
    limits: Limits

    def __str__(self) -> str:  # a readable pytest id
        return self.target


def config_targets(section: dict[str, Any], config_path: str | Path,
                   defaults: dict[str, Any] | None = None, *,
                   loadable: bool = True) -> list[CheckTarget | ModelRun]:
    """Each target of the section with its options, gate and limits (the section's defaults
    under its own keys), or, for an entry that is wrong or a target that cannot load, the
    failed run (exit 2) saying why. ``loadable=False`` (``merge``: the shards scanned them)
    does not read the targets' files."""
    if defaults is None:
        defaults = {k: v for k, v in section.items() if k != "targets"}
    out: list[CheckTarget | ModelRun] = []
    for number, entry in enumerate(section["targets"], 1):
        where = f"{config_path} target #{number}"
        target = entry.get("target") if isinstance(entry, dict) else None
        if not target or not isinstance(target, str):
            why = "has no 'target'" if not target else \
                f"'target' must be a string like \"model.py:Net\", not {target!r}"
            out.append(ModelRun(target=f"target #{number}", result=None,
                                error=f"{where} {why}", exit_code=2))
            continue
        try:
            options, gate, limits = from_config({**defaults, **entry}, target=target,
                                                where=where)
            if loadable:  # no process for a target that cannot load
                options.check(target, gate)
                check_loadable(parse_target(target))
        except UsageError as exc:
            out.append(ModelRun(target=target, result=None, error=str(exc), exit_code=2))
            continue
        except (TypeError, ValueError, AttributeError) as exc:  # a value of the wrong type
            out.append(ModelRun(target=target, result=None, exit_code=2,
                                error=f"{where}: a value of the wrong type ({exc})"))
            continue
        out.append(CheckTarget(target, options, gate, limits))
    return out


def check_target(entry: CheckTarget, *, on_stage: Callable[[str], None] | None = None,
                 cancel: Cancel | None = None, cache: ResultCache | None = None) -> ModelRun:
    """One target scanned (in its own child process) and gated, as ``breakscan check`` does:
    what a model-zoo test module calls once per target (see the README)."""
    return run_model(entry.target, entry.options, entry.gate, entry.limits, on_stage=on_stage,
                     cancel=cancel, cache=cache)


def run_config(section: dict[str, Any], config_path: str | Path,
               overrides: dict[str, Any] | None = None,
               on_stage: Callable[[str], None] | None = None, *, jobs: int = 1,
               cache: ResultCache | None = None,
               results: ResultsLog | None = None) -> list[ModelRun]:
    """Every target of a [tool.breakscan] section, each scanned and gated on its own, up to
    ``jobs`` at a time (each in its own child process, with ``cores // jobs`` CPU threads);
    the runs come back in the section's order.

    ``overrides`` (e.g. the CLI's --timeout) replace the section's defaults, not a target's own
    values. ``on_stage("check 3/7: model.py:Net · explain")`` follows the scans live. ``cache``
    answers unchanged targets without scanning them. ``results`` (``--results``) gets each
    target as it finishes, and answers those it already holds (``--resume``). Ctrl-C or SIGTERM
    stops every running scan (each reports what it finished) and starts no other.
    """
    defaults = {k: v for k, v in section.items() if k != "targets"}
    defaults.update({k: v for k, v in (overrides or {}).items() if v is not None})
    unknown = set(defaults) - DEFAULT_KEYS
    if unknown:
        raise UsageError(f"{config_path} [tool.breakscan]: unknown key(s) "
                         f"{', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(DEFAULT_KEYS))}")
    check_types(defaults, f"{config_path} [tool.breakscan]")  # named once, not per target
    total = len(section["targets"])
    threads = max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None
    runs: list[ModelRun | None] = [None] * total
    work: list[tuple[int, Callable[[Cancel], ModelRun]]] = []
    entries = config_targets(section, config_path, defaults)
    for index, entry in enumerate(entries):
        if isinstance(entry, ModelRun):
            runs[index] = entry
            continue
        kept = results.reusable(entry.target, entry.options) if results is not None else None
        if kept is not None:  # gated anew: the verdict in the file is not believed
            runs[index] = gated(kept, entry.gate)
            continue
        if threads and "OMP_NUM_THREADS" not in os.environ:
            entry = replace(entry, limits=replace(entry.limits, threads=threads))
        label = f"check {index + 1}/{total}: {entry.target}"
        stage = (lambda name, label=label: on_stage(f"{label} · {name}")) if on_stage else None

        def scan_one(cancel: Cancel, entry: CheckTarget = entry, stage: Any = stage) -> ModelRun:
            started = time.perf_counter()
            run = check_target(entry, on_stage=stage, cancel=cancel, cache=cache)
            run.seconds = round(time.perf_counter() - started, 3)
            return run

        work.append((index, scan_one))
    record = _start_log(results, entries, runs) if results is not None else None
    for index, run in _run_all(work, jobs, record):
        runs[index] = run
    # Targets a Ctrl-C kept from starting are left out, as a serial check leaves them.
    return [run for run in runs if run is not None]


def _start_log(results: ResultsLog, entries: list[CheckTarget | ModelRun],
               runs: list[ModelRun | None]) -> Callable[[int, ModelRun], None]:
    """The result file started with what it answered and the config's refusals; the callback
    that appends each scan as it finishes."""
    results.start([r.target for i, r in enumerate(runs)
                   if r is not None and isinstance(entries[i], CheckTarget)])
    for index, run in enumerate(runs):
        if run is not None and isinstance(entries[index], ModelRun):
            results.record(run.target, None, run)

    def record(index: int, run: ModelRun) -> None:
        entry = entries[index]
        results.record(run.target, entry.options if isinstance(entry, CheckTarget) else None,
                       run)
    return record


def _run_all(work: list[tuple[int, Callable[[Cancel], ModelRun]]], jobs: int,
             on_done: Callable[[int, ModelRun], None] | None = None) -> list[tuple[int, ModelRun]]:
    """Run the scans, ``jobs`` at a time, ``on_done`` (in this thread) as each finishes; on
    Ctrl-C or SIGTERM, stop the running ones (they report what finished) and start no more."""
    cancel = Cancel()
    done: list[tuple[int, ModelRun]] = []
    finish = on_done or (lambda index, run: None)
    if jobs <= 1:
        for index, scan_one in work:
            done.append((index, scan_one(cancel)))
            finish(*done[-1])
            if done[-1][1].interrupted:
                break  # Ctrl-C / SIGTERM: report what finished, scan no further target
        return done
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="breakscan-check") as pool:
        futures = {pool.submit(scan_one, cancel): index for index, scan_one in work}
        try:
            pending = set(futures)
            while pending:  # short waits: Ctrl-C reaches this (the main) thread between them
                finished, pending = wait(pending, timeout=0.2)
                for future in finished:
                    done.append((futures[future], future.result()))
                    finish(*done[-1])
        except (KeyboardInterrupt, Interrupted) as exc:
            cancel.signum = interrupt_signal(exc)
            cancel.set()
            for future in futures:
                future.cancel()  # not started yet: never started
            reported = {index for index, _ in done}
            done += [(futures[f], f.result()) for f in futures  # they return once stopped
                     if not f.cancelled() and futures[f] not in reported]
    return sorted(done, key=lambda item: item[0])


def refuse_unlike_outputs(written: list) -> None:
    """An existing ``--write-durations`` file that is not a durations file, or an
    ``--update-expected`` file that is not an expected-counts file, is refused before any
    scan: a user's JSON is never rewritten (its other keys would be lost)."""
    from .expected import read_expected
    from .shard import read_durations

    for flag, path in written:
        if path is None or not os.path.lexists(path) or (
                os.path.isfile(path) and os.path.getsize(path) == 0):
            continue
        try:
            if flag == "--write-durations":
                read_durations(path)
            elif flag == "--expected":
                read_expected(path)
        except UsageError as exc:
            raise UsageError(f"refusing to rewrite {flag} {path}: {exc}") from None
