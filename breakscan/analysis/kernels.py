"""The kernel rules (BS2xx) found in what Inductor made of each graph (``--kernels``).

Reads only the records (``GraphInfo.inductor``: the IR nodes with dtypes and shapes, the
kernels, the fallbacks), so no torch is imported here. Each finding is at the user's line.
"""

from __future__ import annotations

from math import prod
from typing import Iterator

from ..model.records import FusionStop, GraphKernels, IRNode, KernelFinding
from ..model.result import ScanResult
from ..rules.catalogue import rule_id
from ..rules.kernels import BROADCAST, DTYPE_CAST, FALLBACK, HOST_SYNC_IN_GRAPH, LAYOUT_COPY

# A tensor is "large" from this many elements on: a layout copy or a broadcast of a smaller one
# is noise next to the graph's other work.
LARGE_ELEMENTS = 1 << 16
# An output this many times larger than every input is a broadcast that makes data.
BROADCAST_GROWTH = 8
FLOAT_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
HALF = ("f16", "bf16")
CASTS = {".to", ".float", ".double", ".half", ".bfloat16", ".type", "to",
         "prims.convert_element_type.default"}
TRANSPOSES = {".transpose", ".permute", ".t", ".mT", "transpose", "permute", "t",
              ".swapaxes", "swapaxes", ".movedim", "movedim"}
VIEWS = {".view", ".unsqueeze", "unsqueeze", "getitem", ".expand", ".squeeze"}
# ATen ops that only move memory: a generated kernel of these alone is a copy.
MOVES = {"permute", "transpose", "clone", "view", "reshape", "_unsafe_view", "expand",
         "unsqueeze", "squeeze", "copy", "_to_copy", "as_strided", "slice", "select", "t"}
POINTWISE = {"add", "sub", "mul", "truediv", "div", ".add", ".sub", ".mul", ".div", "where",
             "pow", ".pow", "maximum", "minimum", "iadd", "imul", "isub"}
SYNC_OPS = {".item", "_local_scalar_dense", "aten._local_scalar_dense.default"}


def _numel(node: IRNode) -> int | None:
    if node.shape is None or not all(isinstance(d, int) for d in node.shape):
        return None
    return prod(node.shape)  # type: ignore[arg-type]


def _finding(category: str, graph: int, node: IRNode, message: str,
             kernel: str | None = None) -> KernelFinding:
    return KernelFinding(rule=rule_id(category), category=category, graph=graph,
                         file=node.file, line=node.line, message=message,
                         kernel=kernel or (node.kernels[0] if node.kernels else None))


def _float_inputs(node: IRNode, by_name: dict[str, IRNode]) -> list[IRNode]:
    return [by_name[n] for n in node.inputs if n in by_name and by_name[n].dtype in FLOAT_WIDTH]


def _casts(graph: GraphKernels) -> Iterator[tuple[IRNode, str, str]]:
    """(node, from dtype, to dtype) of every op that changes a float value's dtype."""
    by_name = {n.name: n for n in graph.nodes}
    for node in graph.nodes:
        if node.dtype not in FLOAT_WIDTH or node.op not in CASTS:
            continue
        sources = _float_inputs(node, by_name)
        if len(sources) == 1 and sources[0].dtype != node.dtype:
            yield node, sources[0].dtype or "", node.dtype


def _dtype_findings(index: int, graph: GraphKernels) -> list[KernelFinding]:
    found: list[KernelFinding] = []
    casts = list(_casts(graph))
    inputs = [n for n in graph.nodes if n.op == "placeholder" and n.dtype in FLOAT_WIDTH]
    half_graph = bool(inputs) and all(n.dtype in HALF for n in inputs)
    for number, (node, old, new) in enumerate(casts):
        if FLOAT_WIDTH[new] <= FLOAT_WIDTH[old]:
            continue
        back = next((c for c in casts[number + 1:] if c[1] == new and c[2] == old), None)
        if back is not None:
            where = (f", back to {old} at line {back[0].line}"
                     if back[0].line and back[0].line != node.line else f" and back to {old}")
            found.append(_finding(DTYPE_CAST.category, index, node,
                                  f"{old} → {new} → {old}: cast to {new} here{where}; the ops "
                                  f"between compute in {new}"))
        elif half_graph and new == "f32":
            found.append(_finding(DTYPE_CAST.category, index, node,
                                  f"upcast {old} → f32 in a graph whose inputs are all {old}"))
    return found


