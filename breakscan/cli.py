"""Command line: a thin typer layer over :func:`breakscan.scan`.

``breakscan FILE.py:NAME …`` is the scan itself (the ``scan`` subcommand is implied), so the form
users type and CI scripts call stays short. Exit codes: 0 ok (gate passed), 1 gate failed,
2 usage/input error, 3 the model's own code failed (see README).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from .report import FILE_FORMATS
from .report.terminal import console as literal_console

from . import __version__
from .errors import (EXIT_GATE_FAILED, EXIT_MODEL_FAILED, EXIT_USAGE, INTERRUPT_CODES,
                     BreakscanError, Interrupted, UsageError, interrupt_signal)
from .options import DEFAULT_TIMEOUT_S

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Find, explain and fix torch.compile graph breaks.",
                  context_settings={"help_option_names": ["-h", "--help"]})


# --format's choices: the terminal report and every file format report/ registers.
OutputFormat = Enum("OutputFormat", {name: name for name in ("terminal", *FILE_FORMATS)},
                    type=str)


# Options that scan and run share (one definition, one help text).
_MAX_BREAKS = typer.Option(None, min=0, help="Gate: fail (exit 1) above this many root-cause "
                           "breaks.")
_MAX_GRAPHS = typer.Option(None, min=0, help="Gate: fail above this many graphs.")
_FAIL_ON = typer.Option(None, help="Gate: fail on any break of these categories, e.g. "
                        "item,data_dependent_branch.")
_FULLGRAPH = typer.Option(False, "--fullgraph", help="Gate: zero breaks and no skipped frames.")
_BASELINE = typer.Option(None, help="Gate: fail only on regressions against this baseline file.")
_OUTPUT = typer.Option(None, "--output", "-o", help="Write the report here (with a file "
                       "--format).")
_HTML = typer.Option(None, "--html", help="Also write a self-contained HTML report to this file.")


def make_console() -> Console:
    """A TTY gets its real width; a pipe or CI log gets 100 columns (rich's default is 80)."""
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or 100)
    return literal_console(width=width)


def _fail(exc: BaseException, debug: bool) -> None:
    err = literal_console(stderr=True, soft_wrap=True)
    if debug:
        err.print(traceback.format_exc(), markup=False)
    code = exc.exit_code if isinstance(exc, BreakscanError) else EXIT_USAGE
    err.print(f"breakscan: error: {exc}", markup=False)
    raise typer.Exit(code)


def _emit(runs, fmt: OutputFormat, output: Optional[Path], *, quiet: bool, verbose: bool,
          single: bool) -> None:
    """Write the chosen format (stdout, or -o FILE plus the terminal summary)."""
    from .report import render_file_format
    from .report import terminal
    from .files import write_atomic

    console = make_console()
    if fmt is OutputFormat.terminal:
        terminal.render_runs(runs, console, quiet=quiet, verbose=verbose)
        return
    text = render_file_format(runs, fmt.value, single=single)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
    terminal.render_runs(runs, console, quiet=True, verbose=False)
    console.print(f"wrote {output}", highlight=False)


def _check_output(output: Optional[Path], fmt: OutputFormat) -> None:
    if output is not None and fmt is OutputFormat.terminal:
        raise UsageError("--output needs a file format: add --format json (or html, junit, "
                         "sarif, github, markdown)")
    if output is not None and output.is_dir():
        raise UsageError(f"--output {output} is a directory; name a file")
    if output is not None and not output.parent.is_dir():  # known before any scan runs
        raise UsageError(f"cannot write {output}: No such file or directory")


