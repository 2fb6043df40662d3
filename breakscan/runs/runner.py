"""One target from start to verdict: its scan in a child process, then its gate.

What the CLI's ``scan``, ``check`` and ``compare`` run per target, and ``run`` per program. The scan itself is
:func:`breakscan.pipeline.scan.scan_job`, run by :mod:`breakscan.process.isolate`; an unfinished scan keeps
its partial result and is not gated.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import EXIT_GATE_FAILED, EXIT_MODEL_FAILED
from ..model.jobs import ProgramRequest, ScanRequest
from ..model.result import ModelRun
from ..options import GateOptions, Limits, ProgramOptions, ScanOptions
from ..process.jobs import PROGRAM_JOB, SCAN_JOB
from .gate import evaluate


def scan_isolated(target: str, options: ScanOptions, limits: Limits = Limits(), *,
                  on_stage: Callable[[str], None] | None = None,
                  cancel: Any | None = None) -> ModelRun:
    """Scan ``target`` in a child process (see :func:`breakscan.process.isolate.run_isolated`)."""
    from ..process.isolate import run_isolated

    return run_isolated(SCAN_JOB, ScanRequest(target, options),
                        target=target, limits=limits, on_stage=on_stage, cancel=cancel)


def scan_in_process(target: str, options: ScanOptions) -> ModelRun:
    """The same scan in this process, with no time or memory limit (a model that hangs hangs
    the caller): for callers that control the model, and for tests of what follows the scan.
    What the model's code raised in any stage ends the run as in a child (exit 3, its line),
    a KeyboardInterrupt too when no SIGINT came (``errors.sigint_watched``); breakscan's own bug
    and Ctrl-C propagate."""
    from ..errors import (BreakscanError, as_model_error, raised_by_breakscan, raised_interrupt,
                          sigint_watched)
    from ..pipeline.scan import scan

    stage = "start-up"

    def entered(name: str, result: Any = None) -> None:
        nonlocal stage
        stage = name

    with sigint_watched() as sigint:
        try:
            return ModelRun(target=target, result=scan(target, options, on_stage=entered))
        except BreakscanError as exc:
            return ModelRun(target=target, result=None, error=str(exc), exit_code=exc.exit_code)
        except KeyboardInterrupt as exc:
            if sigint.received:
                raise  # Ctrl-C
            error = raised_interrupt(exc, f"during {stage}, the model")
            return ModelRun(target=target, result=None, error=str(error), stage=stage,
                            exit_code=EXIT_MODEL_FAILED)
        except Exception as exc:
            if raised_by_breakscan(exc):
                raise
            return ModelRun(target=target, result=None,
                            error=str(as_model_error(exc, "the model")),
                            exit_code=EXIT_MODEL_FAILED)


def run_model(target: str, options: ScanOptions, gate: GateOptions | None,
              limits: Limits = Limits(), *, on_stage: Callable[[str], None] | None = None,
              isolated: bool = True, cancel: Any | None = None,
              cache: Any | None = None) -> ModelRun:
    """Scan and gate one target; a failed gate becomes the run's exit code.

    ``isolated=False`` scans in this process (:func:`scan_in_process`; ``limits`` unused).
    ``cancel`` (an ``isolate.Cancel``) stops the scan from another thread. ``cache`` (a
    :class:`breakscan.runs.cache.ResultCache`) answers an unchanged target without scanning it
    (``run.cached``) and keeps each finished scan.
    """
    stored = cache.get(target, options) if cache is not None else None
    if stored is not None:
        return gated(ModelRun(target=target, result=stored, cached=True), gate)
    run = scan_isolated(target, options, limits, on_stage=on_stage, cancel=cancel) \
        if isolated else scan_in_process(target, options)
    if cache is not None and run.error is None and run.result is not None:
        cache.put(target, options, run.result)  # before the gate: the gate is asked anew
    return gated(run, gate)


def run_program(options: ProgramOptions, gate: GateOptions | None,
                limits: Limits = Limits(), *,
                on_stage: Callable[[str], None] | None = None,
                stdout_to_stderr: bool = False) -> ModelRun:
    """``breakscan run``: the program in a child process that keeps this terminal's stdin,
    stdout and stderr (files with ``options.quiet``), then the gate. ``stdout_to_stderr``: the
    report goes to stdout, so the program's own output goes to stderr."""
    from ..process.isolate import run_isolated

    run = run_isolated(PROGRAM_JOB, ProgramRequest(options),
                       target=" ".join(options.command), limits=limits, on_stage=on_stage,
                       stdout_to_stderr=stdout_to_stderr,
                       inherit_stdio=not options.quiet)
    return gated(run, gate)


def gated(run: ModelRun, gate: GateOptions | None) -> ModelRun:
    """The gate's verdict on a finished run; a failed gate becomes its exit code (an
    unfinished run is not gated)."""
    if run.error is not None or run.result is None:
        return run
    if run.result.compile_error is not None:
        # torch.compile fails on the model: exit 3 (the model failed), and every gate fails.
        run.result.gate = evaluate(run.result, gate or GateOptions())
        run.exit_code = EXIT_MODEL_FAILED
    elif gate is not None and gate.active:
        run.result.gate = evaluate(run.result, gate)
        if not run.result.gate.passed:
            run.exit_code = EXIT_GATE_FAILED
    return run
