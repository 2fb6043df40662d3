"""Stage 3 — analyse: reconcile explain's view with the raw records into root-cause breaks.

One break in the source can appear as several log records, several explain reasons and several
extra graphs (a break in a nested submodule cuts every enclosing frame). A *root-cause break* is
one source location; its ``records``/``explain_reasons``/``resume_functions`` say how many times
Dynamo reported or split on it. Where explain's numbers differ from breakscan's, a
:class:`Discrepancy` states both and why.
"""

from __future__ import annotations

import linecache
import os
import re
import site
import sys
import sysconfig
from typing import Any

import torch

from . import categories
from .breaklog import parse_break_message, split_reason
from .capture import RawCapture
from .result import (BreakRecord, CompiledFrame, Discrepancy, ExplainCounts, Frame, GraphInfo,
                     RootBreak, Summary)

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_RESUME = re.compile(r"torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")
_STACK_LINE = re.compile(r'File "(?P<file>.+)", line (?P<line>\d+)')
_OWNER_RANK = {"user": 0, "third_party": 1, "torch": 2}


def _library_dirs() -> tuple[str, ...]:
    dirs = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    with_site = set(getattr(site, "getsitepackages", lambda: [])())
    user_site = getattr(site, "getusersitepackages", lambda: None)()
    dirs |= with_site | ({user_site} if user_site else set())
    return tuple(sorted(os.path.abspath(d) + os.sep for d in dirs if d))


_LIBRARY_DIRS = _library_dirs()


def is_torch_file(path: str) -> bool:
    return os.path.abspath(path).startswith(_TORCH_DIR)


def owner_of(path: str) -> str:
    """``torch`` for torch's own files, ``third_party`` for installed packages, else ``user``."""
    full = os.path.abspath(path)
    if full.startswith(_TORCH_DIR):
        return "torch"
    if "site-packages" in full.split(os.sep) or "dist-packages" in full.split(os.sep) \
            or full.startswith(_LIBRARY_DIRS) or path.startswith("<frozen"):
        return "third_party"
    return "user"


def model_stack(stack: list[Frame]) -> list[Frame]:
    """The part of a Dynamo user stack that belongs to the model.

    Dynamo prepends the frames above the compiled call (breakscan, the CLI, pytest…); cut after
    breakscan's own last frame and drop torch's ``nn.Module`` call machinery.
    """
    start = 0
    for idx, frame in enumerate(stack):
        if os.path.abspath(frame.file).startswith(_OWN_DIR):
            start = idx + 1
    tail = stack[start:]
    return [f for f in tail if not (is_torch_file(f.file) and f.function in
                                    ("_call_impl", "_wrapped_call_impl", "__call__"))]


def _source(file: str, line: int, fallback: str = "") -> str:
    text = linecache.getline(file, line).strip()
    return text or fallback


def _root_frame(chain: list[Frame]) -> Frame | None:
    for frame in reversed(chain):
        if not is_torch_file(frame.file):
            return frame
    return None


def _owner(chain: list[Frame], root: Frame) -> str:
    innermost = chain[-1] if chain else root
    if is_torch_file(innermost.file) and "polyfills" not in innermost.file:
        return "torch"
    return owner_of(root.file)


class _Roots:
    """Root-cause breaks keyed by source location, in first-seen order."""

    def __init__(self) -> None:
        self.items: list[RootBreak] = []

    def find(self, file: str, line: int) -> RootBreak | None:
        for item in self.items:
            if item.file == file and item.line == line:
                return item
        for item in self.items:  # a frame further up the chain (duplicate/short records)
            if any(f.file == file and f.line == line for f in item.call_chain):
                return item
        return None

    def add(self, *, chain: list[Frame], gb_id: str | None, gb_type: str, explanation: str,
            hints: list[str], context: str, source: str, file: str, line: int,
            function: str, code: str) -> RootBreak:
        category = categories.categorize(gb_id, gb_type, explanation, context)
        root_frame = Frame(file, line, function, code)
        item = RootBreak(
            owner=_owner(chain, root_frame), category=category, gb_id=gb_id, gb_type=gb_type,
            file=file, line=line, code=_source(file, line, code), function=function,
            call_chain=chain, explanation=explanation, hints=list(hints),
            suggestion=categories.CATEGORIES[category].suggestion,
            doc_url=categories.registry_url(gb_id), records=0, explain_reasons=0,
            resume_functions=[], sources=[source])
        self.items.append(item)
        return item


