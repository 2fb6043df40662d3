"""Stage 3 — analyse: reconcile explain's view with the raw records into root-cause breaks.

One break in the source can appear as several log records, several explain reasons and several
extra graphs (a break in a nested submodule cuts every enclosing frame). A *root-cause break* is
one source location; its ``records``/``explain_reasons``/``resume_functions`` say how many times
Dynamo reported or split on it. Where explain's numbers differ from breakscan's, a
:class:`Discrepancy` states both and why.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import sys
from typing import Any

from . import categories
from .breaklog import RESUME_PREFIX, parse_break_message, split_reason
from ..frames import (acting_frame, is_torch_file, model_stack, module_ast, owner_of, parse_stack,
                     provenance_frame, source_line, user_frame)
from ..result import (BreakRecord, CompiledFrame, CompileError, Discrepancy, ExplainCounts, Frame,
                     GraphInfo, ModuleConstant, RawCapture, RawFailure, RootBreak,
                     Summary)

_RESUME = re.compile(rf"{RESUME_PREFIX}(?P<fn>.+)_at_(?P<line>\d+)$")
OWNER_RANK = {"user": 0, "third_party": 1, "torch": 2}  # the user's own breaks first


def _source(file: str, line: int, fallback: str = "") -> str:
    text = source_line(file, line).strip()
    return text or fallback


class _Roots:
    """Root-cause breaks keyed by source location, in first-seen order."""

    def __init__(self) -> None:
        self.items: list[RootBreak] = []

    def find(self, file: str, line: int, category: str | None = None) -> RootBreak | None:
        """The root at ``file:line``; given a record's ``category``, another category on the
        same line is a different break (``.item()`` and ``.tolist()`` in one expression)."""
        for item in self.items:
            if item.file == file and item.line == line and (
                    category in (None, "other") or
                    (item.cause_category or item.category) in (category, "other")):
                return item
        if any(item.file == file and item.line == line for item in self.items):
            return None
        for item in self.items:  # a frame further up the chain (duplicate/short records)
            if any(f.file == file and f.line == line for f in item.call_chain):
                return item
        return None

    def add(self, *, chain: list[Frame], gb_id: str | None, gb_type: str, explanation: str,
            hints: list[str], context: str, source: str, file: str, line: int,
            function: str, code: str) -> RootBreak:
        category = categories.categorize(gb_id, gb_type, explanation, context,
                                         _source(file, line, code))
        owner = owner_of(file)
        item = RootBreak(
            owner=owner, category=category, gb_id=gb_id, gb_type=gb_type,
            file=file, line=line, code=_source(file, line, code), function=function,
            call_chain=chain, explanation=explanation, hints=list(hints),
            suggestion=categories.CATEGORIES[category].suggestion,
            doc_url=categories.registry_url(gb_id), records=0, explain_reasons=0,
            resume_functions=[], sources=[source])
        self.items.append(item)
        return item


def _record_location(record: BreakRecord) -> tuple[list[Frame], Frame | None]:
    chain = model_stack(record.user_stack)
    root = acting_frame(chain)
    if root is None and record.header_file and record.header_line:
        root = Frame(record.header_file, record.header_line, "", "")
    return chain, root


_SKIPPED_FRAME = re.compile(r"frame skipped: (?P<fn>\S+) \((?P<file>.+) line (?P<line>\d+)\)")


def _enclosing_block(file: str, line: int) -> str | None:
    """``try`` or ``with`` when ``line`` sits inside such a block of its function, else None."""
    tree = module_ast(file)
    if tree is None:
        return None
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(b.lineno <= line <= (b.end_lineno or b.lineno)
                                             for b in node.body):
            found = "try"
        elif isinstance(node, ast.With) and node.lineno < line <= (node.end_lineno or 0) \
                and found is None:
            found = "with"
    return found


def _mark_skipped(item: RootBreak, record: BreakRecord | None,
                  metric: CompiledFrame | None = None) -> None:
    """Record how Dynamo fell back to eager at this break, in the words of its own cause."""
    kind = record.skip_kind if record is not None else "metrics"
    where = _SKIPPED_FRAME.search(record.raw) if record is not None else None
    fn = where.group("fn") if where else (metric.name if metric else item.function)
    fn = _RESUME.sub(lambda m: m.group("fn"), fn or "the function") + "()"
    if where and (where.group("file"), int(where.group("line"))) != (item.file, item.line):
        fn += f" ({os.path.basename(where.group('file'))}:{where.group('line')})"
    if kind == "rest_of_frame":
        # Not a skipped frame: the function is compiled up to the break and the rest of it runs
        # eagerly. The summary's "frames skipped" (Dynamo's own metrics) does not count it.
        item.skip_cause = (f"Dynamo cannot resume after this break: it compiled {fn} up to the "
                           "last resumable point before it and ran the rest of the function "
                           "eagerly")
        item.skip_kind = kind
        return
    if kind == "loop":
        cause = (f"the break is inside a for/while loop, where Dynamo cannot resume: it skipped "
                 f"the whole function {fn}, which ran eagerly")
    elif kind == "metrics":
        reason = (metric.fail_reason or metric.fail_type or "") if metric else ""
        cause = f"Dynamo skipped the whole function {fn} and ran it eagerly: {reason}".rstrip(": ")
    else:
        block = _enclosing_block(item.file, item.line)
        inside = {"try": " (the break is inside a try block)",
                  "with": " (the break is inside a with block)"}.get(block or "", "")
        cause = (f"Dynamo could not resume from this break{inside}: it skipped the whole "
                 f"function {fn}, which ran eagerly")
    item.skip_cause = cause
    item.skip_kind = kind
    if item.category != "frame_skipped":
        item.cause_category = item.category
        item.category = "frame_skipped"
    item.frame_skipped = True
    if record is not None:
        item.wrapper_gb_id = item.wrapper_gb_id or record.wrapper_gb_id


def _name_skipped_frames(items: list[RootBreak], frames: list[CompiledFrame]) -> None:
    """Name the functions a non-resumable break made Dynamo skip, from its compilation metrics.

    The log says only "Skipping the function"; the metrics rows say which functions fell back
    (often wrappers above the break: a decorator whose call sits in a try block).
    """
    for item in items:
        if item.skip_kind != "whole_frame":
            continue
        skipped = [f for f in frames if f.skipped and (f.fail_file, f.fail_line) ==
                   (item.file, item.line)]
        if not skipped:
            continue
        names = ", ".join(f"{_RESUME.sub(lambda m: m.group('fn'), f.name)}() "
                          f"({os.path.basename(f.file)}:{f.first_line})" for f in skipped)
        blocks = []
        for f in skipped:  # where the skipped function's own line on the way sits in a block
            for frame in item.call_chain:
                if frame.file == f.file and frame.function == f.name:
                    block = _enclosing_block(frame.file, frame.line)
                    if block:
                        blocks.append(f"{os.path.basename(frame.file)}:{frame.line} is inside "
                                      f"a {block} block")
        inside = f" ({'; '.join(blocks)})" if blocks else ""
        item.skip_cause = (f"Dynamo could not resume from this break{inside}: it skipped "
                           f"{names}, which ran eagerly")


_GENERIC_HINTS = ("report an issue", "file an issue", "unlikely that Dynamo will ever",
                  "graph break is fundamental", "Dynamo bug")


_DISABLED_FN = re.compile(r"function `?<function (?P<name>[\w.<>]+) at")


def disabled_function(item: RootBreak) -> Frame | None:
    """The ``torch.compiler.disable``d function a break calls, where it is defined: Dynamo names
    it in the explanation; its definition is looked up in the files on the break's path."""
    m = _DISABLED_FN.search(item.explanation or "")
    if m is None:
        return None
    qualname = m.group("name")
    path = [p for p in qualname.split(".") if p != "<locals>"]
    files = dict.fromkeys([item.file] + [f.file for f in reversed(item.call_chain)])
    for exact in (True, False):  # Block.forward, not the first `forward` of the file
        for file in files:
            tree = module_ast(file)
            node = _defined(tree, path) if exact and tree is not None else None
            if not exact and tree is not None:
                node = next((n for n in ast.walk(tree) if isinstance(
                    n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == path[-1]), None)
            if node is not None:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                return Frame(file, first, qualname, _source(file, first))
    return Frame("", 0, qualname)


def _defined(scope: ast.AST, path: list[str]) -> ast.AST | None:
    """The class or function ``a.b.c`` defined in ``scope`` (nested functions skipped over)."""
    if not path:
        return scope
    for node in ast.walk(scope):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == path[0] and node is not scope:
            found = _defined(node, path[1:])
            if found is not None:
                return found
    return None


def _disabled_advice(item: RootBreak) -> str:
    fn = disabled_function(item)
    if fn is None:
        return categories.CATEGORIES["disabled_call"].suggestion
    where = f" ({os.path.basename(fn.file)}:{fn.line})" if fn.file else ""
    if fn.file and is_torch_file(fn.file):
        return (f"`{fn.function}()`{where} is disabled by torch itself, on purpose: it runs "
                "eagerly by design. Keep the call outside the compiled function, or accept the "
                "split.")
    return (f"`{fn.function}()`{where} is decorated with `torch.compiler.disable`: it runs "
            "eagerly by design. Narrow the decorator to the part that cannot be traced, or "
            "remove it.")


def advice(item: RootBreak) -> str:
    """What the reader can do about this break: never a pointer to text that is not there."""
    category = item.root_category
    parts: list[str] = []
    if item.frame_skipped:
        block = _enclosing_block(item.file, item.line) if item.skip_kind == "whole_frame" \
            else None
        if item.skip_kind == "loop":
            parts.append("Move the breaking call out of the loop (or fix it, below) so the "
                         "function compiles again.")
        elif block:
            parts.append(f"Move the breaking call out of the {block} block (or fix it, below) "
                         "so the function compiles again.")
        else:
            parts.append("Fix the break itself (below) so Dynamo can trace the function again.")
    inside = item.call_chain[-1] if item.call_chain else None
    if category == "tensor_constant" and item.constants:
        names = ", ".join(f"self.{c.attr}" for c in item.constants)
        where = ", ".join(sorted({f"{os.path.basename(c.file)}:{c.line}" for c in item.constants}))
        parts.append(f"A constant kept in a tensor: {names} of {item.constants[0].cls} "
                     f"(created at {where}) hold fixed values, and each of the "
                     f"{len(item.sites)} use(s) needs them on the host. Store them as Python "
                     "ints/floats" + (" where they are created." if item.owner == "user" else
                                      ": without editing the library, after building the "
                                      "model run:\n" + constant_patch(item)))
        return " ".join(parts)
    if category == "disabled_call":
        parts.append(_disabled_advice(item))
    elif category == "explicit_break" and inside is not None and is_torch_file(inside.file):
        # torch.optim's step() calls graph_break() itself (to keep no_grad for AOT autograd).
        parts.append(f"torch itself calls `torch._dynamo.graph_break()` here (in "
                     f"{inside.function}() of {os.path.basename(inside.file)}:{inside.line}), "
                     "on purpose: nothing in your code to remove. Keep the call outside the "
                     "compiled function (compile the model, run this step eagerly), or accept "
                     "the split and its returns to Python.")
    elif category != "other":
        parts.append(categories.CATEGORIES[category].suggestion)
    else:
        useful = [h for h in item.hints if not any(g in h for g in _GENERIC_HINTS)]
        if useful:
            parts.append(f"Dynamo's hint: {useful[0].rstrip('.')}.")
        elif item.explanation:
            parts.append(f"Dynamo: {item.explanation.splitlines()[0].rstrip('.')}.")
        elif item.gb_type == "step_unsupported":
            # explain's reason when Dynamo restarted after a failure further on and ended the
            # graph at the last instruction it can resume from (symbolic_convert.step).
            parts.append(f"Dynamo ended the graph at {os.path.basename(item.file)}:{item.line} "
                         f"`{item.code}`, the last point in {item.function}() it can resume "
                         "from, because tracing further on failed (for a `with` statement: a "
                         "break inside its block); the break that failed is listed separately "
                         "when Dynamo logged one.")
        else:
            parts.append(f"Dynamo gives no reason beyond `{item.gb_type}`: it could not step "
                         f"the instruction at {os.path.basename(item.file)}:{item.line} "
                         f"`{item.code}` and ended the graph it was building there.")
    if item.sites and re.search(r"\b(np|numpy)\.", item.code):
        parts.insert(0, f"The tested value comes from NumPy at {os.path.basename(item.file)}:"
                        f"{item.line}, which Dynamo traces as a tensor: compute it with plain "
                        "Python (e.g. the `math` module) when it does not depend on tensor data.")
    elif item.sites:
        parts.insert(0, f"All {len(item.sites)} branch(es) test the value computed at "
                        f"{os.path.basename(item.file)}:{item.line}: make it a Python value "
                        "there if it does not depend on tensor data, or keep the branches as "
                        "tensor ops.")
    if item.owner != "user":
        if item.user_frame is not None:
            f = item.user_frame
            parts.append(f"Not your code: without editing the library, wrap your call at "
                         f"{os.path.basename(f.file)}:{f.line} (`{f.code}`) with "
                         "`torch.compiler.disable` (one explicit break instead of this one), "
                         "or change how you call it.")
        else:
            parts.append("Not your code: decorate the calling function with "
                         "`torch.compiler.disable` to keep it out of the compiled region.")
    elif category == "other":
        parts.append(f"If it cannot change, decorate {item.function or 'the function'}() with "
                     "`torch.compiler.disable` (one explicit break instead).")
    return " ".join(parts)


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


def break_at(breaks: list[RootBreak], file: str | None, line: int | None) -> int | None:
    """The index of the break at ``file:line``: the line is the break's, a site's, or a call on
    its chain (a nested break cuts every enclosing frame). A resume function at that line
    resumes after it; a frame whose compilation failed there was skipped because of it."""
    if not file or not line:
        return None
    # A break's own line first: another break's chain may pass through it (a hook called from
    # the line of a `loss.backward()` that breaks itself).
    for where in (lambda b: [Frame(b.file, b.line, "")], lambda b: b.sites,
                  lambda b: b.follow_on, lambda b: b.call_chain):
        for idx, item in enumerate(breaks):
            if any(f.file == file and f.line == line for f in where(item)):
                return idx
    return None


def resume_line(code_name: str) -> int | None:
    """The line a Dynamo resume function resumes at (``torch_dynamo_resume_in_fn_at_12``)."""
    m = _RESUME.match(code_name)
    return int(m.group("line")) if m else None


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


@dataclasses.dataclass
class Analysis:
    """What one capture comes to: the ScanResult fields this stage fills in."""

    summary: Summary
    explain: ExplainCounts
    graphs: list[GraphInfo]
    breaks: list[RootBreak]  # root causes, ranked
    frames: list[CompiledFrame]
    discrepancies: list[Discrepancy]  # where explain's numbers and breakscan's differ, and why


def analyse(raw: RawCapture) -> Analysis:
    """Reconcile explain's output and the raw records of one capture into root-cause breaks."""
    explain = explain_counts(raw.explain, raw.explain_error)
    graphs = [graph_info(i, gm) for i, gm in enumerate(raw.explain.graphs if raw.explain else [])]
    records = [r for r in (parse_break_message(t) for t in raw.graph_break_logs) if r]
    roots = _Roots()

    first_record: dict[int, BreakRecord] = {}
    for record in records:
        chain, frame = _record_location(record)
        if frame is None:
            continue
        item = roots.find(frame.file, frame.line, categories.categorize(
            record.gb_id, record.gb_type, record.explanation, record.context,
            _source(frame.file, frame.line, frame.code)))
        if item is None:
            item = roots.add(chain=chain, gb_id=record.gb_id, gb_type=record.gb_type,
                             explanation=record.explanation, hints=record.hints,
                             context=record.context, source="log", file=frame.file,
                             line=frame.line, function=frame.function, code=frame.code)
            first_record[id(item)] = record
        elif not item.call_chain and chain:
            item.call_chain = chain
        item.records += 1
        if record.skip_kind:
            _mark_skipped(item, record)

    for reason in explain.break_reasons:
        chain = model_stack(reason["user_stack"])
        frame = acting_frame(chain)
        if frame is None:
            continue
        parts = split_reason(reason["reason"])
        item = roots.find(frame.file, frame.line, categories.categorize(
            parts["gb_id"], parts["gb_type"], parts["explanation"], "",
            _source(frame.file, frame.line, frame.code)) if parts["gb_id"] else None)
        if item is None:
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
            if not item.frame_skipped:
                _mark_skipped(item, None, metric=frame)

    _name_skipped_frames(roots.items, frames)
    merge_origins(roots, first_record)
    fold_comprehensions(roots, frames)

    for frame in frames:
        if frame.is_resume and frame.resume_line is not None:
            idx = break_at(roots.items, frame.file, frame.resume_line)
            if idx is not None:
                roots.items[idx].resume_functions.append(frame.name)
                frame.break_index = idx

    for item in roots.items:
        item.user_frame = user_frame(item.call_chain) if item.owner != "user" else None
        item.suggestion = advice(item)
    ordered = sorted(roots.items, key=lambda b: (OWNER_RANK.get(b.owner, 3), not b.frame_skipped,
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
    return Analysis(summary=summary, explain=explain, graphs=graphs, breaks=ordered,
                    frames=frames, discrepancies=discrepancies(summary, explain, ordered, graphs,
                                                                frames))


COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _enclosing_function(file: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost ``def`` whose body holds ``line``."""
    tree = module_ast(file)
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def fold_comprehensions(roots: _Roots, frames: list[CompiledFrame]) -> None:
    """A comprehension that broke only because its parent was skipped is a follow-on, not a
    root cause.

    On Python 3.11 a comprehension is a code object of its own. When a break makes Dynamo skip
    the enclosing function, the comprehension runs as a frame of its own, Dynamo compiles it
    alone (a compiled frame named ``<dictcomp>``…), and it can break there (a live
    ``dict_keyiterator`` argument, GB4347) although it traces fine inlined in its parent. Such
    a break is folded into the break that made Dynamo skip the parent.
    """
    for item in list(roots.items):
        if item.function not in COMPREHENSIONS:
            continue
        alone = any(f.name == item.function and f.file == item.file and f.first_line ==
                    item.line for f in frames)
        parent = _enclosing_function(item.file, item.line)
        if not alone or parent is None:
            continue
        first = min([parent.lineno] + [d.lineno for d in parent.decorator_list])
        skipped = [f for f in frames if f.skipped and f.file == item.file and
                   f.name.rpartition(".")[2] == parent.name and first <= f.first_line <=
                   parent.lineno and f.fail_file and f.fail_line]
        cause = next((roots.find(f.fail_file, f.fail_line) for f in skipped
                      if roots.find(f.fail_file, f.fail_line) not in (None, item)), None)
        if cause is None:
            continue
        cause.follow_on.append(Frame(item.file, item.line, item.function, item.code))
        cause.records += item.records
        cause.explain_reasons += item.explain_reasons
        roots.items.remove(item)


def _assignment_span(file: str, function: str, name: str, before: int) -> tuple[int, int] | None:
    """Lines of the last assignment to ``name`` in ``function`` before line ``before``."""
    tree = module_ast(file)
    if tree is None:
        return None
    span = None
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != function \
                or not fn.lineno <= before <= (fn.end_lineno or 0):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and \
                    node.lineno < before and any(
                        isinstance(t, ast.Name) and t.id == name
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
                if span is None or node.lineno > span[0]:
                    span = (node.lineno, node.end_lineno or node.lineno)
    return span


def _origin(item: RootBreak, records: dict[int, BreakRecord], roots: _Roots,
            depth: int = 0) -> Frame | None:
    """Where the value a branch tests was computed, from Dynamo's provenance of the condition.

    The first provenance line is the origin. A value that crossed an earlier break arrives as a
    resume function's graph input: ``L_stack0_`` was on the stack at the break the resume
    function continues from; ``L_<name>_`` is the variable's last assignment before the branch.
    """
    record = records.get(id(item))
    if record is None or not record.provenance or depth > 4:
        return None
    first = record.provenance[0]
    if (first.file, first.line) != (item.file, item.line) and not is_torch_file(first.file):
        # The origin may itself be a branch on a value computed further back: follow it.
        at_origin = next((o for o in roots.items if o is not item and o.file == first.file
                          and o.line == first.line), None)
        earlier = _origin(at_origin, records, roots, depth + 1) if at_origin else None
        return earlier or Frame(first.file, first.line,
                                _RESUME.sub(lambda m: m.group("fn"), first.function),
                                _source(first.file, first.line, first.code))
    resumed = _RESUME.match(first.function)
    if not record.graph_inputs or resumed is None:
        return None
    function, at = resumed.group("fn"), int(resumed.group("line"))
    name = record.graph_inputs[0][2:-1]
    if re.fullmatch(r"stack\d+", name):
        span = (at, at)
    else:
        span = _assignment_span(item.file, function, name, item.line)
        if span is None:
            return None
    for other in roots.items:
        if other is not item and other.file == item.file and span[0] <= other.line <= span[1]:
            return _origin(other, records, roots, depth + 1) or \
                Frame(other.file, other.line, other.function, other.code)
    assigned = " ".join(source_line(item.file, n) for n in range(span[0], span[1] + 1))
    for other in roots.items:  # a branch whose value was computed by that same assignment
        prov = records[id(other)].provenance if id(other) in records else []
        if other is not item and prov and (
                any(f.file == item.file and span[0] <= f.line <= span[1] for f in prov)
                or re.search(rf"\b{re.escape(prov[0].function)}\s*\(", assigned)):
            found = _origin(other, records, roots, depth + 1)
            if found is not None:
                return found
    return Frame(item.file, span[0], function, _source(item.file, span[0]))


def merge_origins(roots: _Roots, records: dict[int, BreakRecord]) -> None:
    """Branches that test one value become one root cause at the line that computed it."""
    origins = {id(item): _origin(item, records, roots) for item in roots.items
               if item.category == "data_dependent_branch"}
    merged: dict[tuple[str, int], RootBreak] = {}
    keep: list[RootBreak] = []
    for item in roots.items:
        origin = origins.get(id(item))
        if origin is None:
            keep.append(item)
            continue
        site = Frame(item.file, item.line, item.function, item.code)
        key = (origin.file, origin.line)
        root = merged.get(key)
        if root is None:
            root = dataclasses.replace(
                item, file=origin.file, line=origin.line, function=origin.function,
                code=origin.code, owner=owner_of(origin.file), sites=[], records=0,
                explain_reasons=0, resume_functions=[], sources=list(item.sources))
            merged[key] = root
            keep.append(root)
        root.sites.append(site)
        root.records += item.records
        root.explain_reasons += item.explain_reasons
        for source in item.sources:
            if source not in root.sources:
                root.sources.append(source)
    roots.items[:] = keep


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def discrepancies(summary: Summary, explain: ExplainCounts, breaks: list[RootBreak],
                  graphs: list[GraphInfo], frames: list[CompiledFrame]) -> list[Discrepancy]:
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
                names = [f.name for f in frames if f.skipped and
                         (f.fail_file, f.fail_line) == (b.file, b.line)] or [b.function]
                why.append(f"{loc} made Dynamo skip the frame "
                           f"{', '.join(n + '()' for n in dict.fromkeys(names))} (it ran "
                           "eagerly), so explain sees no graph for it")
            elif b.explain_reasons == 0:
                why.append(f"{loc} is invisible to explain (a break before the first tensor op "
                           "leaves no graph to end)")
            elif b.explain_reasons > 1 or b.records > 1:
                chain = " -> ".join(f"{f.function}() at {os.path.basename(f.file)}:{f.line}"
                                    for f in b.call_chain) or b.function
                why.append(f"{loc} cuts {_plural(max(b.records, b.explain_reasons), 'frame')} "
                           f"({chain}): each enclosing frame adds graphs")
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
        examples = ", ".join(f"{n}()" for n in names[:4])  # the method, no guessed receiver
        out.append(Discrepancy(
            "op_count", explain.op_count, summary.op_count,
            f"explain counts only call_function nodes; breakscan also counts "
            f"{_plural(methods, 'call_method/call_module node')}"
            + (f" (here: {examples})" if examples else "")))
    return out


def compile_error(failure: RawFailure) -> CompileError:
    """What a compiled call's exception says, at the line to act on (never torch's own).

    Dynamo's errors carry the user's stack after "from user code:"; other failures (a backend
    crash) only their traceback, whose innermost frame outside torch is the line.
    """
    head, marker, tail = failure.text.partition("from user code:")
    chain = model_stack(parse_stack(tail)) if marker else []
    if not chain:
        chain = model_stack([f for f in failure.traceback if not is_torch_file(f.file)])
    frame = acting_frame(chain)
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    explanation = next((line.partition(":")[2].strip() for line in lines
                        if line.startswith("Explanation:")), "")
    if len(explanation) > 300:
        explanation = explanation[:297] + "..."
    return CompileError(
        message=(lines[0] if lines else failure.exception)[:300], exception=failure.exception,
        file=frame.file if frame else None, line=frame.line if frame else None,
        call_chain=chain, code=_source(frame.file, frame.line, frame.code) if frame else "",
        explanation=explanation, owner=owner_of(frame.file) if frame else "torch")


def apply_compile_error(result: Any, failure: RawFailure) -> None:
    """The model does not compile: record why, and drop the "break" Dynamo's metrics made of
    the failing line (nothing ran eagerly there: the compiled call raised)."""
    error = result.compile_error = compile_error(failure)
    keep = [b for b in result.breaks if (b.file, b.line) != (error.file, error.line)]
    if len(keep) == len(result.breaks):
        return
    index = {id(b): i for i, b in enumerate(keep)}
    for frame in result.frames:
        if frame.break_index is not None:
            frame.break_index = index.get(id(result.breaks[frame.break_index]))
    result.breaks = keep
    result.summary.frames_skipped = sum(1 for f in result.frames if f.skipped and (
        f.fail_file, f.fail_line) != (error.file, error.line))
    _recount(result)


def _recount(result: Any) -> None:
    """After root causes were merged or dropped: the counts and explanations that name them."""
    breaks = result.breaks
    s = result.summary
    s.graph_break_count = sum(b.calls != "later_only" for b in breaks)
    if result.later_call is not None:
        result.later_call.graph_break_count = sum(b.calls != "first_only" for b in breaks)
    result.discrepancies = discrepancies(s, result.explain, [b for b in breaks
                                                             if b.calls != "later_only"],
                                         result.graphs, result.frames)


# Graph inputs Dynamo names after a module's state ("l_self_modules_conv_buffers_stride_"),
# and the attribute a buffer's or parameter's name ends with.
_GRAPH_INPUT = re.compile(r"^\s*(?P<name>\w+): graph input", re.MULTILINE)
_STATE_ATTR = re.compile(r"_(?:buffers|parameters)_(?P<attr>\w+?)_$")
CONSTANT_CAUSES = ("item", "data_dependent_branch", "dynamic_shape_op")


def _class_at(file: str, line: int) -> str | None:
    """The name of the innermost class whose body holds ``line``."""
    tree = module_ast(file)
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or 0):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found.name if found else None


def _evidence(brk: RootBreak) -> list[Frame]:
    """The lines that compute what a break needs: its own, its sites, its call chain and the
    provenance Dynamo printed for a branch."""
    steps = [f for f in map(provenance_frame, (brk.explanation or "").splitlines()) if f]
    return [Frame(brk.file, brk.line, brk.function, brk.code), *brk.sites, *brk.call_chain,
            *steps]


def _constants_behind(brk: RootBreak, constants: list[ModuleConstant]) -> list[ModuleConstant]:
    """The module constants the value behind a break comes from (empty: not only them).

    A branch's provenance lists its graph inputs: every one must be module state (else the
    value also depends on the data). The constants are those a line on the break's path reads
    as ``self.<attr>`` inside their class, or that the provenance names as an input."""
    if brk.root_category not in CONSTANT_CAUSES or not constants:
        return []
    inputs = [m.group("name") for m in _GRAPH_INPUT.finditer(brk.explanation or "")]
    if any(not name.lower().startswith("l_self_") for name in inputs):
        return []  # the tested value also comes from the inputs or earlier results
    named = {m.group("attr") for name in inputs for m in [_STATE_ATTR.search(name)] if m}
    found = []
    lines = [(f.file, f.line, _source(f.file, f.line, f.code)) for f in _evidence(brk)]
    for const in constants:
        use = re.compile(rf"\bself\.{re.escape(const.attr)}\b")
        if const.attr in named or any(
                use.search(text) and _class_at(file, line) in (const.classes or [const.cls])
                and (inputs or _used_as_is(file, line, const.attr))
                for file, line, text in lines):
            found.append(const)
    return found


def _used_as_is(file: str, line: int, attr: str) -> bool:
    """``self.<attr>`` on ``line`` is handed on as it is (an argument, a pad amount in a tuple,
    a slice bound, a comparison, ``.item()`` of it), not mixed into arithmetic with other
    values: without Dynamo's provenance, only then is the constant the value behind the
    break (``(x * self.scale).sum().item()`` depends on ``x``)."""
    tree = module_ast(file)
    for node in ast.walk(tree) if tree is not None else ():
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Attribute) and child.attr == attr and \
                    isinstance(child.value, ast.Name) and child.value.id == "self" and \
                    getattr(child, "lineno", None) == line and \
                    not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
                return True
    return False


def link_module_constants(result: Any, constants: list[ModuleConstant]) -> None:
    """Breaks whose value is a constant kept in a tensor become one root cause per class, at
    the line that creates the attribute, with the breaks as its sites."""
    groups: dict[tuple[str, str], list[tuple[RootBreak, list[ModuleConstant]]]] = {}
    for brk in result.breaks:
        behind = _constants_behind(brk, [c for c in constants if c.line])
        if behind:
            groups.setdefault((behind[0].file, behind[0].cls), []).append((brk, behind))
    if not groups:
        return
    merged: list[RootBreak] = []
    taken: set[int] = set()
    for (file, cls), members in groups.items():
        # Every constant of the class: the value behind a use is often computed from several
        # (an extra padding from the stride and the kernel size, in a helper method).
        attrs = {c.attr: c for c in constants if c.cls == cls and c.line}
        first = min(attrs.values(), key=lambda c: c.line or 0)
        lead = members[0][0]
        root = dataclasses.replace(
            lead, category="tensor_constant", cause_category=None, file=first.file,
            line=first.line or 0, code=first.code, function=f"{cls}.__init__",
            owner=owner_of(first.file), sites=[], follow_on=[], records=0, explain_reasons=0,
            resume_functions=[], frame_skipped=False, skip_cause=None, skip_kind=None,
            constants=sorted(attrs.values(), key=lambda c: c.line or 0),
            calls="every" if any(b.calls == "every" for b, _ in members) else lead.calls,
            suggestion="", gb_id=lead.gb_id, doc_url=lead.doc_url)
        for brk, _ in members:
            taken.add(id(brk))
            root.sites += [Frame(brk.file, brk.line, brk.function, brk.code), *brk.sites]
            root.follow_on += brk.follow_on
            root.records += brk.records
            root.explain_reasons += brk.explain_reasons
            root.resume_functions += brk.resume_functions
            if brk.frame_skipped and root.skip_cause is None:
                root.skip_cause, root.skip_kind = brk.skip_cause, brk.skip_kind
        root.sites.sort(key=lambda f: (f.file, f.line))
        root.user_frame = user_frame(lead.call_chain) if root.owner != "user" else None
        root.suggestion = advice(root)
        merged.append(root)
    old = list(result.breaks)
    result.breaks = merged + [b for b in old if id(b) not in taken]
    for frame in result.frames:
        if frame.break_index is not None:
            frame.break_index = break_at(result.breaks, old[frame.break_index].file,
                                         old[frame.break_index].line)
    _recount(result)


def constant_patch(brk: RootBreak) -> str:
    """The code a user runs after building the model: each constant as a Python value."""
    by_class: dict[str, list[str]] = {}
    for const in brk.constants:
        by_class.setdefault(const.cls.rpartition(".")[2], []).append(const.attr)
    lines = ["for module in model.modules():"]
    for cls, attrs in by_class.items():
        names = ", ".join(repr(a) for a in attrs) + ("," if len(attrs) == 1 else "")
        lines += [f"    if type(module).__name__ == {cls!r}:",
                  f"        for name in ({names}):",
                  "            value = getattr(module, name).tolist()  # a Python int/float",
                  "            delattr(module, name)  # a buffer: unregister it first",
                  "            setattr(module, name, value)"]
    return "\n".join(lines)


def python_version() -> str:
    return sys.version.split()[0]
