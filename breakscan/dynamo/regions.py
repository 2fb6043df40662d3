"""The regions a program compiles, recorded while it runs unchanged (``breakscan run``).

A program calls ``torch.compile`` itself, on whatever it likes, with its own backend; breakscan
cannot wrap those calls, so it patches Dynamo's entry points for the length of the run: each
``torch.compile`` of a callable becomes a region whose calls, graph calls and Python calls are
counted, and every graph is recorded for explain. The patched internals are feature-detected:
where one is missing, regions are left out with a note.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

GraphCompile = Callable[[int, Any, Any, Callable[[Any, Any], Any]], Any]


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
    graph_counts: dict[int, int] = field(default_factory=dict)  # graph index -> its calls here


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
def record_regions(notes: list[str], *, capture_only: bool = False,
                   inspect: GraphCompile | None = None) -> Iterator[RegionRecorder]:
    """Record every region the code run inside the block compiles, keeping the user's backend
    (``capture_only``: every backend swapped for ``eager``, no inductor compile). ``inspect``
    (``--kernels``) compiles each graph in place of the plain call of the user's backend:
    ``inspect(index, gm, example_inputs, compile)`` calls ``compile`` (the user's backend) and
    returns what it returns.

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
    never_traced(record_regions, RegionRecorder, *_HOOK_MAKERS)
    wrap_callable = context.__call__
    call_user_compiler = output_graph.call_user_compiler
    compile_frame = convert_frame._compile
    profile = _python_call_counter(recorder)
    context.__call__ = _region_maker(recorder, wrap_callable, profile)
    output_graph.call_user_compiler = _graph_recorder(recorder, call_user_compiler, capture_only,
                                                      inspect)
    convert_frame._compile = _unprofiled(compile_frame, profile)
    try:
        yield recorder
    finally:
        context.__call__ = wrap_callable
        output_graph.call_user_compiler = call_user_compiler
        convert_frame._compile = compile_frame


def _python_call_counter(recorder: RegionRecorder) -> Callable[[Any, str, Any], None]:
    """The profile hook that counts each Python call in the region running now."""

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            counts = recorder.current().python_calls  # keyed by identity: see python_calls
            entry = counts.get(id(frame.f_code))
            if entry is None:
                counts[id(frame.f_code)] = [frame.f_code, 1]
            else:
                entry[1] += 1

    return profile


def _region_entry(recorder: RegionRecorder, region: Region,
                  profile: Callable[[Any, str, Any], None]
                  ) -> Callable[[], Callable[[], None]]:
    """An ``enter_exit_hooks`` entry: counts a call of ``region`` and makes it the current one;
    the outermost region also turns the Python-call profile on until it is left."""

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


def _unprofiled(compile_frame: Callable[..., Any],
                profile: Callable[[Any, str, Any], None]) -> Callable[..., Any]:
    """``convert_frame._compile`` with the Python-call profile off while Dynamo compiles."""

    def compiling(*args: Any, **kwargs: Any) -> Any:
        previous = sys.getprofile()
        if previous is profile:
            sys.setprofile(None)
        try:
            return compile_frame(*args, **kwargs)
        finally:
            if previous is profile:
                sys.setprofile(profile)

    return compiling


def _region_maker(recorder: RegionRecorder, wrap_callable: Callable[..., Any],
                  profile: Callable[[Any, str, Any], None]) -> Callable[..., Any]:
    """``_TorchDynamoContext.__call__`` that makes each callable ``torch.compile`` wraps a
    region (once per context), with the stack of the call that compiled it."""

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
            hooks.append(_region_entry(recorder, region, profile))
        return wrapped

    return patched_wrap


def _graph_recorder(recorder: RegionRecorder, call_user_compiler: Callable[..., Any],
                    capture_only: bool, inspect: GraphCompile | None) -> Callable[..., Any]:
    """``OutputGraph.call_user_compiler`` that records each graph for explain and counts each
    call of its compiled function in the region running then (``capture_only``: compiled by
    the eager backend instead of the user's; ``inspect``: see :func:`record_regions`)."""

    def patched_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
        index = len(recorder.explain.graphs)  # this graph's number in explain's output
        recorder.explain(gm, example_inputs)  # records the graph, compiles nothing

        def user_compile(gm: Any, example_inputs: Any) -> Any:
            if not capture_only:
                return call_user_compiler(self, gm, example_inputs)
            user_backend, self.compiler_fn = self.compiler_fn, _eager_backend
            try:
                return call_user_compiler(self, gm, example_inputs)
            finally:
                self.compiler_fn = user_backend

        compiled = user_compile(gm, example_inputs) if inspect is None else \
            inspect(index, gm, example_inputs, user_compile)

        def counted(*args: Any) -> Any:
            region = recorder.current()
            region.graph_calls += 1
            region.graph_counts[index] = region.graph_counts.get(index, 0) + 1
            return compiled(*args)

        counted.__dict__.update(getattr(compiled, "__dict__", {}))  # e.g. _boxed_call
        return counted

    return patched_compiler


# The hooks above run inside the program's compiled regions: Dynamo must never trace them.
_HOOK_MAKERS = (_python_call_counter, _region_entry, _unprofiled, _region_maker, _graph_recorder)


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