def _record_location(record: BreakRecord) -> tuple[list[Frame], Frame | None]:
    chain = model_stack(record.user_stack)
    root = _root_frame(chain)
    if root is None and record.header_file and record.header_line:
        root = Frame(record.header_file, record.header_line, "", "")
    return chain, root


def _mark_skipped(item: RootBreak, wrapper_gb_id: str | None) -> None:
    if item.category != "frame_skipped":
        item.cause_category = item.category
        item.category = "frame_skipped"
        cause = categories.CATEGORIES[item.cause_category]
        item.suggestion = (categories.CATEGORIES["frame_skipped"].suggestion
                           + f" The break itself is a {item.cause_category} break: "
                           + cause.suggestion)
    item.frame_skipped = True
    item.wrapper_gb_id = item.wrapper_gb_id or wrapper_gb_id


def explain_counts(explain: Any, error: str | None) -> ExplainCounts:
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
    ops: list[str] = []
    calls = 0
    lines: list[str] = []
    shapes: list[list[int | str] | None] = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            value = node.meta.get("example_value")
            # A dynamic dimension is a SymInt: keep its symbol ("s0") as plain text.
            shapes.append([d if isinstance(d, int) else str(d) for d in value.shape]
                          if isinstance(value, torch.Tensor) else None)
            continue
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        calls += node.op == "call_function"
        prefix = "." if node.op == "call_method" else ""
        ops.append(prefix + _target_name(node.target))
        found = _STACK_LINE.findall(node.meta.get("stack_trace") or "")
        if found:
            loc = f"{found[-1][0]}:{found[-1][1]}"
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
        m = _RESUME.match(event.name)
        frame = CompiledFrame(compile_id=event.compile_id, name=event.name, file=event.file,
                              first_line=event.first_line, is_resume=bool(m),
                              resume_line=int(m.group("line")) if m else None, graph_op_count=None)
        order.append(frame)
        if event.compile_id:
            frames[event.compile_id] = frame
    for metric in raw.metrics:
        frame = frames.get(metric.compile_id or "")
        if frame is None:
            name = metric.name or "?"
            m = _RESUME.match(name)
            frame = CompiledFrame(compile_id=metric.compile_id, name=name, file=metric.file or "",
                                  first_line=metric.first_line or 0, is_resume=bool(m),
                                  resume_line=int(m.group("line")) if m else None,
                                  graph_op_count=None)
            order.append(frame)
        frame.graph_op_count = metric.graph_op_count
        if metric.fail_type:
            frame.skipped = True
            frame.fail_type = metric.fail_type
            frame.fail_reason = (metric.fail_reason or "").strip().splitlines()[0] \
                if metric.fail_reason else None
            frame.fail_file, frame.fail_line = metric.fail_file, metric.fail_line
    return order


