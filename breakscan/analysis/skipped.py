"""How Dynamo fell back to eager at a break: the skip cause in Dynamo's own terms, the
functions it skipped, and comprehensions that broke only because their parent was skipped.

A break Dynamo cannot resume from makes it skip a whole function (a break in a loop, in a
``try`` or ``with`` block) or run the rest of a function eagerly; the records and the
compilation metrics say which, and this module words it.
"""

from __future__ import annotations

import ast
import os
import re

from ..frames import Frame, module_ast
from ..messages import original_name, resume_line
from ..model.records import BreakRecord, CompiledFrame, GraphInfo, RootBreak
from ..rules.bs008_frame_skipped import RULE as FRAME_SKIPPED
from ..rules.registry import EARLIER_BREAK
from .roots import Roots

_SKIPPED_FRAME = re.compile(r"frame skipped: (?P<fn>\S+) \((?P<file>.+) line (?P<line>\d+)\)")
COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def enclosing_block(file: str, line: int) -> str | None:
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


def mark_skipped(item: RootBreak, record: BreakRecord | None,
                 metric: CompiledFrame | None = None) -> None:
    """Record how Dynamo fell back to eager at this break, in the words of its own cause."""
    kind = record.skip_kind if record is not None else "metrics"
    where = _SKIPPED_FRAME.search(record.raw) if record is not None else None
    code = where.group("fn") if where else (metric.name if metric else item.function)
    code = code or "the function"
    if kind == "rest_of_frame":
        # Not a skipped frame: the function is compiled up to the break and the rest of it runs
        # eagerly. The summary's "frames skipped" (Dynamo's own metrics) does not count it.
        item.skip_cause = (f"Dynamo cannot resume after this break: it compiled "
                           f"{original_name(code)}() up to the last resumable point before it "
                           "and ran the rest of the function eagerly")
        item.skip_kind = kind
        return
    fn = skipped_code(code, where.group("file"), int(where.group("line")),
                      (item.file, item.line)) if where else skipped_code(code, item.file)
    item.skip_cause = _skip_cause(item, kind, fn, metric)
    item.skip_kind = kind
    if item.category != FRAME_SKIPPED.category:
        item.cause_category = item.category
        item.category = FRAME_SKIPPED.category
    item.frame_skipped = True
    if record is not None:
        item.wrapper_gb_id = item.wrapper_gb_id or record.wrapper_gb_id


RAN_COMPILED = "; the code before that line ran compiled"
_RESUMED_AT = re.compile(r"from (?P<file>[^\s:]+):(?P<line>\d+) \(Dynamo's resume function")


def confirm_compiled_before(items: list[RootBreak], graphs: list[GraphInfo]) -> None:
    """Say "the code before that line ran compiled" only when a graph holds a line of that
    function before it; else that no graph came from it (its first statement, or only Python;
    a graph from an earlier function of the same file does not count)."""
    for item in items:
        match = _RESUMED_AT.search(item.skip_cause or "")
        if match is None or RAN_COMPILED not in item.skip_cause:
            continue
        name, resumes = match.group("file"), int(match.group("line"))
        start = _function_start(item.file, resumes) if os.path.basename(item.file or "") == \
            name else None  # lines of that file before the function are not "before it"
        compiled = any(os.path.basename(file) == name and line.isdigit() and
                       (start or 0) <= int(line) < resumes for graph in graphs
                       for file, _, line in (s.rpartition(":") for s in graph.source_lines))
        if not compiled:
            item.skip_cause = item.skip_cause.replace(
                RAN_COMPILED, "; no graph was compiled from the code before that line")


def _function_start(file: str, line: int) -> int | None:
    """The first line of the innermost function of ``file`` holding ``line`` (its ``def``)."""
    tree = module_ast(file)
    if tree is None:
        return None
    spans = [node.lineno for node in ast.walk(tree)
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and
             node.lineno <= line <= (node.end_lineno or node.lineno)]
    return max(spans, default=None)


def skipped_code(code_name: str, file: str, line: int | None = None,
                 at: tuple[str, int] | None = None) -> str:
    """What Dynamo skipped, for the reader: ``the whole function forward() (model.py:12)``, or
    for a resume function (Dynamo's code for the rest of a function after an earlier break)
    ``the rest of forward() from model.py:17 (…)``: what came before that line still ran
    compiled. ``line`` (where the skipped code starts) is named when it is not ``at``."""
    resumes = resume_line(code_name)
    name = original_name(code_name) + "()"
    if resumes is not None:
        return (f"the rest of {name} from {os.path.basename(file)}:{resumes} (Dynamo's resume "
                f"function {code_name}{RAN_COMPILED})")
    if line is not None and (file, line) != at:
        name += f" ({os.path.basename(file)}:{line})"
    return f"the whole function {name}"


