"""Stage 2 — capture: one Dynamo pass that feeds both sources of truth.

``torch._dynamo.explain`` drives the pass (its counts are kept verbatim). During that same run
breakscan records what explain throws away: the ``graph_breaks``/``recompiles`` log artifacts
(the complete break list, including frames Dynamo skipped), the code objects Dynamo produced
(bytecode hook, which names the resume function at every break), and the compilation metrics
(skipped frames, recompile-limit hits). Nothing here interprets the data; see ``analyse``.

Dynamo's private APIs are feature-detected: where one is missing the capture degrades and adds a
note saying what is lost, instead of crashing on another torch version.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from .errors import as_model_error, describe, user_frame_hint


@dataclass
class CodeEvent:
    """One (original code -> transformed code) pair seen by the bytecode hook."""

    name: str
    file: str
    first_line: int
    compile_id: str | None


@dataclass
class FrameMetric:
    """The fields of one ``CompilationMetrics`` row that breakscan uses."""

    compile_id: str | None
    name: str | None
    file: str | None
    first_line: int | None
    graph_op_count: int | None
    fail_type: str | None
    fail_reason: str | None
    fail_file: str | None
    fail_line: int | None


@dataclass
class RawCapture:
    """Everything one Dynamo pass produced, uninterpreted."""

    explain: Any | None  # torch._dynamo.backends.debugging.ExplainOutput
    explain_error: str | None
    graph_break_logs: list[str]
    recompile_logs: list[str]
    code_events: list[CodeEvent]
    metrics: list[FrameMetric]
    dynamo_log: list[str]
    model_output: str
    seconds: float
    notes: list[str] = field(default_factory=list)


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]):
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                # The "frame skipped" variant carries the Unsupported message only here.
                text += "\n" + str(record.exc_info[1])
            self.sink.append(text)
        except Exception:  # a log handler must never break the scan
            pass


def _logging_internal() -> Any | None:
    try:
        import torch._logging._internal as internal
    except ImportError:
        return None
    needed = ("log_registry", "_get_log_state", "_set_log_state")
    return internal if all(hasattr(internal, n) for n in needed) else None


@contextlib.contextmanager
def dynamo_logs(verbose: bool, notes: list[str]) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Route Dynamo's break/recompile artifacts into lists; keep the rest off the terminal.

    Yields (graph_break_logs, recompile_logs, other_dynamo_log). With ``verbose`` Dynamo's own
    handlers stay in place so its messages also reach stderr. Logging state is restored after.
    """
    breaks: list[str] = []
    recompiles: list[str] = []
    other: list[str] = []
    internal = _logging_internal()
    if internal is None:
        notes.append("torch._logging internals not found: graph-break log records unavailable; "
                     "breaks come from explain only")
        yield breaks, recompiles, other
        return
    saved_state = copy.deepcopy(internal._get_log_state())
    registry = internal.log_registry
    # "torch.__trace" is the structured trace (TORCH_TRACE); its DEBUG records must not reach a
    # host's handlers (pytest attaches its capture to it: dozens of empty lines per test).
    qnames = list(registry.get_log_qnames()) + list(registry.get_artifact_log_qnames()) + \
        ["torch.__trace"]
    saved = [(log, list(log.handlers), log.propagate, log.level)
             for log in map(logging.getLogger, qnames)]
    try:
        torch._logging.set_logs(graph_breaks=True, recompiles=True)
        if not os.environ.get("TORCH_TRACE"):  # no trace asked for: emit no trace records
            logging.getLogger("torch.__trace").setLevel(logging.WARNING)
        if not verbose:
            for qname in registry.get_log_qnames():
                log = logging.getLogger(qname)
                log.handlers = [_ListHandler(other)]
                log.propagate = False
        for qname in registry.get_artifact_log_qnames():
            if qname.endswith("__graph_breaks") or qname.endswith("__recompiles"):
                log = logging.getLogger(qname)
                sink = breaks if qname.endswith("__graph_breaks") else recompiles
                log.handlers = [_ListHandler(sink)]
                log.setLevel(logging.DEBUG)
                log.propagate = verbose
        yield breaks, recompiles, other
    finally:
        # Put back the exact handlers and levels the process had (set_logs replaced them).
        internal._set_log_state(saved_state)
        for log, handlers, propagate, level in saved:
            log.handlers = handlers
            log.propagate = propagate
            log.setLevel(level)


