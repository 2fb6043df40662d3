"""Where the value behind a break comes from: the line that computed the value a branch tests
(several branches on one value become one root cause there), or a module's constants kept in
tensors (the breaks that read them become one root cause per class, at the line that creates
them).

Dynamo's provenance of a branch's condition names the lines that computed it and its graph
inputs; a value that crossed an earlier break arrives as a resume function's input and is
followed back to the line that assigned it.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import Counter
from typing import Any

from ..frames import (Frame, is_torch_file, module_ast, owner_of, provenance_frame, source_line,
                      user_frame)
from ..messages import RESUME_NAME, original_name
from ..model.records import BreakRecord, ModuleConstant, RootBreak
from ..rules.bs002_data_dependent_branch import RULE as DATA_DEPENDENT_BRANCH
from ..rules.bs012_tensor_constant import RULE as TENSOR_CONSTANT
from ..rules.catalogue import rule_for
from .advice import advice
from .discrepancies import recount
from .ranking import reorder_breaks
from .roots import Roots, break_at, source_text


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


def _origin(item: RootBreak, records: dict[int, BreakRecord], roots: Roots,
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
        return earlier or Frame(first.file, first.line, original_name(first.function),
                                source_text(first.file, first.line, first.code))
    resumed = RESUME_NAME.match(first.function)
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
    return Frame(item.file, span[0], function, source_text(item.file, span[0]))


def _branches_here(item: RootBreak) -> bool:
    """Is the branch at the item's own line? Not when the line calls into torch's code that
    branches (``torch.testing.assert_close(fused, ref)``): the line to change is the call, not
    where ``fused`` was computed."""
    last = item.call_chain[-1] if item.call_chain else None
    return last is None or (last.file, last.line) == (item.file, item.line) or \
        not is_torch_file(last.file)


def merge_origins(roots: Roots, records: dict[int, BreakRecord]) -> None:
    """Branches that test one value become one root cause at the line that computed it (a
    lone branch stays where it is)."""
    origins = {id(item): _origin(item, records, roots) for item in roots.items
               if item.category == DATA_DEPENDENT_BRANCH.category and _branches_here(item)}
    # A lone branch is its own root cause, at the line a person changes (LCM's `prev_timestep
    # >= 0`); only branches that share one value meet where it was computed.
    shared = Counter((o.file, o.line) for o in origins.values() if o is not None)
    origins = {k: o for k, o in origins.items() if o is not None and shared[(o.file, o.line)] > 1}
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


# Graph inputs Dynamo names after a module's state ("l_self_modules_conv_buffers_stride_"),
# and the attribute a buffer's or parameter's name ends with.
_GRAPH_INPUT = re.compile(r"^\s*(?P<name>\w+): graph input", re.MULTILINE)
_STATE_ATTR = re.compile(r"_(?:buffers|parameters)_(?P<attr>\w+?)_$")


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
    if not rule_for(brk.root_category).constant_can_cause or not constants:
        return []
    inputs = [m.group("name") for m in _GRAPH_INPUT.finditer(brk.explanation or "")]
    if any(not name.lower().startswith("l_self_") for name in inputs):
        return []  # the tested value also comes from the inputs or earlier results
    named = {m.group("attr") for name in inputs for m in [_STATE_ATTR.search(name)] if m}
    found = []
    lines = [(f.file, f.line, source_text(f.file, f.line, f.code)) for f in _evidence(brk)]
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
            lead, category=TENSOR_CONSTANT.category, cause_category=None, file=first.file,
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
    reorder_breaks(result, merged + [b for b in result.breaks if id(b) not in taken],
                   locate=lambda breaks, old: break_at(breaks, old.file, old.line))
    recount(result)
