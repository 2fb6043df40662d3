"""``breakscan merge``: the shards' ``check --results`` files as one run of the whole zoo.

Reads each file as data (:mod:`breakscan.runs.results`), refuses a target in two files or a
listed target in none, then reports and gates exactly as ``breakscan check`` does on one
machine: the same formats, the same exit codes, the same expected-counts gate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import BreakscanError
from . import flags
from .application import app
from .exits import fail, say
from .flags import OutputFormat
from .output import check_output, outputs, target_sources, write_reports


@app.command()
def merge(
    files: List[Path] = typer.Argument(..., metavar="RESULTS...",
                                       help="Every shard's 'check --results' file."),
    config: Path = typer.Option(Path("pyproject.toml"), help="File with [tool.breakscan]: "
                                "the targets every shard was given."),
    output_format: OutputFormat = flags.output_format(),
    output: Optional[Path] = flags.output(help=None),
    html: Optional[Path] = flags.html("Also write one HTML page with a row per model."),
    expected: Optional[Path] = flags.expected(),
    update_expected: bool = flags.update_expected(),
    allow_improvements: bool = flags.allow_improvements(),
    write_durations: Optional[Path] = typer.Option(
        None, help="Add every shard's seconds per scanned target to this JSON file: the "
        "--durations of the next sharded run."),
    quiet: bool = flags.quiet("Only the summary lines per model."),
    debug: bool = flags.debug(),
) -> None:
    """Merge the shards of a sharded 'breakscan check' into one report and gate it: the same
    verdict as one machine checking every target."""
    from ..config import load_config
    from ..errors import UsageError
    from ..model.result import overall_exit_code
    from ..runs.check import config_targets, zoo_settings
    from ..runs.expected import gate_zoo_runs
    from ..runs.results import gated_again, merge_results

    try:
        check_output(output, output_format)
        section, zoo = zoo_settings(load_config(config), config)
        expected = expected or zoo.expected
        if update_expected and expected is None:
            raise UsageError("--update-expected needs --expected FILE (or 'expected' in "
                             "[tool.breakscan])")
        written = outputs(output, html) + [("--expected", expected if update_expected
                                            else None), ("--write-durations", write_durations)]
        _refuse_collisions(written, config, expected, files, section)
        listed = [t.get("target") for t in section["targets"]]  # tables (load_config)
        entries, notes = merge_results(files, [t for t in listed if isinstance(t, str)])
        runs = gated_again(entries, config_targets(section, config, loadable=False))
        zoo_lines = gate_zoo_runs(runs, zoo.flaky, expected, update=update_expected,
                                  allow_improvements=allow_improvements, complete=True,
                                  argv=sys.argv[1:])
        write_reports(runs, output_format, output, html=html, durations=write_durations,
                      quiet=quiet)
    except BreakscanError as exc:
        fail(exc, debug)
    for line in [f"breakscan merge: {n}" for n in notes] + zoo_lines:
        say(line)
    code = overall_exit_code(runs)  # the expected counts' verdict is in each run's code
    if code:
        raise typer.Exit(code)


def _refuse_collisions(written: list, config: Path, expected: Optional[Path],
                       files: List[Path], section: dict) -> None:
    """No output onto another, onto a file the merge reads (the config, --expected, a shard's
    results) or onto a target's source. The files the results name are not asked: they are
    another machine's, never read here."""
    from ..files import refuse_collisions, refuse_over_sources
    from ..runs.check import refuse_unlike_outputs

    refuse_collisions(written, [("--config", config), ("--expected", expected),
                                *(("a results file", f) for f in files)])
    targets = [t.get("target") for t in section["targets"] if isinstance(t.get("target"), str)]
    refuse_over_sources(written, [str(config), *target_sources(*targets)])
    refuse_unlike_outputs(written)
