"""``breakscan check``: every target of ``[tool.breakscan]``, scanned in parallel and gated.

Reads the section through :mod:`breakscan.check`, reuses unchanged targets' stored results
(:class:`~breakscan.cache.ResultCache`) and writes one report and one baseline for all of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from ..errors import BreakscanError, UsageError
from ..options import DEFAULT_TIMEOUT_S
from . import flags
from .application import app
from .exits import fail, fail_run, say
from .flags import OutputFormat
from .output import (check_output, emit, live_status, outputs, result_sources, save_baseline,
                     target_sources, write_html)


@app.command()
def check(
    config: Path = typer.Option(Path("pyproject.toml"), help="File with [tool.breakscan]."),
    output_format: OutputFormat = flags.output_format(),
    output: Optional[Path] = flags.output(help=None),
    write_baseline: Optional[Path] = flags.write_baseline(
        "Record every scanned target as the baseline."),
    html: Optional[Path] = flags.html("Also write one HTML page with a row per model."),
    timeout: Optional[float] = flags.timeout(
        "Time limit per model in seconds (default: the config's 'timeout', else "
        f"{DEFAULT_TIMEOUT_S:g}; 0: none).", default=None),
    jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1, help="Scan this many "
                             "targets at a time, each in its own process with cores/jobs CPU "
                             "threads (default: the number of CPUs; 1: one after another)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Scan every target, even one whose "
                                  "files, inputs and settings are unchanged since the result "
                                  "stored in .breakscan_cache/."),
    shard: Optional[str] = typer.Option(
        None, metavar="K/N", help="Scan only shard K of N (1-based) of the targets sorted by "
        "name, as a CI matrix job; env/N reads K from $JOB_COMPLETION_INDEX or "
        "$SLURM_ARRAY_TASK_ID (0-based). A shard with no targets passes and says so."),
    durations: Optional[Path] = typer.Option(
        None, help="JSON {target: seconds} from earlier runs: --shard splits to balance these "
        "times (a target not in it counts as the mean). Every shard must read the same file."),
    write_durations: Optional[Path] = typer.Option(
        None, help="Add this run's seconds per scanned target to this JSON file (never the "
        "--durations file other shards are reading)."),
    results: Optional[Path] = typer.Option(
        None, help="Write each target's result to this file as it finishes (one JSON line "
        "each, flushed): what a shard hands to 'breakscan merge'."),
    resume: bool = typer.Option(
        False, "--resume", help="With --results: keep the targets the file already holds "
        "(made with the same target, options and versions) and scan only the rest."),
    expected: Optional[Path] = flags.expected(),
    update_expected: bool = flags.update_expected(),
    allow_improvements: bool = flags.allow_improvements(),
    quiet: bool = flags.quiet("Only the summary lines per model."),
    debug: bool = flags.debug(),
) -> None:
    """Scan and gate every target listed in [tool.breakscan] (pyproject.toml), in parallel, and
    reuse the stored result of every target that has not changed."""
    from ..cache import ResultCache
    from ..check import load_config, run_config, zoo_settings
    from ..files import refuse_over_sources
    from ..result import overall_exit_code

    log = None
    try:
        check_output(output, output_format)
        section, zoo = zoo_settings(load_config(config), config)
        expected = expected or zoo.expected
        _refuse_flag_mixes(results=results, resume=resume, shard=shard, expected=expected,
                           update_expected=update_expected)
        listed = section["targets"]  # a list of tables (load_config)
        targets = [t.get("target") for t in listed]
        written = outputs(output, html, write_baseline) + [
            ("--results", results), ("--write-durations", write_durations),
            ("--expected", expected if update_expected else None)]
        _refuse_collisions(written, config, durations, expected, results if resume else None,
                           [t for t in targets if isinstance(t, str)])
        if shard is not None:
            section, targets = _shard_of(section, targets, shard, durations)
            if not targets:
                return _nothing_to_scan(shard, len(listed), results)
        cache = None if no_cache else ResultCache(config.resolve().parent)
        log = _results_log(results, resume=resume, shard=shard)
        with live_status("check", enabled=not quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            runs = run_config(section, config, overrides={"timeout": timeout},
                              on_stage=on_stage, jobs=jobs, cache=cache, results=log)
        refuse_over_sources(written, result_sources(runs))
        for line in log.notes if log is not None else []:
            say(f"breakscan check: {line}")
        stopped = next((r for r in runs if r.interrupted), None)
        zoo_lines = gate_zoo_runs(runs, zoo.flaky, expected if stopped is None else None,
                                  update=update_expected, allow_improvements=allow_improvements,
                                  complete=shard is None)
        if write_baseline is not None:
            save_baseline(write_baseline, [r.result for r in runs
                                           if r.result is not None and r.error is None])
        write_reports(runs, output_format, output, html=html, durations=write_durations,
                      quiet=quiet)
        if log is not None and log.failed:
            raise UsageError(log.failed)
    except BreakscanError as exc:
        fail(exc, debug)
    finally:
        if log is not None:
            log.close()
    if stopped is not None:
        fail_run(stopped, False)
    for line in zoo_lines:
        say(line)
    code = overall_exit_code(runs)  # the expected counts' verdict is in each run's code
    if code:
        raise typer.Exit(code)


def _results_log(results: Optional[Path], *, resume: bool, shard: Optional[str]):
    """The ``--results`` file opened (checked, not yet written), or None."""
    from ..shard_results import ResultsLog

    return ResultsLog(results, resume=resume, shard=shard) if results is not None else None


def _refuse_collisions(written: list, config: Path, durations: Optional[Path],
                       expected: Optional[Path], resumed: Optional[Path],
                       targets: list[str]) -> None:
    """Before anything is written: no output onto another output, onto a file this run reads
    (the config, --durations, --expected, the resumed --results) or onto a target's source."""
    from ..files import refuse_collisions, refuse_over_sources

    refuse_collisions(written, [("--config", config), ("--durations", durations),
                                ("--expected", expected), ("--results", resumed)])
    refuse_over_sources(written, [str(config), *target_sources(*targets)])
    refuse_unlike_outputs(written)


