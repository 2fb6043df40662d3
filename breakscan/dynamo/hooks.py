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
import threading
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from ..result import CodeEvent, FrameMetric  # noqa: F401 - the records these hooks fill


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str], stacks: list[list[tuple[str, int, str]]] | None = None):
        super().__init__(logging.DEBUG)
        self.sink = sink
        self.stacks = stacks  # the Python stack at each record (who made the call that compiled)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                # The "frame skipped" variant carries the Unsupported message only here.
                text += "\n" + str(record.exc_info[1])
            self.sink.append(text)
            if self.stacks is not None:
                self.stacks.append([(f.filename, f.lineno or 0, f.name)
                                    for f in traceback.extract_stack()])
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
def dynamo_logs(verbose: bool, notes: list[str],
                recompile_stacks: list[list[tuple[str, int, str]]] | None = None
                ) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Route Dynamo's break/recompile artifacts into lists; keep the rest off the terminal.

    Yields (graph_break_logs, recompile_logs, other_dynamo_log). With ``verbose`` Dynamo's own
    handlers stay in place so its messages also reach stderr. ``recompile_stacks`` gets the
    Python stack of each recompile record. Logging state is restored after.
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
        # What set_logs(graph_breaks=True, recompiles=True) turns on, without reconfiguring every
        # torch logger (a few ms per call) and also under the user's TORCH_LOGS (which makes
        # set_logs a no-op): the two artifacts (Dynamo formats their records only when they
        # are enabled) and their loggers' level.
        state = internal._get_log_state()
        state.enable_artifact("graph_breaks")
        state.enable_artifact("recompiles")
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
                log.handlers = [_ListHandler(sink, None if sink is breaks else
                                             recompile_stacks)]
                log.setLevel(logging.DEBUG)
                log.propagate = verbose
        yield breaks, recompiles, other
    finally:
        # Put back the exact state, handlers and levels the process had.
        internal._set_log_state(saved_state)
        for log, handlers, propagate, level in saved:
            log.handlers = handlers
            log.propagate = propagate
            if log.level != level:  # setLevel clears every logger's cache: only when needed
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


def log_breaks_again() -> None:
    """Dynamo logs a break it has logged before in a short form, without the user stack;
    after this it logs each in full again."""
    reset = _utils_attr("reset_graph_break_dup_checker")
    if reset is not None:
        reset()


def read_metrics(notes: list[str], seen: list[Any] | None = None) -> list[FrameMetric]:
    """Dynamo's compilation metrics (one per frame compile). ``seen`` (a list this function
    fills) leaves out the records an earlier read returned: a later call's compiles only."""
    getter = _utils_attr("get_compilation_metrics")
    if getter is None:
        notes.append("torch._dynamo.utils.get_compilation_metrics not found: skipped frames are "
                     "known only from the log records")
        return []
    earlier = {id(m) for m in seen} if seen is not None else set()
    rows = []
    for m in getter():
        if id(m) in earlier:
            continue
        if seen is not None:
            seen.append(m)  # the reference keeps the id from being reused
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
def clean_dynamo() -> Iterator[None]:
    """Dynamo state that starts from nothing and is cleaned again on exit (nothing leaks into
    the next scan); compiled code made inside the block stays cached until then."""
    clean_dynamo_state()
    try:
        yield
    finally:
        clean_dynamo_state()


@contextlib.contextmanager
def recorded(*, training: bool, verbose: bool = False,
             notes: list[str] | None = None) -> Iterator[DynamoSession]:
    """Calls of compiled code whose logs, warnings and prints are recorded, not shown."""
    notes = [] if notes is None else notes
    output = io.StringIO()
    grad = contextlib.nullcontext() if training else torch.no_grad()
    with dynamo_logs(verbose, notes) as (break_logs, recompile_logs, other_logs), \
            warnings.catch_warnings(record=True) as caught, grad, \
            contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        warnings.simplefilter("always")
        yield DynamoSession(break_logs, recompile_logs, other_logs, output, notes)
        other_logs.extend(f"{w.category.__name__}: {w.message}" for w in caught)


@contextlib.contextmanager
def dynamo_session(*, training: bool, verbose: bool = False) -> Iterator[DynamoSession]:
    """A run from clean Dynamo state whose logs, warnings and prints are recorded, not shown.

    Read anything that lives in Dynamo's state (compilation metrics) inside the block: the state
    is cleaned again on exit so nothing leaks into the next scan.
    """
    with clean_dynamo(), recorded(training=training, verbose=verbose) as session:
        yield session


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