def _layout_findings(index: int, graph: GraphKernels) -> list[KernelFinding]:
    """A generated kernel that only moves memory (a permute copied into a new layout) for a
    large tensor: at the user's line of its permute (or transpose)."""
    by_name = {n.name: n for n in graph.nodes}
    found = []
    for kernel in graph.kernels:
        ops = {op.removeprefix("aten.").split(".")[0] for op in kernel.aten_ops}
        if kernel.kind != "fused" or not ops & {"permute", "transpose"} or ops - MOVES:
            continue
        nodes = [by_name[n] for n in kernel.graph_nodes if n in by_name]
        size = max((_numel(n) or 0 for n in nodes), default=0)
        if size < LARGE_ELEMENTS:
            continue
        moved = next((n for n in nodes if n.op in TRANSPOSES), nodes[0] if nodes else None)
        if moved is None:
            continue
        after = [n.op.lstrip(".") for n in nodes if n.op not in TRANSPOSES]
        why = f" for `{after[0]}`" if after else ""
        found.append(_finding(LAYOUT_COPY.category, index, moved,
                              f"kernel {kernel.name} only copies {size:,} elements from "
                              f"`{moved.op.lstrip('.')}` into a new layout{why}",
                              kernel=kernel.name))
    return found


def _consumers(graph: GraphKernels) -> dict[str, list[IRNode]]:
    """Each node's readers, looking through views (a view reads no memory)."""
    direct: dict[str, list[IRNode]] = {}
    for node in graph.nodes:
        for name in node.inputs:
            direct.setdefault(name, []).append(node)

    def through(name: str, depth: int = 0) -> list[IRNode]:
        found = []
        for reader in direct.get(name, []):
            if reader.op in VIEWS and depth < 8:
                found.extend(through(reader.name, depth + 1))
            else:
                found.append(reader)
        return found

    return {node.name: through(node.name) for node in graph.nodes}


def _materialized(node: IRNode, readers: list[IRNode]) -> bool:
    """Written to memory: a reader runs in another kernel (or the graph returns it)."""
    own = set(node.kernels)
    return bool(own) and any(r.op == "output" or (r.kernels and not own & set(r.kernels))
                             for r in readers)


def _broadcast_findings(index: int, graph: GraphKernels) -> list[KernelFinding]:
    by_name = {n.name: n for n in graph.nodes}
    readers = _consumers(graph)
    found = []
    for node in graph.nodes:
        size = _numel(node)
        if node.op not in POINTWISE or size is None or size < LARGE_ELEMENTS:
            continue
        outside = [r for r in readers.get(node.name, []) if r.op != "output"]
        if not _materialized(node, outside):  # fused into its readers, or the graph's result
            continue
        sizes = [_numel(by_name[n]) for n in node.inputs if n in by_name and
                 by_name[n].shape is not None]
        if len(sizes) >= 2 and all(s is not None and s * BROADCAST_GROWTH <= size for s in sizes):
            shapes = " and ".join(str(by_name[n].shape) for n in node.inputs if n in by_name)
            found.append(_finding(BROADCAST.category, index, node,
                                  f"`{node.op.lstrip('.')}` broadcasts {shapes} to "
                                  f"{node.shape} ({size:,} elements) and writes it to memory "
                                  f"for kernel {next(iter(r.kernels[0] for r in outside if r.kernels), '?')}"))
    return found


