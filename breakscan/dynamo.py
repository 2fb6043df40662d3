"""Dynamo's hooks as context managers: its logs, its bytecode hook, its metrics, a clean session.

Every stage that runs Dynamo (capture, recompiles, measure) enters it through here, the way depyf
wraps Dynamo's hooks. Dynamo's private APIs are feature-detected: where one is missing the hook
degrades and adds a note saying what is lost, instead of crashing on another torch version.
Nothing here interprets what was recorded; see ``analyse``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch


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
    compile_s: float | None = None  # the whole frame's compile (Dynamo + backend), seconds


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
            fail_line=getattr(m, "fail_user_frame_lineno", None),
            compile_s=getattr(m, "entire_frame_compile_time_s", None)))
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


def compile_model(fn: Callable[..., Any], compile_only: tuple[Any, str] | None = None,
                  **options: Any) -> Callable[..., Any]:
    """``torch.compile(fn, **options)``, or only ``owner.method`` of ``compile_only=(owner,
    method)`` while ``fn`` runs eagerly; empty ``options=`` is left out (it is not the same as
    none to torch.compile, which refuses it next to ``mode``)."""
    if not options.get("options"):
        options.pop("options", None)
    if compile_only is not None:
        return compile_within(fn, *compile_only, **options)
    return torch.compile(fn, **options)


RESUME_PREFIX = "torch_dynamo_resume_in_"  # the name of every resume function Dynamo makes


@dataclass
class GraphCounter:
    """A backend that counts every call of every compiled graph (what a model call costs)."""

    inner: str = "eager"
    calls: int = 0

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        lookup = getattr(torch._dynamo, "lookup_backend", None)
        compiled = lookup(self.inner)(gm, example_inputs) if lookup else gm.forward

        def counted(*args: Any) -> Any:
            self.calls += 1
            return compiled(*args)

        return counted


CodeKey = tuple[str, str, int]  # (co_name, co_filename, co_firstlineno)


@contextlib.contextmanager
def python_calls(wanted: Callable[[CodeKey], bool]) -> Iterator[dict[CodeKey, int]]:
    """Count the Python-level calls of the code objects ``wanted`` accepts (sys.setprofile).

    Dynamo runs a resume function's compiled code under the resume function's own code object,
    and a frame it skipped as itself, so both are seen here: each call of a resume function is
    one return to Python at a break, each call of a skipped frame one frame run eagerly.
    """
    counts: dict[CodeKey, int] = {}
    seen: dict[Any, bool] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        keep = seen.get(code)
        if keep is None:
            keep = seen[code] = wanted((code.co_name, code.co_filename, code.co_firstlineno))
        if keep:
            key = (code.co_name, code.co_filename, code.co_firstlineno)
            counts[key] = counts.get(key, 0) + 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(previous)


def dynamic_shapes(dynamic: bool | None) -> contextlib.AbstractContextManager[Any]:
    """What ``torch.compile(dynamic=...)`` sets, for passes that cannot take the argument
    (explain): True assumes every size dynamic, False turns automatic dynamic shapes off."""
    if dynamic is None:
        return contextlib.nullcontext()
    config = torch._dynamo.config
    if dynamic:
        return config.patch(assume_static_by_default=False)
    return config.patch(automatic_dynamic_shapes=False, assume_static_by_default=True)
