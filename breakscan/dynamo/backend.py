"""How breakscan compiles what it scans, and counts what the compiled code runs.

``compile_model`` compiles a model (or only one method of it, the way transformers users
compile ``forward`` for ``generate``); ``CaptureBackend`` is the backend of a scan's one
compiled model (explain's numbers, each graph's calls counted); ``python_calls`` counts the
returns to Python between graphs (resume functions, skipped frames) at run time.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator

import torch

from ..model.raw import CallCounts, CodeKey


def compile_within(fn: Callable[..., Any], parts: list[tuple[Any, str]],
                   **options: Any) -> Callable[..., Any]:
    """``fn`` run eagerly with only each ``owner.method`` of ``parts`` compiled
    (``torch.compile(**options)``).

    How users compile a transformers model for ``generate``: ``model.forward =
    torch.compile(model.forward)``, the decoding loop itself staying in Python; and how they
    compile a repeated block alone: each block's ``forward`` compiled, one code for all.
    """
    compiled = [(owner, method, torch.compile(getattr(owner, method), **options))
                for owner, method in parts]

    def call(*args: Any, **kwargs: Any) -> Any:
        saved = [(owner, method, method in vars(owner), vars(owner).get(method))
                 for owner, method, _ in compiled]
        for owner, method, code in compiled:
            setattr(owner, method, code)
        try:
            return fn(*args, **kwargs)
        finally:
            for owner, method, had, previous in saved:
                if had:
                    setattr(owner, method, previous)
                else:
                    delattr(owner, method)

    return call


def compile_model(fn: Callable[..., Any], compile_only: list[tuple[Any, str]] | None = None,
                  **options: Any) -> Callable[..., Any]:
    """``torch.compile(fn, **options)``, or only ``owner.method`` of ``compile_only=(owner,
    method)`` while ``fn`` runs eagerly; empty ``options=`` is left out (it is not the same as
    none to torch.compile, which refuses it next to ``mode``)."""
    if not options.get("options"):
        options.pop("options", None)
    if compile_only is not None:
        return compile_within(fn, compile_only, **options)
    return torch.compile(fn, **options)


def own_backend(backend: str, mode: str | None, options: dict[str, Any] | None,
                dynamic: bool | None, name: str) -> Any:
    """``backend`` (with its mode and options) as an object equal to no other backend.

    Dynamo reuses a frame's compiled code for any backend that compares equal, and two
    ``torch.compile(..., backend="inductor")`` of one model do: without this, the second model
    of a same-process A/B (a fix's Dynamo setting, a switched copy sharing the library's code)
    would silently run the first one's code.
    """
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if backend == "inductor" and wrapper is not None:
        with contextlib.suppress(TypeError):  # ``name`` is newer than some torch releases
            return wrapper(mode, options or {}, dynamic, name=f"breakscan-{name}-{id(object())}")
    compiler = torch._dynamo.lookup_backend(backend)

    def own(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        return compiler(gm, example_inputs)
    own.__name__ = f"{backend}_{name}"
    return own


class CaptureBackend:
    """The backend of a scan's one compiled model: explain's own graph-accumulating backend
    over the eager backend (so its numbers are explain's), with each graph's calls counted."""

    def __init__(self, keep_inputs: bool = False) -> None:
        from torch._dynamo.backends.debugging import ExplainWithBackend

        self.explain = ExplainWithBackend("eager")
        self.calls: list[int] = []  # per graph, in compile order: how often it ran
        # per graph, with keep_inputs: the example inputs it was compiled for (--kernels
        # compiles the graph again with Inductor; kept only then, they hold activations)
        self.keep_inputs = keep_inputs
        self.inputs: list[list[Any]] = []

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        compiled = self.explain(gm, example_inputs)
        index = len(self.calls)
        self.calls.append(0)
        if self.keep_inputs:
            self.inputs.append(list(example_inputs))

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


def _dynamo_made() -> Callable[[Any], bool]:
    """Whether a code object is one Dynamo made from a frame's code (its compiled version),
    read from ``torch._dynamo.utils.orig_code_map`` (2.13, 2.14); never, where it is missing."""
    made = getattr(getattr(torch._dynamo, "utils", None), "orig_code_map", None)
    return (lambda code: code in made) if made is not None else (lambda code: False)


def count_by_key(codes: list[tuple[Any, int]]) -> CallCounts:
    """(code object, calls) pairs -> calls per (name, file, first line): Dynamo runs a frame's
    transformed code under a new code object with the same identity."""
    made = _dynamo_made()
    out = CallCounts()
    for code, n in codes:
        key = (code.co_name, code.co_filename, code.co_firstlineno)
        out[key] = out.get(key, 0) + n
        if made(code):
            out.compiled[key] = out.compiled.get(key, 0) + n
    return out


@contextlib.contextmanager
def python_calls(wanted: Callable[[CodeKey], bool]) -> Iterator[CallCounts]:
    """Count the Python-level calls of the code objects ``wanted`` accepts (sys.setprofile).

    Dynamo runs a resume function's compiled code under the resume function's own code object,
    and a frame it skipped as itself, so both are seen here: each call of a resume function is
    one return to Python at a break, each call of a skipped frame one frame run eagerly.
    """
    counts = CallCounts()
    made = _dynamo_made()
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
            if made(code):
                counts.compiled[key] = counts.compiled.get(key, 0) + 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(previous)
