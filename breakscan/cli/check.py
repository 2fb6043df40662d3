"""``breakscan check``: every target of ``[tool.breakscan]``, scanned in parallel and gated.

Reads the section through :mod:`breakscan.check`, reuses unchanged targets' stored results
(:class:`~breakscan.cache.ResultCache`) and writes one report and one baseline for all of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ..errors import BreakscanError
from ..options import DEFAULT_TIMEOUT_S
from . import flags
from .application import app
from .exits import fail, fail_run
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
    quiet: bool = flags.quiet("Only the summary lines per model."),
    debug: bool = flags.debug(),
) -> None:
    """Scan and gate every target listed in [tool.breakscan] (pyproject.toml), in parallel, and
    reuse the stored result of every target that has not changed."""
    from ..cache import ResultCache
    from ..check import load_config, run_config
    from ..result import overall_exit_code

    from ..files import refuse_over_sources

    try:
        check_output(output, output_format)
        section = load_config(config)
        listed = section.get("targets")
        targets = [t.get("target") for t in (listed if isinstance(listed, list) else [])
                   if isinstance(t, dict)]
        refuse_over_sources(outputs(output, html, write_baseline),
                            [str(config), *target_sources(*[t for t in targets
                                                            if isinstance(t, str)])])
        cache = None if no_cache else ResultCache(config.resolve().parent)
        with live_status("check", enabled=not quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            runs = run_config(section, config, overrides={"timeout": timeout},
                              on_stage=on_stage, jobs=jobs, cache=cache)
        refuse_over_sources(outputs(output, html, write_baseline), result_sources(runs))
        if write_baseline is not None:
            save_baseline(write_baseline, [r.result for r in runs
                                           if r.result is not None and r.error is None])
        emit(runs, output_format, output, quiet=quiet, verbose=False, single=False)
        if html is not None:
            write_html(runs, html)
    except BreakscanError as exc:
        fail(exc, debug)
    stopped = next((r for r in runs if r.interrupted), None)
    if stopped is not None:
        fail_run(stopped, False)
    code = overall_exit_code(runs)
    if code:
        raise typer.Exit(code)
