"""Sizes taken from iterating a tensor: ``for t, h, w in grid_thw:`` hands each step 0-d tensors,
and a ``.view(t, h // m, …)``, a slice or an ``int()`` that uses them needs their values on the
host: a break at each use, on every step. Those breaks become one root cause at the ``for`` line
(the line a person changes), with the uses as its sites.

A use counts when the break's line (for ``if``/``while``: its test) names a loop variable, or a
name computed only from loop variables in the loop's body (``n = t * h * w``), as a plain value:
an argument, an operand, a slice bound. ``layer(h)`` or ``row.sum()`` is not one (the variable is
called or is the object of a method), nor is a loop over ``range``, ``enumerate``, ``.tolist()``
or a literal (Python values, no tensor).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

from ..frames import Frame, module_ast, owner_of
from ..messages import original_name
from ..model.records import RootBreak
from ..rules.bs001_item import derived, loop_targets, plain_names, walks_python
from ..rules.catalogue import rule_for
from .roots import Roots, source_text


@dataclass(frozen=True)
class Iteration:
    """A ``for`` loop over a tensor whose loop variables a break uses as values."""

    line: int  # the ``for`` statement's line
    names: tuple[str, ...]  # its loop variables
    iterable: str  # the iterated expression, as written


def _statement_values(loop: ast.For, line: int) -> ast.AST | None:
    """What the statement at ``line`` inside ``loop`` evaluates there (a compound statement's
    test or header only)."""
    stmts = [n for stmt in loop.body for n in ast.walk(stmt)
             if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not stmts:
        return None
    stmt = max(stmts, key=lambda n: n.lineno)
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.ClassDef)):
        return None
    return stmt


def iteration_behind(file: str, function: str, line: int) -> Iteration | None:
    """The innermost ``for`` loop over a tensor around ``line`` (in ``function``) whose loop
    variables the line uses as plain values; None when there is none."""
    tree = module_ast(file)
    if tree is None:
        return None
    name = original_name(function)
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.lineno <= line <= (n.end_lineno or 0)]
    scope = max(scopes, key=lambda n: (n.name == name, n.lineno), default=None)
    loops = sorted((n for n in ast.walk(scope) if isinstance(n, ast.For) and n.body and
                    n.body[0].lineno <= line <= (n.end_lineno or 0)),
                   key=lambda n: n.lineno, reverse=True) if scope is not None else []
    for loop in loops:
        if walks_python(loop.iter):
            continue
        values = _statement_values(loop, line)
        if values is not None and plain_names(values) & derived(loop, line):
            return Iteration(loop.lineno, loop_targets(loop.target), ast.unparse(loop.iter))
    return None


def iteration_at(file: str, line: int) -> Iteration | None:
    """The loop over a tensor whose ``for`` statement is at ``file:line`` (for the advice)."""
    tree = module_ast(file)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.For) and node.lineno == line and not walks_python(node.iter):
            return Iteration(line, loop_targets(node.target), ast.unparse(node.iter))
    return None


def merge_iterations(roots: Roots) -> None:
    """Breaks that need a value taken from iterating a tensor become one root cause at the
    ``for`` line, each break a site; the step Dynamo ends its graph at on that line (explain's
    ``step_unsupported``, the last point it can resume from before the loop) folds into it."""
    merged: dict[tuple[str, int], RootBreak] = {}
    keep: list[RootBreak] = []
    for item in roots.items:
        found = _loop_for(item) if rule_for(item.root_category).needs_host_value and \
            item.owner != "torch" else None
        if found is None:
            keep.append(item)
            continue
        chain, loop = found
        root = merged.get((chain[-1].file, loop.line))
        if root is None:
            root = _root_at(item, chain, loop)
            merged[(root.file, root.line)] = root
            keep.append(root)
        _fold(root, item, site=True)
    for item in list(keep):
        root = merged.get((item.file, item.line))
        if root is not None and item is not root and item.gb_type == "step_unsupported":
            _fold(root, item, site=False)
            keep.remove(item)
    roots.items[:] = keep


def _loop_for(item: RootBreak) -> tuple[list[Frame], Iteration] | None:
    """The loop behind a break: around its own line, else around a call on its chain (of the
    same owner) that hands the loop's variables on (``self.pos(emb, h, w)`` inside the loop,
    the break in ``pos``); with the chain up to that frame."""
    chain = list(item.call_chain)
    own = next((i for i in range(len(chain) - 1, -1, -1)
                if (chain[i].file, chain[i].line) == (item.file, item.line)), None)
    chain = chain[:own + 1] if own is not None else \
        [*chain, Frame(item.file, item.line, item.function, item.code)]
    for idx in range(len(chain) - 1, -1, -1):
        frame = chain[idx]
        if owner_of(frame.file) != item.owner:
            return None
        loop = iteration_behind(frame.file, frame.function, frame.line)
        if loop is not None:
            return chain[:idx + 1], loop
    return None


def _root_at(item: RootBreak, chain: list[Frame], loop: Iteration) -> RootBreak:
    """A root cause at the loop's line, made from the first break that uses its variables
    (``chain`` ends at the frame whose function holds the loop)."""
    frame = chain[-1]
    at = Frame(frame.file, loop.line, frame.function, source_text(frame.file, loop.line))
    return dataclasses.replace(item, file=frame.file, line=loop.line, function=frame.function,
                               code=at.code, call_chain=[*chain[:-1], at], sites=[], records=0,
                               explain_reasons=0, resume_functions=[], sources=[])


def _fold(root: RootBreak, item: RootBreak, *, site: bool) -> None:
    """``item``'s counts onto ``root`` (and its line as a site)."""
    if site:
        root.sites.append(Frame(item.file, item.line, item.function, item.code))
        root.sites += [s for s in item.sites if s not in root.sites]
    root.records += item.records
    root.explain_reasons += item.explain_reasons
    root.resume_functions += item.resume_functions
    root.sources += [s for s in item.sources if s not in root.sources]
    if item.frame_skipped and not root.frame_skipped:
        root.frame_skipped, root.category = True, item.category
        root.cause_category, root.skip_cause, root.skip_kind = \
            item.cause_category, item.skip_cause, item.skip_kind