@app.command()
def scan(
    target: str = typer.Argument(..., help="FILE.py:NAME, FILE.py:NAME.method or pkg.module:NAME"),
    input_shape: Optional[List[str]] = typer.Option(
        None, "--input-shape", "-s", help="Shape of one positional input, e.g. 8,16 (repeat "
        "once per input)."),
    dtype: str = typer.Option("float32", help="dtype of the generated inputs (int64 for token "
                              "ids: values stay below the smallest embedding table)."),
    device: str = typer.Option("cpu", help="cpu, cuda or auto (cuda when available)."),
    inputs: Optional[str] = typer.Option(None, help="FILE.py:make_inputs returning a tuple, "
                                         "dict or tensor, instead of --input-shape."),
    init_args: Optional[str] = typer.Option(None, help="JSON keyword arguments for NAME(...)"),
    method: Optional[str] = typer.Option(None, help="Method to scan instead of forward."),
    train: bool = typer.Option(False, "--train", help="Scan in train() mode with autograd on "
                               "(default: eval() under torch.no_grad())."),
    vary_batch: Optional[str] = typer.Option(
        None, help="Also call the compiled model with these batch sizes (e.g. 2,4,16) and "
        "report every recompile."),
    shapes: Optional[List[str]] = typer.Option(
        None, help="Also call it with these input shapes (repeatable; one value per call, "
        "inputs separated by spaces, e.g. --shapes 8,32) and report recompiles."),
    dynamic_check: bool = typer.Option(
        True, "--dynamic-check/--no-dynamic-check", help="With --vary-batch/--shapes: replay "
        "the input sets with dynamic=True to show whether it removes the recompiles (sets with a "
        "specialised size 0 or 1 are never replayed)."),
    dynamic: Optional[str] = typer.Option(
        None, metavar="true|false", help="Your torch.compile(dynamic=...): the capture, the "
        "run-time counts, the recompile check and the timings use it (default: torch's own)."),
    compile_option: Optional[List[str]] = typer.Option(
        None, metavar="KEY=VALUE", help="Your torch.compile(options={...}) for the timings "
        "(repeatable), e.g. --compile-option max_autotune=True."),
    time_it: bool = typer.Option(False, "--time", help="Also time eager vs torch.compile vs "
                                 "fullgraph=True and check compiled outputs against eager."),
    backend: str = typer.Option("inductor", help="torch.compile backend for --time."),
    mode: Optional[str] = typer.Option(None, help="torch.compile mode for --time "
                                       "(e.g. max-autotune)."),
    threads: int = typer.Option(1, min=1, help="CPU threads for --time (set before compiling; "
                                "reported)."),
    max_run_time: float = typer.Option(2.0, min=0.01, help="Seconds each variant of --time "
                                       "(and half of --fix's same-process timing) may run: at "
                                       "least a quarter of it, then until the spread is within "
                                       "10 % of the median."),
    fix: bool = typer.Option(False, "--fix", help="Propose a fix for every break and verify "
                             "each in a fresh process: rescan, outputs vs the original, "
                             "before/after graphs, breaks and latency (implies --time)."),
    write: bool = typer.Option(False, "--write", help="With --fix: apply the verified source "
                               "fixes to your files (a .breakscan.bak backup is kept)."),
    max_breaks: Optional[int] = _MAX_BREAKS,
    max_graphs: Optional[int] = _MAX_GRAPHS,
    max_recompiles: Optional[int] = typer.Option(None, min=0, help="Gate: fail above this many "
                                                 "recompiles (needs --vary-batch/--shapes)."),
    max_graph_calls: Optional[int] = typer.Option(None, min=0, help="Gate: fail above this "
                                                  "many compiled-graph calls per model call "
                                                  "(counted at run time: a graph in a loop "
                                                  "counts every time it runs)."),
    fail_on: Optional[str] = _FAIL_ON,
    fullgraph: bool = _FULLGRAPH,
    baseline: Optional[Path] = _BASELINE,
    write_baseline: Optional[Path] = typer.Option(None, help="Record this scan as the "
                                                  "baseline."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f"),
    output: Optional[Path] = _OUTPUT,
    html: Optional[Path] = _HTML,
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, min=0, help="Stop a scan that takes longer "
                                  "than this many seconds (0: no limit); exit 3 with a partial "
                                  "report."),
    memory_limit: Optional[int] = typer.Option(None, min=1, help="Memory limit of the scan "
                                               "process in MB (a model that needs more fails "
                                               "with exit 3)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the summary lines."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also show Dynamo's own logs "
                                 "and what the model printed."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Scan a model for graph breaks and report each with its cause and fix.

    The scan runs in a child process: a model that hangs, crashes or exits ends with exit 3,
    a one-line error naming the stage, and the report of the stages that finished.
    """
    from .options import Limits, ScanOptions, TimingOptions, gate_options
    from .process.runner import run_model

    from .files import refuse_over_sources

    try:
        _check_output(output, output_format)
        refuse_over_sources(_outputs(output, html, write_baseline),
                            _target_sources(target, *([inputs] if inputs else [])))
        if write and not fix:
            raise UsageError("--write applies verified fixes: use it with --fix")
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, max_graph_calls=max_graph_calls,
                            fail_on=fail_on, fullgraph=fullgraph,
                            baseline=str(baseline) if baseline else None, target=target)
        options = ScanOptions(
            input_shapes=input_shape or (), dtype=dtype, device=device, inputs=inputs,
            init_args=init_args, method=method, train=train, verbose=verbose,
            vary_batch=vary_batch, shapes=shapes or (), dynamic_check=dynamic_check,
            dynamic=dynamic, compile_options=compile_option or (),
            timing=TimingOptions(backend=backend, mode=mode, threads=threads,
                                 max_run_time=max_run_time)
            if time_it or fix else None)
        options.check(target)  # a typo fails here, before a scan process starts
        limits = Limits(timeout=timeout, memory_limit_mb=memory_limit)
        with live_status(target, enabled=not quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            run = run_model(target, options, gate, limits, on_stage=on_stage)
        if run.error is not None and run.exit_code != EXIT_MODEL_FAILED and \
                not run.interrupted:
            _fail_run(run, debug)  # bad input: nothing ran, nothing to report
        if fix and run.error is None and run.result.compile_error is None:
            stopped = _fix(target, options, run.result, limits, write)
            if stopped is not None:  # interrupted mid-way: report what was verified so far
                run.error, run.exit_code = stopped
        _report_one(run, output_format, output, html, write_baseline, quiet=quiet,
                    verbose=verbose)
    except BreakscanError as exc:
        _fail(exc, debug)
    _end_one(run, debug)


def _outputs(output: Optional[Path], html: Optional[Path] = None,
             write_baseline: Optional[Path] = None) -> list[tuple[str, Optional[Path]]]:
    return [("-o", output), ("--html", html), ("--write-baseline", write_baseline)]


def _target_sources(*targets: str) -> list[str]:
    """The files a target names (its own file; a module target's file), without importing."""
    from .sources import target_file

    found = []
    for target in targets:
        try:
            file = target_file(target)
        except Exception:  # a malformed target fails later, with its own message
            file = None
        if file is not None:
            found.append(str(file))
    return found


def _result_sources(runs) -> list[str]:
    """Every user file the finished results came from."""
    from .cache import source_files

    found: list[str] = []
    for run in runs:
        if run.result is not None and not run.result.ranks and run.result.program is None:
            found += sorted(source_files(run.target, run.result))
    return found


def _report_one(run, output_format: OutputFormat, output: Optional[Path], html: Optional[Path],
                write_baseline: Optional[Path], *, quiet: bool, verbose: bool) -> None:
    """A single run's report (and baseline): what ``scan`` and ``run`` print and write."""
    from .files import refuse_over_sources
    from .gate import write_baseline as save_baseline

    refuse_over_sources(_outputs(output, html, write_baseline), _result_sources([run]))

    if write_baseline is not None and run.error is None:
        try:
            save_baseline(write_baseline, [run.result])
        except OSError as exc:
            raise UsageError(f"cannot write {write_baseline}: {exc.strerror}") from None
    if run.result is not None or output_format is not OutputFormat.terminal:
        _emit([run], output_format, output, quiet=quiet, verbose=verbose, single=True)
    if html is not None:
        _write_html([run], html)
    if write_baseline is not None and run.error is None:
        make_console().print(f"wrote baseline {write_baseline}", highlight=False)


def _end_one(run, debug: bool) -> None:
    """A single run's exit: its one-line error (exit 3, 130…), or the gate's exit 1."""
    if run.error is not None:
        _fail_run(run, debug)
    if run.exit_code:
        raise typer.Exit(run.exit_code)


def _write_html(runs, path: Path, comparison=None) -> None:
    from .report.html import to_html
    from .files import write_atomic

    if path.is_dir():
        raise UsageError(f"--html {path} is a directory; name a file")
    try:
        write_atomic(path, to_html(runs, comparison=comparison))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    err = literal_console(stderr=True, soft_wrap=True)
    err.print(f"breakscan: wrote HTML report {path}", markup=False)


def _fix(target: str, options, result, limits, write: bool) -> tuple[str, int] | None:
    """--fix: verify every proposed fix (progress on stderr), then --write the verified ones.

    Returns (error, exit code) when interrupted: nothing is written then.
    """
    from .fixes.plan import FixesInterrupted, unfixed, verify_fixes, write_fixes

    err = literal_console(stderr=True, soft_wrap=True)

    def progress(one) -> None:
        err.print(f"breakscan: fix {one.rule} {one.fix_id}: {one.status}", markup=False)

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
            err.print(f"breakscan: rewrote {file} (backup beside it: .breakscan.bak)",
                      markup=False)
    return None


@contextlib.contextmanager
def live_status(label: str, *, enabled: bool = True):
    """A status line on stderr with the elapsed time, the current stage and the target (TTY
    only); the target comes last, so a narrow terminal cuts it rather than the stage.

    Yields the ``on_stage`` callback for :func:`breakscan.process.isolate.run_isolated`, or None when
    stderr is not a terminal or the output is a file format: nothing then reaches stderr.
    """
    err = literal_console(stderr=True)
    if not enabled or not err.is_terminal:
        yield None
        return
    class Line:  # re-rendered on every refresh, so the elapsed time ticks
        started = time.monotonic()
        stage = "starting"

        def __rich__(self) -> str:
            return f"breakscan {time.monotonic() - self.started:.0f}s · {self.stage} · {label}"

    line = Line()

    def on_stage(name: str) -> None:
        line.stage = name

    with err.status(line, spinner="dots"):
        yield on_stage


def _fail_run(run, debug: bool) -> None:
    """A scan that did not finish: its one-line error (and with --debug its details)."""
    err = literal_console(stderr=True, soft_wrap=True)
    if debug and run.detail:
        err.print(run.detail, markup=False)
    err.print(f"breakscan: {'' if run.interrupted else 'error: '}{run.error}", markup=False)
    raise typer.Exit(run.exit_code)


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
    max_breaks: Optional[int] = _MAX_BREAKS,
    max_graphs: Optional[int] = _MAX_GRAPHS,
    max_recompiles: Optional[int] = typer.Option(None, min=0, help="Gate: fail above this many "
                                                 "recompiles over the run."),
    max_graph_calls: Optional[int] = typer.Option(None, min=0, help="Gate: fail when a region "
                                                  "makes more than this many compiled-graph "
                                                  "calls per call."),
    fail_on: Optional[str] = _FAIL_ON,
    fullgraph: bool = _FULLGRAPH,
    baseline: Optional[Path] = _BASELINE,
    write_baseline: Optional[Path] = typer.Option(None, help="Record this run as the "
                                                  "baseline."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f"),
    output: Optional[Path] = _OUTPUT,
    html: Optional[Path] = _HTML,
    timeout: float = typer.Option(0, min=0, help="Stop the program after this many seconds "
                                  "(default 0: no limit); exit 3 with the report of what it "
                                  "compiled so far."),
    memory_limit: Optional[int] = typer.Option(None, min=1, help="Memory limit of the program "
                                               "in MB."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Keep the program's output in the "
                               "report (not the terminal) and print only the summary lines."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also show Dynamo's own logs "
                                 "(and, with --quiet, what the program printed)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Run a whole program (python SCRIPT ARGS / -m MODULE ARGS) unchanged and report every
    graph break, recompile and compiled region torch.compile met in it.

    Everything after SCRIPT (or after -m MODULE) belongs to the program. It keeps its own
    sys.argv, working directory, environment, stdin and stdout; its exit status is reported,
    and a program that fails or is stopped ends with exit 3 and the report of what it compiled.
    """
    from .options import Limits, ProgramOptions, gate_options
    from .files import refuse_over_sources
    from .process.runner import run_program

    try:
        words = list(program or ())
        script = None if module is not None else (words.pop(0) if words else None)
        options = ProgramOptions(script=script, module=module, args=tuple(words),
                                 capture_only=capture_only, quiet=quiet, verbose=verbose)
        options.check()
        _check_output(output, output_format)
        refuse_over_sources(_outputs(output, html, write_baseline), [script or ""])
        label = " ".join(options.command)
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, max_graph_calls=max_graph_calls,
                            fail_on=fail_on, fullgraph=fullgraph,
                            baseline=str(baseline) if baseline else None, target=label)
        limits = Limits(timeout=timeout, memory_limit_mb=memory_limit)
        with live_status(label, enabled=quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            outcome = run_program(options, gate, limits, on_stage=on_stage,
                                  stdout_to_stderr=output_format is not OutputFormat.terminal
                                  and output is None)
        if outcome.error is not None and outcome.result is None and \
                outcome.exit_code != EXIT_MODEL_FAILED and not outcome.interrupted:
            _fail_run(outcome, debug)  # bad input: nothing ran, nothing to report
        _report_one(outcome, output_format, output, html, write_baseline, quiet=quiet,
                    verbose=verbose)
    except BreakscanError as exc:
        _fail(exc, debug)
    _end_one(outcome, debug)


@app.command()
def trace(
    folder: Path = typer.Argument(..., help="The TORCH_TRACE folder (one file per rank), or one "
                                 "trace file."),
    max_breaks: Optional[int] = _MAX_BREAKS,
    max_graphs: Optional[int] = _MAX_GRAPHS,
    max_recompiles: Optional[int] = typer.Option(None, min=0, help="Gate: fail above this many "
                                                 "recompiles, all ranks together."),
    fail_on: Optional[str] = _FAIL_ON,
    fullgraph: bool = _FULLGRAPH,
    baseline: Optional[Path] = _BASELINE,
    write_baseline: Optional[Path] = typer.Option(None, help="Record this trace as the "
                                                  "baseline."),
    source_root: Optional[List[Path]] = typer.Option(
        None, "--source-root", help="Show source only for Python files under this folder "
        "(repeatable; default: the working directory): a trace names files of someone else's "
        "job."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f"),
    output: Optional[Path] = _OUTPUT,
    html: Optional[Path] = _HTML,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the summary lines."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Report the breaks, graphs and recompiles of a job run with TORCH_TRACE=FOLDER (e.g.
    under torchrun): per rank and across ranks, what differs between ranks first.

    Nothing is run: the trace files are read (streamed). Every reporter and gate option works.
    """
    from .options import gate_options
    from .trace.ranks import trace_report
    from .result import ModelRun
    from .process.runner import gated

    try:
        _check_output(output, output_format)
        result = trace_report(folder, [str(r) for r in source_root] if source_root else None)
        gate = gate_options(max_breaks=max_breaks, max_graphs=max_graphs,
                            max_recompiles=max_recompiles, fail_on=fail_on, fullgraph=fullgraph,
                            baseline=str(baseline) if baseline else None, target=result.target)
        run = gated(ModelRun(target=result.target, result=result), gate)
        _report_one(run, output_format, output, html, write_baseline, quiet=quiet,
                    verbose=False)
    except BreakscanError as exc:
        _fail(exc, debug)
    _end_one(run, debug)


@app.command()
def check(
    config: Path = typer.Option(Path("pyproject.toml"), help="File with [tool.breakscan]."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f"),
    output: Optional[Path] = typer.Option(None, "--output", "-o"),
    write_baseline: Optional[Path] = typer.Option(None, help="Record every scanned target as "
                                                  "the baseline."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write one HTML page with a "
                                        "row per model."),
    timeout: Optional[float] = typer.Option(None, min=0, help="Time limit per model in seconds "
                                            "(default: the config's 'timeout', else "
                                            f"{DEFAULT_TIMEOUT_S:g}; 0: none)."),
    jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1, help="Scan this many "
                             "targets at a time, each in its own process with cores/jobs CPU "
                             "threads (default: the number of CPUs; 1: one after another)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Scan every target, even one whose "
                                  "files, inputs and settings are unchanged since the result "
                                  "stored in .breakscan_cache/."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the summary lines per model."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Scan and gate every target listed in [tool.breakscan] (pyproject.toml), in parallel, and
    reuse the stored result of every target that has not changed."""
    from .cache import ResultCache
    from .check import load_config, run_config
    from .result import overall_exit_code
    from .gate import write_baseline as save_baseline

    from .files import refuse_over_sources

    try:
        _check_output(output, output_format)
        section = load_config(config)
        listed = section.get("targets")
        targets = [t.get("target") for t in (listed if isinstance(listed, list) else [])
                   if isinstance(t, dict)]
        refuse_over_sources(_outputs(output, html, write_baseline),
                            [str(config), *_target_sources(*[t for t in targets
                                                             if isinstance(t, str)])])
        cache = None if no_cache else ResultCache(config.resolve().parent)
        with live_status("check", enabled=not quiet and output_format is OutputFormat.terminal
                         and output is None) as on_stage:
            runs = run_config(section, config, overrides={"timeout": timeout},
                              on_stage=on_stage, jobs=jobs, cache=cache)
        refuse_over_sources(_outputs(output, html, write_baseline), _result_sources(runs))
        if write_baseline is not None:
            try:
                save_baseline(write_baseline, [r.result for r in runs
                                               if r.result is not None and r.error is None])
            except OSError as exc:
                raise UsageError(f"cannot write {write_baseline}: {exc.strerror}") from None
        _emit(runs, output_format, output, quiet=quiet, verbose=False, single=False)
        if html is not None:
            _write_html(runs, html)
    except BreakscanError as exc:
        _fail(exc, debug)
    stopped = next((r for r in runs if r.interrupted), None)
    if stopped is not None:
        _fail_run(stopped, False)
    code = overall_exit_code(runs)
    if code:
        raise typer.Exit(code)


@app.command()
def compare(
    target_a: str = typer.Argument(..., metavar="A", help="The model, e.g. model.py:Net"),
    target_b: str = typer.Argument(..., metavar="B", help="Its twin, e.g. model.py:NetFixed"),
    input_shape: Optional[List[str]] = typer.Option(None, "--input-shape", "-s"),
    dtype: str = typer.Option("float32"),
    device: str = typer.Option("cpu"),
    inputs: Optional[str] = typer.Option(None, help="FILE.py:make_inputs, for both."),
    init_args: Optional[str] = typer.Option(None, help="JSON keyword arguments, for both."),
    vary_batch: Optional[str] = typer.Option(None, help="Also count recompiles over these "
                                             "batch sizes."),
    dynamic: Optional[str] = typer.Option(None, metavar="true|false", help="Your "
                                          "torch.compile(dynamic=...), for both."),
    compile_option: Optional[List[str]] = typer.Option(None, metavar="KEY=VALUE", help="Your "
                                                       "torch.compile(options={...}), for both "
                                                       "(repeatable)."),
    backend: str = typer.Option("inductor", help="torch.compile backend for the timings."),
    mode: Optional[str] = typer.Option(None),
    threads: int = typer.Option(1, min=1),
    max_run_time: float = typer.Option(2.0, min=0.01, help="Seconds each timed variant may "
                                       "run."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, min=0, help="Per scan, seconds."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f",
                                               help="terminal or json"),
    output: Optional[Path] = typer.Option(None, "--output", "-o"),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write an HTML page: A vs B "
                                        "and both reports."),
) -> None:
    """Scan and time two targets the same way, side by side, and compare their outputs."""
    from .pipeline.compare import compare_targets
    from .options import Limits, ScanOptions, TimingOptions
    from .report import terminal
    from .files import refuse_over_sources, write_atomic

    try:
        _check_output(output, output_format)
        sources = _target_sources(target_a, target_b, *([inputs] if inputs else []))
        refuse_over_sources(_outputs(output, html), sources)
        if output_format not in (OutputFormat.terminal, OutputFormat.json):
            raise UsageError("compare writes --format terminal or json")
        options = ScanOptions(input_shapes=input_shape or (), dtype=dtype, device=device,
                              inputs=inputs, init_args=init_args, vary_batch=vary_batch,
                              dynamic=dynamic, compile_options=compile_option or (),
                              timing=TimingOptions(backend=backend, mode=mode, threads=threads,
                                                   max_run_time=max_run_time))
        options.check(target_a)
        options.check(target_b)
        comparison = compare_targets(target_a, target_b, options, Limits(timeout=timeout))
        for run in (comparison.a, comparison.b):
            if run.error is not None and (run.result is None or run.interrupted):
                _fail_run(run, False)
        if output_format is OutputFormat.json:
            import json

            text = json.dumps(comparison.to_dict(), indent=2, default=str) + "\n"
            if output is None:
                sys.stdout.write(text)
            else:
                refuse_over_sources(_outputs(output, html),
                                    sources + _result_sources([comparison.a, comparison.b]))
                try:
                    write_atomic(output, text)
                except OSError as exc:
                    raise UsageError(f"cannot write {output}: {exc.strerror}") from None
        if output_format is OutputFormat.terminal or output is not None:
            terminal.render_comparison(comparison, make_console())
        if html is not None:
            _write_html([comparison.a, comparison.b], html, comparison)
    except BreakscanError as exc:
        _fail(exc, False)
    code = max(comparison.a.exit_code, comparison.b.exit_code)
    if code:
        raise typer.Exit(code)


@app.command()
def lint(
    paths: List[Path] = typer.Argument(..., help="Python files or folders (searched for *.py)."),
    only: Optional[str] = typer.Option(None, help="Only this class (its forward), Class.method "
                                       "or function."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f",
                                               help="terminal or json"),
) -> None:
    """Read the source (no torch, no import) and flag the patterns that break or recompile.

    Exit 1 when a pattern that breaks the graph is found, 0 when there is none (recompile
    causes alone are warnings).
    """
    import json
    from dataclasses import asdict

    from .lint.walker import BREAK_CATEGORIES, lint_file
    from .report import terminal

    try:
        if output_format not in (OutputFormat.terminal, OutputFormat.json):
            raise UsageError("lint writes --format terminal or json")
        files: list[Path] = []
        for path in paths:
            if path.is_dir():
                files += sorted(p for p in path.rglob("*.py") if ".breakscan.bak" not in p.name)
            else:
                files.append(path)
        findings = [f for file in files for f in lint_file(file, only=only)]
    except BreakscanError as exc:
        _fail(exc, False)
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps([asdict(f) for f in findings], indent=2) + "\n")
    else:
        terminal.render_static(findings, make_console(), files=len(files))
    if any(f.category in BREAK_CATEGORIES for f in findings):
        raise typer.Exit(EXIT_GATE_FAILED)


@app.command()
def rules(rule: Optional[str] = typer.Argument(None, help="A rule id (BS001), name or "
                                               "category to explain.")) -> None:
    """List the rule catalogue, or explain one rule with its example and fixes."""
    from .report import terminal
    from .rules import CATALOGUE, find_rule

    console = make_console()
    if rule is None:
        terminal.render_rule_list(CATALOGUE, console)
        return
    found = find_rule(rule)
    if found is None:
        _fail(UsageError(f"no rule {rule!r}; `breakscan rules` lists them "
                         f"({', '.join(r.id for r in CATALOGUE)})"), False)
    terminal.render_rule(found, console)


@app.command()
def version() -> None:
    """Print breakscan's and torch's versions."""
    import torch

    typer.echo(f"breakscan {__version__} (torch {torch.__version__})")


def _raise_on_signals() -> None:
    """SIGTERM and SIGHUP end breakscan like Ctrl-C: the scan process group is killed, its
    temporary folder removed, and what finished is reported (exit 143 / 129; Ctrl-C 130)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
            signal.signal(sig, handler)


def _quiet_after_broken_pipe() -> None:
    """Exit as a Unix tool killed by SIGPIPE does (141), without a word: the reader is gone."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail too
    except OSError:
        pass
    os._exit(128 + 13)


def _internal_error(exc: BaseException, *, debug: bool) -> None:
    """A bug in breakscan: one line and exit 4 (the README's code), the traceback with --debug."""
    from .errors import EXIT_INTERNAL, describe

    err = literal_console(stderr=True, soft_wrap=True)
    if debug:
        err.print("".join(traceback.format_exception(exc)))
    err.print(f"breakscan: error: internal error in breakscan: {describe(exc)} (please report "
              "it; --debug shows the traceback)")
    sys.exit(EXIT_INTERNAL)


def _commands() -> set[str]:
    """The subcommands as registered on the app: a first word that is none of them is a
    target of the default command, scan."""
    from typer.main import get_command_name

    return {info.name or get_command_name(info.callback.__name__)
            for info in app.registered_commands if info.callback is not None}


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``breakscan TARGET …`` means ``breakscan scan TARGET …``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        args = ["version"]
    first = next((a for a in args if not a.startswith("-")), None)
    if first is not None and first not in _commands() and not {"-h", "--help"} & set(
            args[:args.index(first)]):
        args.insert(args.index(first), "scan")
    _raise_on_signals()
    try:
        code = app(args=args, prog_name="breakscan", standalone_mode=False)
    except (KeyboardInterrupt, Interrupted) as exc:  # outside a scan: nothing to report
        signum = interrupt_signal(exc)
        literal_console(stderr=True).print(
            f"breakscan: interrupted ({INTERRUPT_CODES.get(signum, signum)})", markup=False)
        sys.exit(128 + signum)
    except BrokenPipeError:  # `breakscan … | head -3`: the reader left; leave quietly
        _quiet_after_broken_pipe()
    except Exception as exc:
        # typer vendors click: match its usage errors (bad option or value) by shape.
        if not hasattr(exc, "format_message"):
            _internal_error(exc, debug="--debug" in args)
        if type(exc).__name__ == "Abort":  # click's form of Ctrl-C
            literal_console(stderr=True).print("breakscan: interrupted (SIGINT)",
                                                        markup=False)
            sys.exit(130)
        if exc.format_message():  # empty when no arguments made click print the help
            literal_console(stderr=True, soft_wrap=True).print(
                f"breakscan: error: {exc.format_message()} (see breakscan --help)", markup=False)
        sys.exit(EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