def refuse_unlike_outputs(written: list) -> None:
    """An existing ``--write-durations`` file that is not a durations file, or an
    ``--update-expected`` file that is not an expected-counts file, is refused before any
    scan: a user's JSON is never rewritten (its other keys would be lost)."""
    from ..expected import read_expected
    from ..shard import read_durations

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


def _nothing_to_scan(shard: str, listed: int, results: Optional[Path]) -> None:
    """A shard with no targets passes, says so, and leaves an empty result file (the merge job
    finds every shard's)."""
    say(f"breakscan check --shard {shard}: no targets in this shard (the config lists "
        f"{listed}); nothing to scan")
    log = _results_log(results, resume=False, shard=shard)
    if log is not None:
        log.start([])
        log.close()


def _refuse_flag_mixes(*, results: Optional[Path], resume: bool, shard: Optional[str],
                       expected: Optional[Path], update_expected: bool) -> None:
    """Flags that cannot work together, refused before anything is scanned."""
    if resume and results is None:
        raise UsageError("--resume needs --results FILE (the file to resume)")
    if update_expected and shard is not None:
        raise UsageError("--update-expected needs every target: run it on the merged shards "
                         "(breakscan merge … --update-expected)")
    if update_expected and expected is None:
        raise UsageError("--update-expected needs --expected FILE (or 'expected' in "
                         "[tool.breakscan])")


def gate_zoo_runs(runs: list, flaky: frozenset, expected: Optional[Path], *, update: bool,
                  allow_improvements: bool, complete: bool) -> list[str]:
    """The config's ``flaky`` targets marked (their failure is reported, it does not fail the
    run), then the runs gated by the expected counts: the lines to print."""
    from ..expected import gate_zoo

    for run in runs:
        run.flaky = run.target in flaky
    if expected is None:
        return []
    return gate_zoo(runs, expected, update=update, allow_improvements=allow_improvements,
                    complete=complete, argv=sys.argv[1:])


def _shard_of(section: dict, targets: list, shard: str,
              durations: Optional[Path]) -> tuple[dict, list]:
    """The config section with only this shard's targets (``breakscan/shard.py``)."""
    from ..shard import parse_shard, read_durations, split

    index, total = parse_shard(shard)
    mine = set(split([t for t in targets if isinstance(t, str)], index, total,
                     read_durations(durations) if durations is not None else None))
    kept = [t for t in section["targets"] if isinstance(t, dict) and t.get("target") in mine]
    return dict(section, targets=kept), [t.get("target") for t in kept]


def write_reports(runs: list, output_format: OutputFormat, output: Optional[Path], *,
                  html: Optional[Path], durations: Optional[Path], quiet: bool) -> None:
    """A zoo's reports (``check``, ``merge``): the format asked, the HTML page, the durations."""
    emit(runs, output_format, output, quiet=quiet, verbose=False, single=False)
    if html is not None:
        write_html(runs, html)
    if durations is not None:
        record_durations(durations, runs)


def record_durations(path: Path, runs: list) -> None:
    """Each scanned target's wall seconds (its process start included: what a shard spends
    on it) added to the durations file; a cached or resumed target keeps the time it had. A
    file that is not a durations file is never rewritten."""
    import json

    from ..files import write_atomic
    from ..shard import read_durations

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
