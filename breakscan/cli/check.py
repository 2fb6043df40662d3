"""``breakscan check``: every target of ``[tool.breakscan]``, scanned in parallel and gated.

Reads the section through :mod:`breakscan.runs.check`, reuses unchanged targets' stored results
(:class:`~breakscan.runs.cache.ResultCache`) and writes one report and one baseline for all of them.
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
from .output import (check_output, live_status, outputs, result_sources, save_baseline,
                     target_sources, write_reports)


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
    from ..config import load_config
    from ..files import refuse_over_sources
    from ..model.result import overall_exit_code
    from ..runs.cache import ResultCache
    from ..runs.check import run_config, zoo_settings
    from ..runs.expected import gate_zoo_runs

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
                                  argv=sys.argv[1:],
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
    from ..runs.results import ResultsLog

    return ResultsLog(results, resume=resume, shard=shard) if results is not None else None


def _refuse_collisions(written: list, config: Path, durations: Optional[Path],
                       expected: Optional[Path], resumed: Optional[Path],
                       targets: list[str]) -> None:
    """Before anything is written: no output onto another output, onto a file this run reads
    (the config, --durations, --expected, the resumed --results) or onto a target's source."""
    from ..files import refuse_collisions, refuse_over_sources
    from ..runs.check import refuse_unlike_outputs

    refuse_collisions(written, [("--config", config), ("--durations", durations),
                                ("--expected", expected), ("--results", resumed)])
    refuse_over_sources(written, [str(config), *target_sources(*targets)])
    refuse_unlike_outputs(written)



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



def _shard_of(section: dict, targets: list, shard: str,
              durations: Optional[Path]) -> tuple[dict, list]:
    """The config section with only this shard's targets (``breakscan/shard.py``)."""
    from ..runs.shard import parse_shard, read_durations, split

    index, total = parse_shard(shard)
    mine = set(split([t for t in targets if isinstance(t, str)], index, total,
                     read_durations(durations) if durations is not None else None))
    kept = [t for t in section["targets"] if isinstance(t, dict) and t.get("target") in mine]
    return dict(section, targets=kept), [t.get("target") for t in kept]
