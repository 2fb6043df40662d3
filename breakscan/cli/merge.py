"""``breakscan merge``: the shards' ``check --results`` files as one run of the whole zoo.

Reads each file as data (:mod:`breakscan.shard_results`), refuses a target in two files or a
listed target in none, then reports and gates exactly as ``breakscan check`` does on one
machine: the same formats, the same exit codes, the same expected-counts gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import BreakscanError
from . import flags
from .application import app
from .check import gate_zoo_runs, write_reports
from .exits import fail, say
from .flags import OutputFormat
from .output import check_output, outputs, result_sources


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
    from ..check import load_config, zoo_settings
    from ..errors import UsageError
    from ..files import refuse_over_sources
    from ..result import overall_exit_code
    from ..shard_results import merge_results

    try:
        check_output(output, output_format)
        section, zoo = zoo_settings(load_config(config), config)
        expected = expected or zoo.expected
        if update_expected and expected is None:
            raise UsageError("--update-expected needs --expected FILE (or 'expected' in "
                             "[tool.breakscan])")
        written = outputs(output, html) + [("--expected", expected if update_expected
                                            else None), ("--write-durations", write_durations)]
        refuse_over_sources(written, [str(config), *map(str, files)])
        listed = [t.get("target") for t in section["targets"]]  # tables (load_config)
        runs, notes = merge_results(files, [t for t in listed if isinstance(t, str)])
        refuse_over_sources(written, result_sources(runs))
        zoo_lines = gate_zoo_runs(runs, zoo.flaky, expected, update=update_expected,
                                  allow_improvements=allow_improvements, complete=True)
        write_reports(runs, output_format, output, html=html, durations=write_durations,
                      quiet=quiet)
    except BreakscanError as exc:
        fail(exc, debug)
    for line in [f"breakscan merge: {n}" for n in notes] + zoo_lines:
        say(line)
    code = overall_exit_code(runs)  # the expected counts' verdict is in each run's code
    if code:
        raise typer.Exit(code)
