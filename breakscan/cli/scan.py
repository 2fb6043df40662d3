"""``breakscan scan`` (also ``breakscan TARGET``): one model, scanned in a child process.

Maps the flags onto :class:`~breakscan.options.ScanOptions`, the gate and the limits, runs the
scan through :func:`breakscan.runs.runner.run_model`, and with ``--fix`` verifies (and with
``--write`` applies) every proposed fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import EXIT_MODEL_FAILED, BreakscanError, UsageError
from . import flags
from .application import app
from .exits import end_one, fail, fail_run, say
from .flags import OutputFormat
from .output import check_output, live_status, outputs, report_one, target_sources


@app.command()
def scan(
    target: str = typer.Argument(..., help="FILE.py:NAME, FILE.py:NAME.method or pkg.module:NAME"),
    input_shape: Optional[List[str]] = flags.input_shape(
        "Shape of one positional input, e.g. 8,16 (repeat once per input)."),
    dtype: str = flags.dtype("dtype of the generated inputs (int64 for token ids: values stay "
                             "below the smallest embedding table)."),
    device: str = flags.device("cpu, cuda or auto (cuda when available)."),
    inputs: Optional[str] = flags.inputs("FILE.py:make_inputs returning a tuple, dict or "
                                         "tensor, instead of --input-shape."),
    init_args: Optional[str] = flags.init_args("JSON keyword arguments for NAME(...)"),
    method: Optional[str] = typer.Option(None, help="Method to scan instead of forward."),
    train: bool = typer.Option(False, "--train", help="Scan in train() mode with autograd on "
                               "(default: eval() under torch.no_grad())."),
    vary_batch: Optional[str] = flags.vary_batch(
        "Also call the compiled model with these batch sizes (e.g. 2,4,16) and report every "
        "recompile."),
    shapes: Optional[List[str]] = typer.Option(
        None, help="Also call it with these input shapes (repeatable; one value per call, "
        "inputs separated by spaces, e.g. --shapes 8,32) and report recompiles."),
    dynamic_check: bool = typer.Option(
        True, "--dynamic-check/--no-dynamic-check", help="With --vary-batch/--shapes: replay "
        "the input sets with dynamic=True to show whether it removes the recompiles (sets with a "
        "specialised size 0 or 1 are never replayed)."),
    dynamic: Optional[str] = flags.dynamic(
        "Your torch.compile(dynamic=...): the capture, the run-time counts, the recompile "
        "check and the timings use it (default: torch's own)."),
    compile_option: Optional[List[str]] = flags.compile_option(
        "Your torch.compile(options={...}) for the timings (repeatable), e.g. "
        "--compile-option max_autotune=True."),
    nested_graph_breaks: Optional[str] = flags.dynamic(
        "torch._dynamo.config.nested_graph_breaks for every compile of the scan: a break in a "
        "nested function splits only that function (default: torch's own; the report says "
        "which was in force)."),
    time_it: bool = typer.Option(False, "--time", help="Also time eager vs torch.compile vs "
                                 "fullgraph=True and check compiled outputs against eager."),
    backend: str = flags.backend("torch.compile backend for --time."),
    mode: Optional[str] = flags.mode("torch.compile mode for --time (e.g. max-autotune)."),
    threads: int = flags.threads("CPU threads for --time (set before compiling; reported)."),
    max_run_time: float = flags.max_run_time(
        "Seconds each variant of --time (and half of --fix's same-process timing) may run: at "
        "least a quarter of it, then until the spread is within 10 % of the median."),
    kernels: bool = flags.kernels(),
    compile_time: bool = flags.compile_time(),
    fix: bool = typer.Option(False, "--fix", help="Propose a fix for every break and verify "
                             "each in a fresh process: rescan, outputs vs the original, "
                             "before/after graphs, breaks and latency (implies --time)."),
    write: bool = typer.Option(False, "--write", help="With --fix: apply the verified source "
                               "fixes to your files (a .breakscan.bak backup is kept)."),
    max_breaks: Optional[int] = flags.max_breaks(),
    max_graphs: Optional[int] = flags.max_graphs(),
    max_recompiles: Optional[int] = flags.max_recompiles(
        "Gate: fail above this many recompiles (needs --vary-batch/--shapes)."),
    max_graph_calls: Optional[int] = flags.max_graph_calls(
        "Gate: fail above this many compiled-graph calls per model call (counted at run time: "
        "a graph in a loop counts every time it runs)."),
    max_kernels: Optional[int] = flags.max_kernels(),
    max_compile_time: Optional[float] = flags.max_compile_time(),
    max_compile_instructions: Optional[int] = flags.max_compile_instructions(),
    fail_on: Optional[str] = flags.fail_on(),
    fullgraph: bool = flags.fullgraph(),
    baseline: Optional[Path] = flags.baseline(),
    write_baseline: Optional[Path] = flags.write_baseline("Record this scan as the baseline."),
    output_format: OutputFormat = flags.output_format(),
    output: Optional[Path] = flags.output(),
    html: Optional[Path] = flags.html(),
    timeout: float = flags.timeout("Stop a scan that takes longer than this many seconds (0: "
                                   "no limit); exit 3 with a partial report."),
    memory_limit: Optional[int] = flags.memory_limit(
        "Memory limit of the scan process in MB (a model that needs more fails with exit 3)."),
    quiet: bool = flags.quiet(),
    verbose: bool = flags.verbose("Also show Dynamo's own logs and what the model printed."),
    debug: bool = flags.debug(),
) -> None:
    """Scan a model for graph breaks and report each with its cause and fix.

    The scan runs in a child process: a model that hangs, crashes or exits ends with exit 3,
    a one-line error naming the stage, and the report of the stages that finished.
    """
    from ..config import gate_options
    from ..files import refuse_over_sources
    from ..options import Limits, ScanOptions, TimingOptions
    from ..runs.runner import run_model

    try:
        check_output(output, output_format)
        refuse_over_sources(outputs(output, html, write_baseline),
                            target_sources(target, *([inputs] if inputs else [])))
        if write and not fix:
            raise UsageError("--write applies verified fixes: use it with --fix")
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, max_graph_calls=max_graph_calls,
                            max_kernels=max_kernels, max_compile_time=max_compile_time,
                            max_compile_instructions=max_compile_instructions, fail_on=fail_on,
                            fullgraph=fullgraph, baseline=str(baseline) if baseline else None,
                            target=target)
        options = ScanOptions(
            input_shapes=input_shape or (), dtype=dtype, device=device, inputs=inputs,
            init_args=init_args, method=method, train=train, verbose=verbose,
            vary_batch=vary_batch, shapes=shapes or (), dynamic_check=dynamic_check,
            dynamic=dynamic, compile_options=compile_option or (),
            nested_graph_breaks=nested_graph_breaks, kernels=kernels or gate.needs_kernels,
            compile_time=compile_time or gate.needs_compile_time, timing=TimingOptions(backend=backend, mode=mode, threads=threads,
                                 max_run_time=max_run_time)
            if time_it or fix else None)
        options.check(target, gate)  # a typo fails here, before a scan process starts
        limits = Limits(timeout=timeout, memory_limit_mb=memory_limit)
        with live_status(target, enabled=not quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            run = run_model(target, options, gate, limits, on_stage=on_stage)
        if run.error is not None and run.exit_code != EXIT_MODEL_FAILED and \
                not run.interrupted:
            fail_run(run, debug)  # bad input: nothing ran, nothing to report
        if fix and run.error is None and (run.result.compile_error is None
                                          or run.result.compile_error.backend):
            stopped = _fix(target, options, run.result, limits, write)
            if stopped is not None:  # interrupted mid-way: report what was verified so far
                run.error, run.exit_code = stopped
        elif run.result is not None and run.result.breaks:
            from ..fixes.plan import switch_candidates

            run.result.fixes = switch_candidates(run.result)  # named, not tried
        report_one(run, output_format, output, html, write_baseline, quiet=quiet,
                   verbose=verbose)
    except BreakscanError as exc:
        fail(exc, debug)
    end_one(run, debug)


def _fix(target: str, options, result, limits, write: bool) -> tuple[str, int] | None:
    """--fix: verify every proposed fix (progress on stderr), then --write the verified ones.

    Returns (error, exit code) when interrupted: nothing is written then.
    """
    from ..fixes.unfixed import unfixed
    from ..fixes.verify import FixesInterrupted, verify_fixes
    from ..fixes.write import write_fixes

    def progress(one) -> None:
        say(f"breakscan: fix {one.rule} {one.fix_id}: {one.status}")

    try:
        with live_status(target) as on_stage:
            result.fixes = verify_fixes(target, options, result, limits, on_fix=progress,
                                        on_stage=on_stage)
    except FixesInterrupted as stop:
        result.fixes = stop.fixes
        return stop.error, stop.exit_code
    result.unfixed = unfixed(result, result.fixes)
    if write:
        for file in write_fixes(result.fixes):
            say(f"breakscan: rewrote {file} (backup beside it: .breakscan.bak)")
    return None
