"""``breakscan run SCRIPT|-m MODULE ARGS``: a whole program, run unchanged, reported.

Maps the flags onto :class:`~breakscan.options.ProgramOptions`, the gate and the limits, and
runs the program through :func:`breakscan.runs.runner.run_program`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import EXIT_MODEL_FAILED, BreakscanError
from . import flags
from .application import app
from .exits import end_one, fail, fail_run
from .flags import OutputFormat
from .output import check_output, live_status, outputs, report_one


@app.command(context_settings={"allow_interspersed_args": False,
                                "ignore_unknown_options": True})
def run(
    program: Optional[List[str]] = typer.Argument(
        None, metavar="SCRIPT [ARGS]...", help="The program and its own arguments, as you "
        "would give them to python (put -- before SCRIPT if it starts with a dash)."),
    module: Optional[str] = typer.Option(None, "-m", "--module", help="Run a module as "
                                         "python -m MODULE does; the arguments are its own."),
    capture_only: bool = typer.Option(False, "--capture-only", help="Swap every backend for "
                                      "'eager': a fast break and recompile scan (no inductor "
                                      "compile; the report says so)."),
    kernels: bool = flags.kernels(),
    max_breaks: Optional[int] = flags.max_breaks(),
    max_graphs: Optional[int] = flags.max_graphs(),
    max_recompiles: Optional[int] = flags.max_recompiles(
        "Gate: fail above this many recompiles over the run."),
    max_graph_calls: Optional[int] = flags.max_graph_calls(
        "Gate: fail when a region makes more than this many compiled-graph calls per call."),
    max_kernels: Optional[int] = flags.max_kernels(
        "Gate: fail when a region launches more than this many kernels per call (each graph's "
        "kernels times its calls; implies --kernels)."),
    fail_on: Optional[str] = flags.fail_on(),
    fullgraph: bool = flags.fullgraph(),
    baseline: Optional[Path] = flags.baseline(),
    write_baseline: Optional[Path] = flags.write_baseline("Record this run as the baseline."),
    output_format: OutputFormat = flags.output_format(),
    output: Optional[Path] = flags.output(),
    html: Optional[Path] = flags.html(),
    timeout: float = flags.timeout("Stop the program after this many seconds (default 0: no "
                                   "limit); exit 3 with the report of what it compiled so far.",
                                   default=0),
    memory_limit: Optional[int] = flags.memory_limit("Memory limit of the program in MB."),
    quiet: bool = flags.quiet("Keep the program's output in the report (not the terminal) and "
                              "print only the summary lines."),
    verbose: bool = flags.verbose("Also show Dynamo's own logs (and, with --quiet, what the "
                                  "program printed)."),
    debug: bool = flags.debug(),
) -> None:
    """Run a whole program (python SCRIPT ARGS / -m MODULE ARGS) unchanged and report every
    graph break, recompile and compiled region torch.compile met in it.

    Everything after SCRIPT (or after -m MODULE) belongs to the program. It keeps its own
    sys.argv, working directory, environment, stdin and stdout; its exit status is reported,
    and a program that fails or is stopped ends with exit 3 and the report of what it compiled.
    """
    from ..config import gate_options
    from ..files import refuse_over_sources
    from ..options import Limits, ProgramOptions
    from ..runs.runner import run_program

    try:
        words = list(program or ())
        script = None if module is not None else (words.pop(0) if words else None)
        options = ProgramOptions(script=script, module=module, args=tuple(words),
                                 capture_only=capture_only, quiet=quiet, verbose=verbose,
                                 kernels=kernels)
        options.check()
        check_output(output, output_format)
        refuse_over_sources(outputs(output, html, write_baseline), [script or ""])
        label = " ".join(options.command)
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, max_graph_calls=max_graph_calls,
                            max_kernels=max_kernels, fail_on=fail_on, fullgraph=fullgraph,
                            baseline=str(baseline) if baseline else None, target=label)
        if gate.needs_kernels:  # the gate reads the kernels: record them
            options = replace(options, kernels=True)
        limits = Limits(timeout=timeout, memory_limit_mb=memory_limit)
        with live_status(label, enabled=quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            outcome = run_program(options, gate, limits, on_stage=on_stage,
                                  stdout_to_stderr=output_format is not OutputFormat.terminal
                                  and output is None)
        if outcome.error is not None and outcome.result is None and \
                outcome.exit_code != EXIT_MODEL_FAILED and not outcome.interrupted:
            fail_run(outcome, debug)  # bad input: nothing ran, nothing to report
        report_one(outcome, output_format, output, html, write_baseline, quiet=quiet,
                   verbose=verbose)
    except BreakscanError as exc:
        fail(exc, debug)
    end_one(outcome, debug)