class CaptureBackend:
    """The backend of a scan's one compiled model: explain's own graph-accumulating backend
    over the eager backend (so its numbers are explain's), with each graph's calls counted."""

    def __init__(self) -> None:
        from torch._dynamo.backends.debugging import ExplainWithBackend

        self.explain = ExplainWithBackend("eager")
        self.calls: list[int] = []  # per graph, in compile order: how often it ran

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        compiled = self.explain(gm, example_inputs)
        index = len(self.calls)
        self.calls.append(0)

        def counted(*args: Any) -> Any:
            self.calls[index] += 1
            return compiled(*args)

        return counted

    def mark(self) -> tuple[int, int, int]:
        """Where the records stand now (graphs, break reasons, ops), for :meth:`output`."""
        e = self.explain
        return len(e.graphs), len(e.break_reasons), e.op_count

    def output(self, since: tuple[int, int, int] = (0, 0, 0)) -> Any:
        """explain's output for the graphs compiled after ``since`` (a copy: later compiles
        do not change it). From the start, it is what ``torch._dynamo.explain`` returns."""
        from torch._dynamo.backends.debugging import ExplainOutput

        graphs, reasons, ops = since
        e = self.explain
        new = list(e.graphs[graphs:])
        return ExplainOutput(new, len(new), len(new) - 1, list(e.break_reasons[reasons:]),
                             e.op_count - ops)


CodeKey = tuple[str, str, int]  # (co_name, co_filename, co_firstlineno)


@contextlib.contextmanager
def python_calls(wanted: Callable[[CodeKey], bool]) -> Iterator[dict[CodeKey, int]]:
    """Count the Python-level calls of the code objects ``wanted`` accepts (sys.setprofile).

    Dynamo runs a resume function's compiled code under the resume function's own code object,
    and a frame it skipped as itself, so both are seen here: each call of a resume function is
    one return to Python at a break, each call of a skipped frame one frame run eagerly.
    """
    counts: dict[CodeKey, int] = {}
    # Keyed by identity: Dynamo's resume code for a break inside a comprehension keeps a dict
    # among its constants, so hashing the code object raises "unhashable type: 'dict'".
    seen: dict[int, tuple[Any, bool]] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        known = seen.get(id(code))
        if known is None:
            keep = wanted((code.co_name, code.co_filename, code.co_firstlineno))
            seen[id(code)] = (code, keep)  # the reference keeps the id from being reused
        else:
            keep = known[1]
        if keep:
            key = (code.co_name, code.co_filename, code.co_firstlineno)
            counts[key] = counts.get(key, 0) + 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(previous)


def recompile_limit() -> int | None:
    """Dynamo's recompile limit (``cache_size_limit`` on older torch)."""
    config = torch._dynamo.config
    return getattr(config, "recompile_limit", getattr(config, "cache_size_limit", None))


def dynamic_shapes(dynamic: bool | None) -> contextlib.AbstractContextManager[Any]:
    """What ``torch.compile(dynamic=...)`` sets, for passes that cannot take the argument
    (explain): True assumes every size dynamic, False turns automatic dynamic shapes off."""
    if dynamic is None:
        return contextlib.nullcontext()
    config = torch._dynamo.config
    if dynamic:
        return config.patch(assume_static_by_default=False)
    return config.patch(automatic_dynamic_shapes=False, assume_static_by_default=True)


@dataclass
class Region:
    """One callable a program compiled (``torch.compile(model)``, ``@torch.compile``,
    ``model.compile()``) and what it did at run time, counted while the program ran."""

    name: str  # the model's class or the function's qualified name
    kind: str  # "module" or "function"
    compiled_at: list[tuple[str, int, str]]  # the stack of the torch.compile call (file, line, fn)
    calls: int = 0  # times the program called it
    graph_calls: int = 0  # compiled-graph calls made inside those calls
    python_calls: dict[int, list[Any]] = field(default_factory=dict)  # id(code) -> [code, calls]


class RegionRecorder:
    """What every compiled region of a program did: its calls, its graph calls, the Python code
    that ran inside it (resume functions, skipped frames), and every graph (``explain``: an
    ``ExplainWithBackend`` fed the same graphs the user's backend gets)."""

    def __init__(self, explain: Any) -> None:
        self.regions: list[Region] = []
        self.explain = explain
        self.outside = Region("<outside any region>", "none", [])  # graph calls of no region
        self._local = threading.local()

    def stack(self) -> list[Region]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def current(self) -> Region:
        stack = self.stack()
        return stack[-1] if stack else self.outside


def _region_of(fn: Any) -> tuple[str, str]:
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return type(owner).__name__, "module"
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn)), "function"


