"""Stage 3b — kernels (``--kernels``): each captured graph compiled once by Inductor, read back.

The capture's graphs (the eager backend's, exactly what a bare explain sees) are compiled after
the capture with Inductor's ``compile_fx`` (``dynamo/inductor.py``), one compile per graph, so
the capture itself and its numbers are untouched. This module renders each Dynamo graph as the
IR view (one SSA line per op, output dtype and shape, the line it came from) and joins
Inductor's kernels onto its nodes; ``analysis/kernels.py`` turns them into findings.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch

from ..analysis.kernels import fusion_stop_kind, kernel_findings, kernels_per_call
from ..dynamo.inductor import InductorInspection, InspectingInductor, available
from ..frames import parse_stack, split_location
from ..model.records import Fallback, GraphKernels, IRNode, Kernel, RawInductorGraph
from ..model.result import ScanResult
from ..options import TimingOptions
from .call import ModelCall

DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.float64: "f64", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
          torch.int8: "i8", torch.uint8: "u8", torch.bool: "b8", torch.complex64: "c64"}
MAX_ARG = 40  # characters of one argument in the IR view


def _type(value: Any) -> tuple[str | None, list[int | str] | None, str]:
    """(dtype, shape, text) of a node's example value: ``f32[2, 8]``."""
    if isinstance(value, torch.Tensor):
        dtype = DTYPES.get(value.dtype, str(value.dtype).replace("torch.", ""))
        shape = [d if isinstance(d, int) else str(d) for d in value.shape]
        return dtype, shape, f"{dtype}[{', '.join(str(d) for d in shape)}]"
    if isinstance(value, (tuple, list)):
        parts = [_type(v)[2] for v in value]
        return None, None, f"({', '.join(parts)})"
    if value is None:
        return None, None, "None"
    return None, None, type(value).__name__


def _arg(value: Any) -> str:
    if isinstance(value, torch.fx.Node):
        return f"%{value.name}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_arg(v) for v in value)
        text = f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {_arg(v)}" for k, v in value.items()) + "}"
    else:
        text = repr(value)
    return text if len(text) <= MAX_ARG else text[:MAX_ARG - 1] + "…"