def _skip_cause(item: RootBreak, kind: str | None, fn: str,
                metric: CompiledFrame | None) -> str:
    """Why Dynamo skipped ``fn`` (:func:`skipped_code`) at this break."""
    if kind == "loop":
        return (f"the break is inside a for/while loop, where Dynamo cannot resume: it skipped "
                f"{fn}, which ran eagerly")
    if kind == "metrics":
        reason = (metric.fail_reason or metric.fail_type or "") if metric else ""
        return f"Dynamo skipped {fn} and ran it eagerly: {reason}".rstrip(": ")
    block = enclosing_block(item.file, item.line)
    inside = {"try": " (the break is inside a try block)",
              "with": " (the break is inside a with block)"}.get(block or "", "")
    return (f"Dynamo could not resume from this break{inside}: it skipped {fn}, which ran "
            "eagerly")


def name_skipped_frames(items: list[RootBreak], frames: list[CompiledFrame]) -> None:
    """Name the functions a non-resumable break made Dynamo skip, from its compilation metrics.

    The log says only "Skipping the function"; the metrics rows say which functions fell back
    (often wrappers above the break: a decorator whose call sits in a try block).
    """
    for item in items:
        if item.skip_kind != "whole_frame":
            continue
        # Where Dynamo failed: the break's line, or the innermost frame of its chain when the
        # line shown is the user's above a library or standard-library frame (copy.deepcopy).
        where = {(item.file, item.line)} | ({(item.call_chain[-1].file, item.call_chain[-1].line)}
                                            if item.call_chain else set())
        skipped = [f for f in frames if f.skipped and (f.fail_file, f.fail_line) in where]
        if not skipped:
            continue
        names = ", ".join(skipped_code(f.name, f.file, f.first_line) for f in skipped)
        blocks = []
        for f in skipped:  # where the skipped function's own line on the way sits in a block
            for frame in item.call_chain:
                if frame.file == f.file and frame.function == f.name:
                    block = enclosing_block(frame.file, frame.line)
                    if block:
                        blocks.append(f"{os.path.basename(frame.file)}:{frame.line} is inside "
                                      f"a {block} block")
        inside = f" ({'; '.join(blocks)})" if blocks else ""
        item.skip_cause = (f"Dynamo could not resume from this break{inside}: it skipped "
                           f"{names}, which ran eagerly")


def enclosing_function(file: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost ``def`` whose body holds ``line``."""
    tree = module_ast(file)
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def fold_comprehensions(roots: Roots, frames: list[CompiledFrame]) -> None:
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
        parent = enclosing_function(item.file, item.line)
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


def fold_follow_on_records(roots: Roots) -> None:
    """A record Dynamo itself says follows from an earlier break (hint class
    CAUSED_BY_EARLIER_GRAPH_BREAK) at the line of another root, or at a line that root's call
    chain passes through, is that root's context: one construct, one root cause.

    Seen: ``{k: float(v) for k, v in d.items()}`` breaks at ``.item()`` inside the
    comprehension, then Dynamo cannot rebuild the comprehension's iterator in the enclosing
    function (GB0092 "Reconstruction failure") at the same line. The fold keeps what the
    second record tells (the rest of the function ran eagerly) on the root it follows from.
    """
    for item in list(roots.items):
        if EARLIER_BREAK not in item.hint_classes:
            continue
        cause = next((other for other in roots.items if other is not item and
                      EARLIER_BREAK not in other.hint_classes and
                      ((other.file, other.line) == (item.file, item.line) or
                       any((f.file, f.line) == (item.file, item.line)
                           for f in other.call_chain))), None)
        if cause is None:
            continue
        cause.follow_on_records.append(" ".join(filter(None, (item.gb_id, item.gb_type))))
        cause.records += item.records
        cause.explain_reasons += item.explain_reasons
        cause.resume_functions += [r for r in item.resume_functions
                                   if r not in cause.resume_functions]
        cause.sources += [s for s in item.sources if s not in cause.sources]
        if cause.skip_cause is None and item.skip_cause is not None:
            cause.skip_cause, cause.skip_kind = item.skip_cause, item.skip_kind
        if item.frame_skipped and not cause.frame_skipped:
            cause.frame_skipped = True
            if cause.category != FRAME_SKIPPED.category:
                cause.cause_category, cause.category = cause.category, FRAME_SKIPPED.category
        roots.items.remove(item)
