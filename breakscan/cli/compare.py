"""``breakscan compare A B``: two targets scanned and timed the same way, side by side.

Runs both through :func:`breakscan.runs.compare.compare_runs` and writes the comparison
as the terminal table, JSON, or an HTML page with both reports. A model that raised in the
outputs child ends the command after the report, as a failed scan does: its one line (naming
the model's line) and exit 3.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import BreakscanError, UsageError
from . import flags
from .application import app
from .exits import fail, fail_run
from .flags import OutputFormat
from .output import check_output, make_console, outputs, result_sources, target_sources, write_html


@app.command()
def compare(
    target_a: str = typer.Argument(..., metavar="A", help="The model, e.g. model.py:Net"),
    target_b: str = typer.Argument(..., metavar="B", help="Its twin, e.g. model.py:NetFixed"),
    input_shape: Optional[List[str]] = flags.input_shape(None),
    dtype: str = flags.dtype(None),
    device: str = flags.device(None),
    inputs: Optional[str] = flags.inputs("FILE.py:make_inputs, for both."),
    init_args: Optional[str] = flags.init_args("JSON keyword arguments, for both."),
    vary_batch: Optional[str] = flags.vary_batch("Also count recompiles over these batch "
                                                 "sizes."),
    dynamic: Optional[str] = flags.dynamic("Your torch.compile(dynamic=...), for both."),
    compile_option: Optional[List[str]] = flags.compile_option(
        "Your torch.compile(options={...}), for both (repeatable)."),
    backend: str = flags.backend("torch.compile backend for the timings."),
    mode: Optional[str] = flags.mode(None),
    threads: int = flags.threads(None),
    max_run_time: float = flags.max_run_time("Seconds each timed variant may run."),
    kernels: bool = flags.kernels(),
    timeout: float = flags.timeout("Per scan, seconds."),
    output_format: OutputFormat = flags.output_format("terminal or json"),
    output: Optional[Path] = flags.output(help=None),
    html: Optional[Path] = flags.html("Also write an HTML page: A vs B and both reports."),
) -> None:
    """Scan and time two targets the same way, side by side, and compare their outputs."""
    from ..files import refuse_over_sources
    from ..options import Limits, ScanOptions, TimingOptions
    from ..report import terminal
    from ..runs.compare import compare_runs

    try:
        check_output(output, output_format)
        sources = target_sources(target_a, target_b, *([inputs] if inputs else []))
        refuse_over_sources(outputs(output, html), sources)
        if output_format not in (OutputFormat.terminal, OutputFormat.json):
            raise UsageError("compare writes --format terminal or json")
        options = ScanOptions(input_shapes=input_shape or (), dtype=dtype, device=device,
                              inputs=inputs, init_args=init_args, vary_batch=vary_batch,
                              dynamic=dynamic, compile_options=compile_option or (),
                              kernels=kernels,
                              timing=TimingOptions(backend=backend, mode=mode, threads=threads,
                                                   max_run_time=max_run_time))
        options.check(target_a)
        options.check(target_b)
        comparison, outputs_run = compare_runs(target_a, target_b, options,
                                               Limits(timeout=timeout))
        for run in (comparison.a, comparison.b):
            if run.error is not None and (run.result is None or run.interrupted):
                fail_run(run, False)
        if output_format is OutputFormat.json:
            _write_json(comparison, output, outputs(output, html), sources)
        if output_format is OutputFormat.terminal or output is not None:
            terminal.render_comparison(comparison, make_console())
        if html is not None:
            write_html([comparison.a, comparison.b], html, comparison)
    except BreakscanError as exc:
        fail(exc, False)
    if outputs_run is not None and outputs_run.error is not None:
        fail_run(outputs_run, False)  # a model raised comparing outputs: its line, exit 3
    code = max(comparison.a.exit_code, comparison.b.exit_code)
    if code:
        raise typer.Exit(code)


def _write_json(comparison, output: Optional[Path], written: list, sources: list[str]) -> None:
    """--format json: the comparison on stdout, or in -o FILE (never over a source file)."""
    import json

    from ..files import refuse_over_sources, write_atomic

    text = json.dumps(comparison.to_dict(), indent=2, default=str) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    refuse_over_sources(written, sources + result_sources([comparison.a, comparison.b]))
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
