"""What compiled, as records: explain's counts, each FX graph's ops, lines and input shapes,
and each compiled frame (bytecode-hook events joined with compilation metrics).

Reads the graph modules explain returned by duck typing, so no torch is imported here.
"""

from __future__ import annotations

from typing import Any

from ..frames import Frame, parse_stack
from ..messages import resume_line, split_reason
from ..model.raw import RawCapture
from ..model.records import CompiledFrame, ExplainCounts, GraphInfo


def explain_counts(explain: Any, error: str | None) -> ExplainCounts:
    """explain's own numbers and break reasons (unavailable, with its error, when it failed)."""
    if explain is None:
        return ExplainCounts(available=False, error=error)
    reasons = []
    for reason in explain.break_reasons:
        stack = [Frame(f.filename, f.lineno, f.name, (f.line or "").strip())
                 for f in (reason.user_stack or [])]
        reasons.append({"reason": reason.reason, "user_stack": stack})
    return ExplainCounts(available=True, graph_count=explain.graph_count,
                         graph_break_count=explain.graph_break_count, op_count=explain.op_count,
                         break_reasons=reasons, error=error)


def _target_name(target: Any) -> str:
    name = getattr(target, "__name__", None) or getattr(target, "_name", None)
    if isinstance(target, str):
        return target
    if name:
        return str(name)
    text = str(target)
    return text.replace("torch.ops.", "").replace("<built-in function ", "").rstrip(">")


def graph_info(index: int, gm: Any) -> GraphInfo:
    """One graph module's ops, the source lines they came from, its input shapes and the break
    that ended it."""
    ops: list[str] = []
    calls = 0
    lines: list[str] = []
    shapes: list[list[int | str] | None] = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            value = node.meta.get("example_value")
            # A dynamic dimension is a SymInt: keep its symbol ("s0") as plain text.
            shape = getattr(value, "shape", None)  # a tensor's (a graph module means torch)
            shapes.append([d if isinstance(d, int) else str(d) for d in shape]
                          if shape is not None else None)
            continue
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        calls += node.op == "call_function"
        prefix = "." if node.op == "call_method" else ""
        ops.append(prefix + _target_name(node.target))
        found = parse_stack(node.meta.get("stack_trace") or "")
        if found:
            loc = found[-1].location()
            if loc not in lines:
                lines.append(loc)
    reason = getattr(gm, "compile_subgraph_reason", None)
    break_reason = None
    if reason is not None and getattr(reason, "graph_break", False):
        break_reason = split_reason(reason.reason)["gb_type"]
    meta = getattr(gm, "meta", {}) or {}
    compile_id = meta.get("dynamo_compile_id")
    return GraphInfo(index=index, compile_id=str(compile_id) if compile_id is not None else None,
                     op_count=len(ops), call_function_count=calls, ops=ops, source_lines=lines,
                     input_shapes=shapes, break_reason=break_reason)


def compiled_frames(raw: RawCapture) -> list[CompiledFrame]:
    """Join bytecode-hook events and compilation metrics by compile id."""
    frames: dict[str, CompiledFrame] = {}
    order: list[CompiledFrame] = []
    for event in raw.code_events:
        line = resume_line(event.name)
        frame = CompiledFrame(compile_id=event.compile_id, name=event.name, file=event.file,
                              first_line=event.first_line, is_resume=line is not None,
                              resume_line=line, graph_op_count=None)
        order.append(frame)
        if event.compile_id:
            frames[event.compile_id] = frame
    for metric in raw.metrics:
        frame = frames.get(metric.compile_id or "")
        if frame is None:
            name = metric.name or "?"
            line = resume_line(name)
            frame = CompiledFrame(compile_id=metric.compile_id, name=name, file=metric.file or "",
                                  first_line=metric.first_line or 0, is_resume=line is not None,
                                  resume_line=line, graph_op_count=None)
            order.append(frame)
        frame.graph_op_count = metric.graph_op_count
        if metric.fail_type:
            frame.skipped = True
            frame.fail_type = metric.fail_type
            frame.fail_reason = (metric.fail_reason or "").strip().splitlines()[0] \
                if metric.fail_reason else None
            frame.fail_file, frame.fail_line = metric.fail_file, metric.fail_line
    return order