@contextlib.contextmanager
def record_regions(notes: list[str], *, capture_only: bool = False) -> Iterator[RegionRecorder]:
    """Record every region the code run inside the block compiles, keeping the user's backend
    (``capture_only``: every backend swapped for ``eager``, no inductor compile).

    Patches Dynamo internals, feature-detected: ``_TorchDynamoContext.__call__`` (each
    ``torch.compile`` wrapping a callable becomes a region, counted on entry through the
    context's ``enter_exit_hooks``), ``OutputGraph.call_user_compiler`` (each graph recorded,
    its compiled function counted per call) and ``convert_frame._compile`` (the profile hook
    that counts Python calls inside a region is off while Dynamo compiles: compiling is not
    what the program's steady state runs, and profiling it would slow it down).
    """
    from torch._dynamo.backends.debugging import ExplainWithBackend

    context = getattr(getattr(torch._dynamo, "eval_frame", None), "_TorchDynamoContext", None)
    output_graph = getattr(getattr(torch._dynamo, "output_graph", None), "OutputGraph", None)
    convert_frame = getattr(torch._dynamo, "convert_frame", None)
    recorder = RegionRecorder(ExplainWithBackend(_eager_backend))
    if context is None or not hasattr(output_graph, "call_user_compiler") or \
            not hasattr(convert_frame, "_compile"):
        notes.append("this torch lacks _TorchDynamoContext, OutputGraph.call_user_compiler or "
                     "convert_frame._compile: regions and run-time counts unavailable")
        yield recorder
        return
    never_traced(record_regions, RegionRecorder)
    wrap_callable = context.__call__
    call_user_compiler = output_graph.call_user_compiler
    compile_frame = convert_frame._compile

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            counts = recorder.current().python_calls  # keyed by identity: see python_calls
            entry = counts.get(id(frame.f_code))
            if entry is None:
                counts[id(frame.f_code)] = [frame.f_code, 1]
            else:
                entry[1] += 1

    def enter_hook(region: Region) -> Callable[[], Callable[[], None]]:
        def enter() -> Callable[[], None]:
            stack = recorder.stack()
            region.calls += 1
            outermost = not stack
            stack.append(region)
            previous = sys.getprofile() if outermost else None
            if outermost:
                sys.setprofile(profile)

            def leave() -> None:
                stack.pop()
                if outermost:
                    sys.setprofile(previous)

            return leave

        return enter

    def compiling(*args: Any, **kwargs: Any) -> Any:
        previous = sys.getprofile()
        if previous is profile:
            sys.setprofile(None)
        try:
            return compile_frame(*args, **kwargs)
        finally:
            if previous is profile:
                sys.setprofile(profile)

    def patched_wrap(self: Any, fn: Any) -> Any:
        wrapped = wrap_callable(self, fn)
        hooks = getattr(self, "enter_exit_hooks", None)
        if callable(self.callback) and not isinstance(fn, torch.nn.Module) and \
                isinstance(hooks, list) and not getattr(self, "_breakscan_region", None):
            name, kind = _region_of(fn)
            stack = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack()[:-1]]
            region = Region(name, kind, stack)
            recorder.regions.append(region)
            self._breakscan_region = region
            hooks.append(enter_hook(region))
        return wrapped

    def patched_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
        recorder.explain(gm, example_inputs)  # records the graph, compiles nothing
        if capture_only:
            user_backend, self.compiler_fn = self.compiler_fn, _eager_backend
            try:
                compiled = call_user_compiler(self, gm, example_inputs)
            finally:
                self.compiler_fn = user_backend
        else:
            compiled = call_user_compiler(self, gm, example_inputs)

        def counted(*args: Any) -> Any:
            recorder.current().graph_calls += 1
            return compiled(*args)

        counted.__dict__.update(getattr(compiled, "__dict__", {}))  # e.g. _boxed_call
        return counted

    context.__call__ = patched_wrap
    output_graph.call_user_compiler = patched_compiler
    convert_frame._compile = compiling
    try:
        yield recorder
    finally:
        context.__call__ = wrap_callable
        output_graph.call_user_compiler = call_user_compiler
        convert_frame._compile = compile_frame


def _eager_backend(gm: Any, example_inputs: Any) -> Callable[..., Any]:
    return gm.forward


def never_traced(*objects: Any) -> None:
    """Make Dynamo run these functions (classes: their methods; nested functions too) as plain
    Python: breakscan's hooks run inside the program's compiled regions, where Dynamo would
    otherwise trace them like user code (``eval_frame.skip_code``, feature-detected)."""
    import types

    skip = getattr(getattr(torch._dynamo, "eval_frame", None), "skip_code", None)
    if skip is None:
        return
    codes = []
    for obj in objects:
        fn = getattr(obj, "__wrapped__", obj)
        if isinstance(fn, type):
            codes += [f.__code__ for f in vars(fn).values() if hasattr(f, "__code__")]
        elif hasattr(fn, "__code__"):
            codes.append(fn.__code__)
    while codes:
        code = codes.pop()
        skip(code)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