@contextlib.contextmanager
def bytecode_hook(notes: list[str]) -> Iterator[list[CodeEvent]]:
    """Record each code object Dynamo transformed, with its compile id."""
    events: list[CodeEvent] = []
    register = getattr(getattr(torch._dynamo, "convert_frame", None), "register_bytecode_hook", None)
    if register is None:
        notes.append("torch._dynamo.convert_frame.register_bytecode_hook not found: resume "
                     "functions are not tied to breaks")
        yield events
        return

    def hook(code: Any, new_code: Any) -> None:
        compile_id = None
        with contextlib.suppress(Exception):
            current = torch._guards.CompileContext.current_compile_id()
            compile_id = str(current) if current is not None else None
        events.append(CodeEvent(code.co_name, code.co_filename, code.co_firstlineno, compile_id))

    handle = register(hook)
    try:
        yield events
    finally:
        handle.remove()


def _utils_attr(name: str) -> Callable[..., Any] | None:
    return getattr(getattr(torch._dynamo, "utils", None), name, None)


def clean_dynamo_state() -> None:
    """Start from nothing: caches, counters, metrics and the duplicate-break filter."""
    torch._dynamo.reset()
    for name in ("clear_compilation_metrics", "reset_graph_break_dup_checker"):
        fn = _utils_attr(name)
        if fn is not None:
            fn()
    counters = getattr(torch._dynamo.utils, "counters", None)
    if counters is not None:
        counters.clear()


def read_metrics(notes: list[str]) -> list[FrameMetric]:
    getter = _utils_attr("get_compilation_metrics")
    if getter is None:
        notes.append("torch._dynamo.utils.get_compilation_metrics not found: skipped frames are "
                     "known only from the log records")
        return []
    rows = []
    for m in getter():
        rows.append(FrameMetric(
            compile_id=str(m.compile_id) if getattr(m, "compile_id", None) else None,
            name=getattr(m, "co_name", None), file=getattr(m, "co_filename", None),
            first_line=getattr(m, "co_firstlineno", None),
            graph_op_count=getattr(m, "graph_op_count", None),
            fail_type=getattr(m, "fail_type", None), fail_reason=getattr(m, "fail_reason", None),
            fail_file=getattr(m, "fail_user_frame_filename", None),
            fail_line=getattr(m, "fail_user_frame_lineno", None)))
    return rows


@dataclass
class DynamoSession:
    """What a quiet Dynamo run recorded (filled while the ``with`` block runs)."""

    graph_break_logs: list[str]
    recompile_logs: list[str]
    dynamo_log: list[str]
    output: io.StringIO  # what the model printed
    notes: list[str]


@contextlib.contextmanager
def dynamo_session(*, training: bool, verbose: bool = False) -> Iterator[DynamoSession]:
    """A run from clean Dynamo state whose logs, warnings and prints are recorded, not shown.

    Read anything that lives in Dynamo's state (compilation metrics) inside the block: the state
    is cleaned again on exit so nothing leaks into the next scan.
    """
    notes: list[str] = []
    output = io.StringIO()
    grad = contextlib.nullcontext() if training else torch.no_grad()
    clean_dynamo_state()
    try:
        with dynamo_logs(verbose, notes) as (break_logs, recompile_logs, other_logs), \
                warnings.catch_warnings(record=True) as caught, grad, \
                contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            warnings.simplefilter("always")
            yield DynamoSession(break_logs, recompile_logs, other_logs, output, notes)
            other_logs.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    finally:
        clean_dynamo_state()


def compile_within(fn: Callable[..., Any], owner: Any, method: str,
                   **options: Any) -> Callable[..., Any]:
    """``fn`` run eagerly with only ``owner.method`` compiled (``torch.compile(**options)``).

    How users compile a transformers model for ``generate``: ``model.forward =
    torch.compile(model.forward)``, the decoding loop itself staying in Python.
    """
    compiled = torch.compile(getattr(owner, method), **options)

    def call(*args: Any, **kwargs: Any) -> Any:
        had = method in vars(owner)
        previous = vars(owner).get(method)
        setattr(owner, method, compiled)
        try:
            return fn(*args, **kwargs)
        finally:
            if had:
                setattr(owner, method, previous)
            else:
                delattr(owner, method)

    return call


def _explain_within(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    owner: Any, method: str) -> Any:
    """explain's output for the frames of ``owner.method`` only, while ``fn`` runs eagerly."""
    from torch._dynamo.backends.debugging import ExplainWithBackend

    recorder = ExplainWithBackend("eager")
    compile_within(fn, owner, method, backend=recorder)(*args, **kwargs)
    return recorder.output()


def run_explain(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
                training: bool = False, verbose: bool = False,
                compile_only: tuple[Any, str] | None = None) -> RawCapture:
    """Run ``torch._dynamo.explain(fn)(*args, **kwargs)`` once, recording everything else too.

    ``compile_only=(owner, method)`` captures only that method's frames while ``fn`` runs
    eagerly (same records, same output type).
    """
    explain_out = None
    explain_error = None
    with dynamo_session(training=training, verbose=verbose) as session, \
            bytecode_hook(session.notes) as events:
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