def _target(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return f".{node.target}"
    if node.op in ("call_module", "get_attr"):
        return str(node.target)
    name = getattr(node.target, "__name__", None) or str(node.target)
    module = getattr(node.target, "__module__", "") or ""
    if module.startswith("torch._ops") or str(node.target).startswith("aten."):
        return str(node.target)
    return name


def ir_nodes(gm: Any) -> list[IRNode]:
    """The Dynamo graph, one SSA line per node: ``%relu: f32[2, 8] = relu(%conv)``."""
    nodes = []
    for node in gm.graph.nodes:
        dtype, shape, kind = _type(node.meta.get("example_value"))
        if node.op == "placeholder":
            text = f"%{node.name}: {kind} = input"
        elif node.op == "output":
            text = f"return {_arg(node.args[0])}"
        else:
            args = [_arg(a) for a in node.args] + [f"{k}={_arg(v)}" for k, v in node.kwargs.items()]
            text = f"%{node.name}: {kind} = {_target(node)}({', '.join(args)})"
        found = parse_stack(node.meta.get("stack_trace") or "")
        where = found[-1] if found else None
        nodes.append(IRNode(name=node.name, op=node.op if node.op in ("placeholder", "output")
                            else _target(node), text=text, dtype=dtype, shape=shape,
                            file=where.file if where else None,
                            line=where.line if where else None,
                            inputs=[a.name for a in node.all_input_nodes]))
    return nodes


def ir_text(nodes: list[IRNode]) -> str:
    """The IR view as one text: each line with its source location and kernels."""
    width = max((len(n.text) for n in nodes), default=0)
    lines = []
    for n in nodes:
        where = f"{n.file.rsplit('/', 1)[-1]}:{n.line}" if n.file else ""
        kernels = f"  [{', '.join(n.kernels)}]" if n.kernels else ""
        lines.append(f"{n.text:<{width}}   {where}{kernels}".rstrip())
    return "\n".join(lines)


def _fallbacks(raw: RawInductorGraph, kernels: list[Kernel]) -> list[Fallback]:
    """Every op Inductor ran as an ATen fallback (logged as a perf hint, or a fallback kernel
    it did not log), at the user's line of its kernel."""
    ops = list(dict.fromkeys(raw.fallback_ops + [k.op or "?" for k in kernels
                                                 if k.kind == "fallback"]))
    found = []
    for op in ops:
        kernel = next((k for k in kernels if k.kind == "fallback" and k.op == op), None)
        where = split_location(kernel.lines[0]) if kernel and kernel.lines else None
        found.append(Fallback(op, *(where or (None, None))))
    return found


def graph_kernels(gm: Any, raw: RawInductorGraph) -> GraphKernels:
    """Join one graph's IR and its Inductor record (each fusion stop classified)."""
    return join_kernels(ir_nodes(gm), raw)


def join_kernels(nodes: list[IRNode], raw: RawInductorGraph) -> GraphKernels:
    """Join a graph's IR view (:func:`ir_nodes`) and its Inductor record."""
    for stop in raw.fusion_stops:
        stop.kind = fusion_stop_kind(stop)
    by_name = {n.name: n for n in nodes}
    for kernel in raw.kernels:
        for name in kernel.graph_nodes:
            node = by_name.get(name)
            if node is not None and kernel.name not in node.kernels:
                node.kernels.append(kernel.name)
    return GraphKernels(ir=ir_text(nodes), nodes=nodes,
                        kernel_count=raw.kernel_count if raw.error is None else None,
                        kernels=raw.kernels, fallbacks=_fallbacks(raw, raw.kernels),
                        fusion_stops=raw.fusion_stops, compile_s=raw.seconds, error=raw.error)


def apply_kernels(result: ScanResult, found: list[GraphKernels | None]) -> None:
    """Each graph's Inductor record onto the result, then the kernel rules' findings."""
    for info, graph in zip(result.graphs, found):
        info.inductor = graph
    result.kernel_findings = kernel_findings(result)
    result.summary.kernels_per_call = kernels_per_call(result)


def timing_inspector(timing: TimingOptions, call: ModelCall) -> InspectingInductor | None:
    """The backend that makes measure's timed compile the kernels' inspection: Inductor with the
    scan's mode, options and ``dynamic``; None when the timing is not Inductor's, this torch
    lacks the pieces, or torch refuses an option (measure then reports it)."""
    if timing.backend != "inductor" or not InspectingInductor.available():
        return None
    dynamic = timing.dynamic if timing.dynamic is not None else call.dynamic
    try:
        return InspectingInductor(timing.mode, call.compile_options or None, dynamic)
    except Exception:  # a bad --compile-option: torch.compile says so in the timing
        return None


def timed_compile_kernels(result: ScanResult,
                          inspector: InspectingInductor) -> list[GraphKernels | None] | None:
    """The kernels of the timed compile when it made the captured graphs (same count, same
    ops), else None and a note: the captured graphs must then be compiled on their own."""
    timed = inspector.graphs
    if len(timed) == len(result.graphs) and all(
            op_count(gm) == info.op_count for (gm, _), info in zip(timed, result.graphs)):
        result.notes.append("--kernels: read from the timed compile (one Inductor compile per "
                            "graph for both; Inductor's caches were off for it, so its compile "
                            "time is a cold compile)")
        return [graph_kernels(gm, raw) for gm, raw in timed]
    result.notes.append(f"--kernels: the timed compile made {len(timed)} graph(s) where the "
                        f"capture made {len(result.graphs)}; each captured graph was compiled "
                        "again for its kernels")
    return None


def op_count(gm: Any) -> int:
    """The graph's ops as ``GraphInfo.op_count`` counts them (functions, methods, modules)."""
    return sum(n.op in ("call_function", "call_method", "call_module") for n in gm.graph.nodes)


class ProgramKernels:
    """``breakscan run --kernels``: each graph a program compiles, inspected while the program's
    own backend compiles it (an ``inspect`` hook of ``dynamo/regions.record_regions``). When
    that backend is Inductor, its compile is the inspected one (inside Dynamo's tracing context,
    dynamic shapes and all; Inductor's caches off for it); any other backend (or
    ``--capture-only``) gets one Inductor compile more, of a copy of the graph, whose code never
    runs."""

    def __init__(self) -> None:
        self._inspection = InductorInspection()
        self._found: dict[int, GraphKernels] = {}
        self.extra_compiles = 0
        self.with_backward = 0  # graphs whose backward Inductor compiles later, at backward

    def __call__(self, index: int, gm: Any, example_inputs: Any,
                 compile: Callable[[Any, Any], Any]) -> Any:
        nodes = ir_nodes(gm)  # before any compile: Inductor's passes may rewrite the graph
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad
                                           for x in example_inputs):
            self.with_backward += 1
        raw, compiled = self._inspection.compile(gm, example_inputs, index, training=None,
                                                 compiler=compile, reraise=True)
        if not self._inspection.scheduled:  # not Inductor's compile
            copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
            raw, _ = self._inspection.compile(copied, example_inputs, index, training=None)
            self.extra_compiles += 1
        self._found[index] = join_kernels(nodes, raw)
        return compiled

    def found(self, count: int, notes: list[str]) -> list[GraphKernels | None]:
        """Each of the program's ``count`` graphs' kernels (None where none was recorded)."""
        if not count:
            return []
        if self.extra_compiles:
            notes.append(f"--kernels: {self.extra_compiles} graph(s) were compiled by a backend "
                         "other than Inductor (or --capture-only); each was compiled once more "
                         "by Inductor for its kernels, and that code never ran")
        else:
            notes.append("--kernels: read from the program's own Inductor compiles (Inductor's "
                         "caches were off for them, so they were cold compiles)")
        if self.with_backward:
            notes.append(f"--kernels: {self.with_backward} graph(s) need a backward, which "
                         "Inductor compiles when the program first calls backward: the kernels "
                         "shown and counted per call are the forward's")
        return [self._found.get(index) for index in range(count)]


def inspect_graphs(graphs: list[tuple[Any, list[Any]]], *, training: bool,
                   notes: list[str]) -> list[GraphKernels | None]:
    """Compile each (graph module, example inputs) once with Inductor; None for every graph
    when this torch lacks what the inspection needs (``notes`` says what)."""
    missing = available()
    if missing is not None:
        notes.append(f"--kernels: not available ({missing})")
        return [None] * len(graphs)
    inspection = InductorInspection()
    found: list[GraphKernels | None] = []
    for index, (gm, inputs) in enumerate(graphs):
        raw, _ = inspection.compile(gm, inputs, index, training=training)
        found.append(graph_kernels(gm, raw))
    if any(not isinstance(d, int) for gm, _ in graphs for n in gm.graph.nodes
           if n.op == "placeholder" for d in getattr(n.meta.get("example_value"), "shape", ())):
        notes.append("--kernels: a graph has dynamic dimensions; its kernels were compiled for "
                     "the example inputs' sizes")
    return found