def analyse(raw: RawCapture) -> tuple[Summary, ExplainCounts, list[GraphInfo], list[RootBreak],
                                      list[CompiledFrame], list[Discrepancy]]:
    explain = explain_counts(raw.explain, raw.explain_error)
    graphs = [graph_info(i, gm) for i, gm in enumerate(raw.explain.graphs if raw.explain else [])]
    records = [r for r in (parse_break_message(t) for t in raw.graph_break_logs) if r]
    roots = _Roots()

    for record in records:
        chain, frame = _record_location(record)
        if frame is None:
            continue
        item = roots.find(frame.file, frame.line)
        if item is None:
            item = roots.add(chain=chain, gb_id=record.gb_id, gb_type=record.gb_type,
                             explanation=record.explanation, hints=record.hints,
                             context=record.context, source="log", file=frame.file,
                             line=frame.line, function=frame.function, code=frame.code)
        elif not item.call_chain and chain:
            item.call_chain = chain
        item.records += 1
        if record.frame_skipped:
            _mark_skipped(item, record.wrapper_gb_id)

    for reason in explain.break_reasons:
        chain = model_stack(reason["user_stack"])
        frame = _root_frame(chain)
        if frame is None:
            continue
        item = roots.find(frame.file, frame.line)
        if item is None:
            parts = split_reason(reason["reason"])
            item = roots.add(chain=chain, gb_id=parts["gb_id"], gb_type=parts["gb_type"],
                             explanation=parts["explanation"], hints=parts["hints"], context="",
                             source="explain", file=frame.file, line=frame.line,
                             function=frame.function, code=frame.code)
        else:
            if "explain" not in item.sources:
                item.sources.append("explain")
            if len(chain) > len(item.call_chain):  # a submodule's log record omits outer frames
                item.call_chain = chain
        item.explain_reasons += 1

    frames = compiled_frames(raw)
    for frame in frames:
        if frame.skipped and frame.fail_file and frame.fail_line:
            item = roots.find(frame.fail_file, frame.fail_line)
            if item is None:
                reason = frame.fail_reason or frame.fail_type or "frame skipped"
                item = roots.add(chain=[Frame(frame.fail_file, frame.fail_line, frame.name)],
                                 gb_id=None, gb_type=reason, explanation=reason, hints=[],
                                 context="", source="metrics", file=frame.fail_file,
                                 line=frame.fail_line, function=frame.name, code="")
            elif "metrics" not in item.sources:
                item.sources.append("metrics")
            _mark_skipped(item, None)

    for frame in frames:
        if frame.is_resume and frame.resume_line is not None:
            for idx, item in enumerate(roots.items):
                if any(f.file == frame.file and f.line == frame.resume_line
                       for f in item.call_chain or [Frame(item.file, item.line, "")]):
                    item.resume_functions.append(frame.name)
                    frame.break_index = idx
                    break

    ordered = sorted(roots.items, key=lambda b: (_OWNER_RANK.get(b.owner, 3), not b.frame_skipped,
                                                 -b.graph_splits, b.file, b.line))
    for frame in frames:
        if frame.break_index is not None:
            frame.break_index = ordered.index(roots.items[frame.break_index])

    skipped = sum(1 for f in frames if f.skipped)
    if not raw.metrics:
        skipped = sum(1 for b in ordered if b.frame_skipped)
    summary = Summary(graph_count=len(graphs), graph_break_count=len(ordered),
                      break_records=len(records) if raw.graph_break_logs or records
                      else sum(b.explain_reasons for b in ordered),
                      op_count=sum(g.op_count for g in graphs), frames_skipped=skipped)
    return summary, explain, graphs, ordered, frames, discrepancies(summary, explain, ordered,
                                                                    graphs)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def discrepancies(summary: Summary, explain: ExplainCounts, breaks: list[RootBreak],
                  graphs: list[GraphInfo]) -> list[Discrepancy]:
    """Where explain and breakscan disagree, both numbers and the facts that explain the gap."""
    if not explain.available:
        return [Discrepancy("explain", None, summary.graph_break_count,
                            f"torch._dynamo.explain failed ({explain.error}); all numbers come "
                            "from breakscan's own capture")]
    out: list[Discrepancy] = []
    if explain.graph_break_count != summary.graph_break_count:
        why = [f"explain's graph_break_count is graph_count - 1 = {explain.graph_count} - 1 "
               f"(graph boundaries, not break sites); breakscan counts "
               f"{_plural(summary.graph_break_count, 'root-cause break')} (unique source "
               f"locations) from {_plural(summary.break_records, 'break record')}"]
        for b in breaks:
            loc = f"{os.path.basename(b.file)}:{b.line}"
            if b.frame_skipped:
                why.append(f"{loc} made Dynamo skip the frame {b.function}() (it ran eagerly), "
                           "so explain sees no graph for it")
            elif b.explain_reasons == 0:
                why.append(f"{loc} is invisible to explain (a break before the first tensor op "
                           "leaves no graph to end)")
            elif b.explain_reasons > 1 or b.records > 1:
                frames = " -> ".join(f"{f.function}() at {os.path.basename(f.file)}:{f.line}"
                                    for f in b.call_chain) or b.function
                why.append(f"{loc} cuts {_plural(max(b.records, b.explain_reasons), 'frame')} "
                           f"({frames}): each enclosing frame adds graphs")
            elif not b.resume_functions:
                why.append(f"{loc} is a trailing break: the rest of the frame runs eagerly, so "
                           "no graph follows it")
        out.append(Discrepancy("graph_break_count", explain.graph_break_count,
                               summary.graph_break_count, "; ".join(why)))
    if len(explain.break_reasons) != summary.break_records:
        out.append(Discrepancy(
            "break_reasons", len(explain.break_reasons), summary.break_records,
            "explain lists a reason only for breaks that ended a graph it kept; the graph_breaks "
            "log also records leading breaks, skipped frames and each nested frame's split"))
    if explain.op_count != summary.op_count:
        methods = sum(g.op_count - g.call_function_count for g in graphs)
        names = sorted({op for g in graphs for op in g.ops if op.startswith(".")})
        examples = ", ".join(f"x{n}()" for n in names[:4])
        out.append(Discrepancy(
            "op_count", explain.op_count, summary.op_count,
            f"explain counts only call_function nodes; breakscan also counts "
            f"{_plural(methods, 'call_method/call_module node')}"
            + (f" (here: {examples})" if examples else "")))
    return out


def python_version() -> str:
    return sys.version.split()[0]