def graph_findings(index: int, graph: GraphKernels) -> list[KernelFinding]:
    """Every kernel rule seen in one graph, in graph order within each rule."""
    found = [KernelFinding(rule=FALLBACK.id, category=FALLBACK.category,
                           graph=index, file=f.file, line=f.line,
                           message=f"`{f.op}` has no Inductor lowering: it runs as an ATen "
                                   "call, and nothing fuses across it",
                           kernel=next((k.name for k in graph.kernels
                                        if k.kind == "fallback" and k.op == f.op), None))
             for f in graph.fallbacks]
    found += _dtype_findings(index, graph)
    found += _layout_findings(index, graph)
    found += _broadcast_findings(index, graph)
    found += [_finding(HOST_SYNC_IN_GRAPH.category, index, n,
                       f"`{n.op.lstrip('.')}` reads a value on the host inside the graph")
              for n in graph.nodes if n.op in SYNC_OPS]
    return found


# ATen op names (overload dropped) that make a fusion stop something the user can change.
STOP_CASTS = {"prims.convert_element_type", "aten._to_copy"}
STOP_LAYOUTS = {"aten.permute", "aten.transpose", "aten.clone", "aten.t", "aten.copy"}
# Reasons that say the two sides never could share a kernel: nothing to act on.
NOT_ACTIONABLE = ("no shared data",)


def fusion_stop_kind(stop: FusionStop) -> str | None:
    """"cast", "layout" or "reduction" when a cast, a layout copy or a reduction on one side of
    Inductor's "cannot fuse" is what keeps two kernels apart (a user can move or remove it);
    None otherwise."""
    if any(stop.reason.startswith(r) for r in NOT_ACTIONABLE):
        return None
    ops = {op.rsplit(".", 1)[0] if op.count(".") >= 2 else op
           for op in stop.first_ops + stop.second_ops}
    if ops & STOP_CASTS:
        return "cast"
    if ops & STOP_LAYOUTS:
        return "layout"
    if "reduction" in ops:
        return "reduction"
    return None


def actionable_stops(graph: GraphKernels) -> list[FusionStop]:
    """The fusion stops a user can act on, one per pair of lines and reason."""
    seen, found = set(), []
    for stop in graph.fusion_stops:
        key = (tuple(stop.first_lines), tuple(stop.second_lines), stop.reason)
        if stop.kind is not None and key not in seen and stop.first_lines and stop.second_lines:
            seen.add(key)
            found.append(stop)
    return found


def kernels_per_call(result: ScanResult) -> float | None:
    """Kernels launched per model call: each graph's kernels times its calls per call (None
    when a graph's kernels or its run-time count is missing)."""
    total = 0.0
    for info in result.graphs:
        if info.inductor is None or info.inductor.error is not None or \
                info.calls_per_call is None:
            return None
        total += len(info.inductor.kernels) * info.calls_per_call
    return round(total, 3)


def region_kernels(result: ScanResult, graph_calls: list[dict[int, int]]) -> None:
    """``breakscan run``: each region's kernels launched per call of it (each graph's kernels
    times its calls in the region, over the region's calls; ``graph_calls`` per region, by
    graph index); the summary's is the worst region's, as for graph calls per call."""
    if result.program is None:
        return
    kernels = {info.index: len(info.inductor.kernels) for info in result.graphs
               if info.inductor is not None and info.inductor.error is None}
    worst: list[float] = []
    for region, counts in zip(result.program.regions, graph_calls):
        if not region.calls or any(index not in kernels for index in counts):
            continue
        region.kernels_per_call = round(
            sum(kernels[index] * n for index, n in counts.items()) / region.calls, 3)
        worst.append(region.kernels_per_call)
    complete = len(worst) == sum(bool(r.calls) for r in result.program.regions)
    # No region called: nothing compiled ran, 0 kernels is a measurement.
    result.summary.kernels_per_call = max(worst, default=0.0) if complete else None


def kernel_findings(result: ScanResult) -> list[KernelFinding]:
    """The kernel rules over every graph, one finding per (rule, line) and graph."""
    found: list[KernelFinding] = []
    seen: set[tuple[str, int, str | None, int | None]] = set()
    for info in result.graphs:
        if info.inductor is None:
            continue
        for finding in graph_findings(info.index, info.inductor):
            key = (finding.rule, finding.graph, finding.file, finding.line)
            if key not in seen:
                seen.add(key)
                found.append(finding)
    return found
