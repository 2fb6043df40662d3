"""Stage 2 — capture: one Dynamo pass that feeds both sources of truth.

``torch._dynamo.explain`` drives the pass (its counts are kept verbatim). During that same run
breakscan records what explain throws away: the ``graph_breaks``/``recompiles`` log artifacts
(the complete break list, including frames Dynamo skipped), the code objects Dynamo produced
(bytecode hook, which names the resume function at every break), and the compilation metrics
(skipped frames, recompile-limit hits), all through the hooks of ``dynamo.py``. Nothing here
interprets the data; see ``analyse``. The eager run that follows traces which lines ran.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from .breaklog import RESUME_PREFIX
from .dynamo import (CodeEvent, CodeKey, GraphCounter, bytecode_hook,
                     clean_dynamo_state, compile_model, compile_within, dynamic_shapes,
                     dynamo_logs, dynamo_session, python_calls, read_metrics, record_regions)
from .errors import as_model_error, describe, user_frame_hint
from .frames import frames_of
from .result import RawCapture, RawFailure


def _explain_within(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    owner: Any, method: str) -> Any:
    """explain's output for the frames of ``owner.method`` only, while ``fn`` runs eagerly."""
    from torch._dynamo.backends.debugging import ExplainWithBackend

    recorder = ExplainWithBackend("eager")
    compile_within(fn, owner, method, backend=recorder)(*args, **kwargs)
    return recorder.output()


def run_explain(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
                training: bool = False, verbose: bool = False,
                compile_only: tuple[Any, str] | None = None,
                dynamic: bool | None = None) -> RawCapture:
    """Run ``torch._dynamo.explain(fn)(*args, **kwargs)`` once, recording everything else too.

    ``compile_only=(owner, method)`` captures only that method's frames while ``fn`` runs
    eagerly (same records, same output type). ``dynamic`` is the user's
    ``torch.compile(dynamic=...)``.
    """
    explain_out = None
    explain_error = None
    with dynamo_session(training=training, verbose=verbose) as session, \
            bytecode_hook(session.notes) as events, dynamic_shapes(dynamic):
        start = time.perf_counter()
        try:
            if compile_only is None:
                explain_out = torch._dynamo.explain(fn)(*args, **kwargs)
            else:
                explain_out = _explain_within(fn, args, kwargs, *compile_only)
        except (Exception, SystemExit) as exc:
            # Dynamo failing on the model, or the model's own error (the eager run that follows
            # gives that its clean one-line message); keep what the logs captured.
            explain_error = f"{describe(exc)}{user_frame_hint(exc)}"
        seconds = time.perf_counter() - start
        metrics = read_metrics(session.notes)
    return RawCapture(explain=explain_out, explain_error=explain_error,
                      graph_break_logs=list(session.graph_break_logs),
                      recompile_logs=list(session.recompile_logs), code_events=list(events),
                      metrics=metrics, dynamo_log=list(session.dynamo_log),
                      model_output=session.output.getvalue(), seconds=seconds,
                      notes=session.notes)


