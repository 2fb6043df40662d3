"""``breakscan run``'s scan: the program run unchanged in this (isolated) process while every
compile is recorded (``capture.program_capture``), then analysed like a model's scan: breaks,
graphs, recompiles with their failing guards, and each compiled region's counts.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from ..analysis.analyse import analyse
from ..analysis.impact import apply_regions
from ..analysis.kernels import region_kernels
from ..analysis.recompiles import link_shape_branches, program_recompiles
from ..dynamo.inductor import available
from ..dynamo.session import recompile_limit, settings_in_force
from ..errors import UsageError
from ..model.jobs import ProgramRequest
from ..model.raw import RawProgram
from ..model.records import StaticFinding
from ..model.result import ProgramReport, ScanResult
from ..options import ProgramOptions
from .capture import program_capture
from .kernels import ProgramKernels, apply_kernels
from .measure import OnProgress
from .scan import OnStage, no_progress


def run_program(options: ProgramOptions, *, on_stage: OnStage | None = None) -> ScanResult:
    """``breakscan run``: run the program unchanged, in this process, while recording
    everything torch.compile does, then analyse it like a scan (breaks, graphs, recompiles) with
    its regions' counts. A program that fails still gets its report: ``result.program`` says
    how it ended (``exit_code``, ``error``).

    ``on_stage`` hears the stage; in an isolated child, a timeout or Ctrl-C asks for the report
    so far (``child.when_stopped``), so a stopped program keeps what it compiled.
    """
    from ..process.child import when_stopped
    from .program import run_program as execute

    (on_stage or no_progress)("program", None)
    missing = available() if options.kernels else None
    kernels = ProgramKernels() if options.kernels and missing is None else None
    with program_capture(capture_only=options.capture_only, quiet=options.quiet,
                         verbose=options.verbose or bool(os.environ.get("TORCH_LOGS")),
                         inspect=kernels) as live:
        # Built when a timeout or Ctrl-C stops the program, maybe inside a compiled region:
        # breakscan's own code must not be traced there.
        when_stopped(torch.compiler.disable(lambda: program_result(options, live.snapshot(),
                                                                   None, kernels)))
        try:
            outcome = execute(options)
        finally:
            when_stopped(None)
    result = program_result(options, live.snapshot(), outcome, kernels)
    if missing is not None:
        result.notes.append(f"--kernels: not available ({missing})")
    return result


def program_result(options: ProgramOptions, raw: RawProgram, outcome: Any | None,
                   kernels: ProgramKernels | None = None) -> ScanResult:
    """The report of a program run (``outcome`` None: it has not ended); ``kernels``: what
    ``--kernels`` recorded of each graph's compile."""
    in_force = settings_in_force()  # the program's own settings, as it left them
    found = analyse(raw.capture, in_force)
    result = ScanResult.start(
        " ".join(options.command), found, torch_version=str(torch.__version__),
        captured_call="every call the program made", dynamo_settings=in_force,
        capture_seconds=round(raw.capture.seconds, 4), notes=raw.capture.notes,
        model_output=raw.capture.model_output, dynamo_log=raw.capture.dynamo_log)
    regions = apply_regions(result, raw.regions)
    result.recompiles = program_recompiles(raw.capture.recompile_logs, raw.recompile_stacks,
                                           raw.capture.metrics, len(result.graphs),
                                           recompile_limit())
    result.summary.recompile_count = len(result.recompiles.recompiles)
    link_shape_branches(result.recompiles, _shape_findings(result.recompiles.recompiles))
    branches = sorted({loc for r in result.recompiles.recompiles for loc in r.guard_lines
                       if any("size" in reason for reason in r.reasons)})  # a shape's guard
    if branches:
        result.recompiles.suggestion = (result.recompiles.suggestion or "") + (
            f" The failing guard comes from {', '.join(branches)}: a Python branch on a size "
            "needs a graph per path, which dynamic=True does not remove.")
    if raw.graph_calls_outside:
        result.notes.append(f"{raw.graph_calls_outside} compiled-graph calls ran outside any "
                            "region breakscan saw being compiled")
    if options.capture_only:
        result.notes.append("--capture-only: every torch.compile backend was swapped for "
                            "\"eager\" (graphs, breaks and recompiles are Dynamo's own; no "
                            "inductor code ran)")
    result.program = ProgramReport(
        command=options.command, exit_code=outcome.exit_code if outcome else None,
        capture_only=options.capture_only,
        seconds=round(outcome.seconds if outcome else raw.capture.seconds, 3),
        regions=regions, error=outcome.error if outcome else None)
    if kernels is not None:
        apply_kernels(result, kernels.found(len(result.graphs), result.notes))
        region_kernels(result, [r.graph_counts for r in raw.regions])
    return result


def _shape_findings(recompiles: list[Any]) -> list[StaticFinding]:
    """The lint's findings in the user files that recompiled, for the shape branches that set
    their guards (Dynamo's guard text often names no line)."""
    from ..frames import is_user_file
    from ..lint.run import lint_file

    found: list[StaticFinding] = []
    for file in sorted({r.file for r in recompiles if is_user_file(r.file)}):
        try:
            found += lint_file(file)
        except UsageError:
            pass
    return found


def program_job(request: ProgramRequest, on_stage: OnStage,
                on_progress: OnProgress) -> ScanResult:
    """The isolated child's program run. A program that failed is saved as the partial report,
    then :class:`ModelError` (exit 3) says how."""
    from ..errors import ModelError

    result = run_program(request.program, on_stage=on_stage)
    ended = result.program
    if ended is not None and ended.exit_code:
        on_stage("program", result)
        how = f"raised {ended.error}" if ended.error else f"exited with status {ended.exit_code}"
        raise ModelError(f"the program {how}")
    return result
