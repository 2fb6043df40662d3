"""``breakscan trace FOLDER``: the report and gate of a job run with TORCH_TRACE, nothing run.

Reads the trace files through :func:`breakscan.trace.ranks.trace_report` and gates and reports
the result as ``scan`` does its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import BreakscanError
from . import flags
from .application import app
from .exits import end_one, fail
from .flags import OutputFormat
from .output import check_output, report_one


@app.command()
def trace(
    folder: Path = typer.Argument(..., help="The TORCH_TRACE folder (one file per rank), or one "
                                 "trace file."),
    max_breaks: Optional[int] = flags.max_breaks(),
    max_graphs: Optional[int] = flags.max_graphs(),
    max_recompiles: Optional[int] = flags.max_recompiles(
        "Gate: fail above this many recompiles, all ranks together."),
    fail_on: Optional[str] = flags.fail_on(),
    fullgraph: bool = flags.fullgraph(),
    baseline: Optional[Path] = flags.baseline(),
    write_baseline: Optional[Path] = flags.write_baseline("Record this trace as the baseline."),
    source_root: Optional[List[Path]] = typer.Option(
        None, "--source-root", help="Show source only for Python files under this folder "
        "(repeatable; default: the working directory): a trace names files of someone else's "
        "job."),
    output_format: OutputFormat = flags.output_format(),
    output: Optional[Path] = flags.output(),
    html: Optional[Path] = flags.html(),
    quiet: bool = flags.quiet(),
    debug: bool = flags.debug(),
) -> None:
    """Report the breaks, graphs and recompiles of a job run with TORCH_TRACE=FOLDER (e.g.
    under torchrun): per rank and across ranks, what differs between ranks first.

    Nothing is run: the trace files are read (streamed). Every reporter and gate option works.
    """
    from ..config import gate_options
    from ..model.result import ModelRun
    from ..runs.runner import gated
    from ..trace.ranks import trace_report

    try:
        check_output(output, output_format)
        result = trace_report(folder, [str(r) for r in source_root] if source_root else None)
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, fail_on=fail_on, fullgraph=fullgraph,
                            baseline=str(baseline) if baseline else None, target=result.target)
        run = gated(ModelRun(target=result.target, result=result), gate)
        report_one(run, output_format, output, html, write_baseline, quiet=quiet,
                   verbose=False)
    except BreakscanError as exc:
        fail(exc, debug)
    end_one(run, debug)