@contextlib.contextmanager
def lines_run(files: set[str]) -> Iterator[dict[str, set[int]]]:
    """Record which lines of ``files`` execute (sys.settrace, other files are not traced).

    Lets a scan tell a static finding the run never reached ("not exercised by these inputs")
    from one it ran through.
    """
    executed: dict[str, set[int]] = {f: set() for f in files}
    if not files:
        yield executed
        return

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            executed[frame.f_code.co_filename].add(frame.f_lineno)
        return local

    def global_(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename in executed:
            executed[frame.f_code.co_filename].add(frame.f_lineno)
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        yield executed
    finally:
        sys.settrace(previous)


def run_eager(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
              training: bool, label: str,
              executed: dict[str, set[int]] | None = None) -> str:
    """Run the model once without Dynamo so its own failures get a clean one-line error.

    ``executed`` (file -> line set) is filled with the lines of those files that ran.
    """
    out = io.StringIO()
    grad = contextlib.nullcontext() if training else torch.no_grad()
    try:
        with grad, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
                lines_run(set(executed or ())) as seen:
            fn(*args, **kwargs)
        for file, lines in seen.items():
            executed[file] |= lines
    except BaseException as exc:
        message = str(exc).lower()
        hint = ""
        floats = any(isinstance(a, torch.Tensor) and a.is_floating_point() for a in args)
        if floats and ("'indices'" in message or "embedding" in message):
            hint = " — the model's first layer takes token ids: pass --dtype int64"
        elif isinstance(exc, (RuntimeError, ValueError, IndexError)) and (
                "shape" in message or "size" in message):
            hint = " — check --input-shape / --dtype against what the model expects"
        raise as_model_error(exc, label, hint) from exc
    return out.getvalue()


RUNTIME_WARMUP = 2  # calls before counting: the compiles, and a later call's own path
RUNTIME_CALLS = 3  # calls counted; the counts are averaged over them


@dataclass
class RawRuntime:
    """The compiled model's steady state, counted: what repeats at run time, uninterpreted."""

    calls: int  # model calls counted
    graph_calls: int  # compiled-graph calls over those calls
    python_calls: dict[CodeKey, int]  # calls of resume functions and of the frames asked for
    error: str | None = None  # why nothing was counted (one line)
    # The compiled model itself raised (eager did not): torch.compile fails on this model.
    failure: RawFailure | None = None


def raw_failure(exc: BaseException) -> RawFailure:
    """An exception as data (its text and traceback), for the analysis to read."""
    return RawFailure(type(exc).__name__, str(exc), frames_of(exc))


def run_counted(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
                training: bool, eager_frames: set[CodeKey],
                compile_only: tuple[Any, str] | None = None,
                dynamic: bool | None = None) -> RawRuntime:
    """Call the compiled model (eager backend) the way a user calls it, then count, over a few
    calls, its graph calls, its resume-function calls and the calls of ``eager_frames`` (the
    frames Dynamo skipped). Cheap: no inductor, a handful of calls.

    A warm-up call that raises is the model failing to compile (``failure``; the eager run
    before it succeeded). A counted call that raises is retried without breakscan's counter:
    when the model then runs, the failure was breakscan's own and is reported as such.
    """
    counter = GraphCounter("eager")

    def wanted(key: CodeKey) -> bool:
        return key in eager_frames or key[0].startswith(RESUME_PREFIX)

    with dynamo_session(training=training):
        compiled = compile_model(fn, compile_only, backend=counter, dynamic=dynamic)
        try:
            for _ in range(RUNTIME_WARMUP):
                compiled(*args, **kwargs)
        except Exception as exc:  # eager ran: the compiled model fails
            return RawRuntime(0, 0, {}, error=describe(exc), failure=raw_failure(exc))
        counter.calls = 0
        try:
            with python_calls(wanted) as counts:
                for _ in range(RUNTIME_CALLS):
                    compiled(*args, **kwargs)
        except Exception as exc:
            try:
                compiled(*args, **kwargs)
            except Exception as again:
                return RawRuntime(0, 0, {}, error=describe(again), failure=raw_failure(again))
            return RawRuntime(0, 0, {}, error=f"breakscan's run-time counter failed, not the "
                                             f"model (it runs when called again): "
                                             f"{describe(exc)}")
    return RawRuntime(RUNTIME_CALLS, counter.calls, dict(counts))


@dataclass
class RawRegion:
    """One compiled region of a program and its run-time counts, uninterpreted."""

    name: str
    kind: str  # module | function
    compiled_at: list[tuple[str, int, str]]  # the stack of its torch.compile call
    calls: int
    graph_calls: int
    python_calls: dict[CodeKey, int]  # calls of each code object inside the region


@dataclass
class RawProgram:
    """What a whole program's compiles and compiled calls produced, uninterpreted."""

    capture: RawCapture  # the records, with ``explain`` built from every graph the program made
    regions: list[RawRegion]
    graph_calls_outside: int  # graph calls made outside any region (none expected)
    recompile_stacks: list[list[tuple[str, int, str]]]  # the stack of each recompile record


class ProgramCapture:
    """Records a program while it runs; :meth:`snapshot` reads what it has so far (also when
    the program is stopped half-way)."""

    def __init__(self, recorder: Any, session_logs: tuple[list[str], list[str], list[str]],
                 events: list[CodeEvent], stacks: list[Any], notes: list[str],
                 output: io.StringIO | None, started: float) -> None:
        self._recorder = recorder
        self._logs = session_logs
        self._events = events
        self._stacks = stacks
        self._notes = notes
        self._output = output
        self._started = started

    def snapshot(self) -> RawProgram:
        breaks, recompiles, other = self._logs
        notes = list(self._notes)
        capture = RawCapture(
            explain=self._recorder.explain.output(), explain_error=None,
            graph_break_logs=list(breaks), recompile_logs=list(recompiles),
            code_events=list(self._events), metrics=read_metrics(notes), dynamo_log=list(other),
            model_output=self._output.getvalue() if self._output is not None else "",
            seconds=time.perf_counter() - self._started, notes=notes)
        regions = [RawRegion(r.name, r.kind, r.compiled_at, r.calls, r.graph_calls,
                             _by_key(r.python_calls)) for r in list(self._recorder.regions)]
        return RawProgram(capture, regions, self._recorder.outside.graph_calls,
                          list(self._stacks))


def _by_key(counts: dict[int, list[Any]]) -> dict[CodeKey, int]:
    """Calls per code object -> per (name, file, first line): Dynamo runs a frame's transformed
    code under a new code object with the same identity."""
    out: dict[CodeKey, int] = {}
    for code, n in list(counts.values()):
        key = (code.co_name, code.co_filename, code.co_firstlineno)
        out[key] = out.get(key, 0) + n
    return out


@contextlib.contextmanager
def program_capture(*, capture_only: bool, verbose: bool,
                    quiet: bool) -> Iterator[ProgramCapture]:
    """Record everything ``torch.compile`` does while the block runs a program, leaving the
    program as it is: its backend (unless ``capture_only``), its grad mode, warnings and
    output (``quiet``: its output is kept for the report instead)."""
    notes: list[str] = []
    stacks: list[Any] = []
    output = io.StringIO() if quiet else None
    redirect = contextlib.ExitStack()
    if output is not None:
        redirect.enter_context(contextlib.redirect_stdout(output))
        redirect.enter_context(contextlib.redirect_stderr(output))
    clean_dynamo_state()
    with dynamo_logs(verbose, notes, recompile_stacks=stacks) as logs, \
            bytecode_hook(notes) as events, record_regions(notes,
                                                           capture_only=capture_only) as rec, \
            redirect:
        yield ProgramCapture(rec, logs, events, stacks, notes, output, time.perf_counter())
