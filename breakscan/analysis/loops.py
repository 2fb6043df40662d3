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

from .breaklog import original_name
from .roots import Roots, source_text
from ..frames import Frame, module_ast, owner_of
from ..records import RootBreak

# Breaks that need a value on the host (`.item()`, `int(t)`, a size or slice bound).
VALUE_CATEGORIES = ("item",)
# Iterables that hand out Python values (or are not a tensor's rows).
_PYTHON_ITERABLES = frozenset({"range", "enumerate", "zip", "tolist", "items", "keys", "values",
                               "list", "tuple", "sorted", "reversed", "children", "modules",
                               "named_children", "named_modules", "parameters",
                               "named_parameters", "buffers", "named_buffers"})
# Calls a size computed from loop variables may go through and stay "only from them".
_SCALAR_CALLS = frozenset({"int", "float", "round", "abs", "min", "max"})


@dataclass(frozen=True)
class Iteration:
    """A ``for`` loop over a tensor whose loop variables a break uses as values."""

    line: int  # the ``for`` statement's line
    names: tuple[str, ...]  # its loop variables
    iterable: str  # the iterated expression, as written


def _plain_names(node: ast.AST) -> set[str]:
    """Names read as values in ``node``: not called, not the object of an attribute."""
    skip: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            skip.add(id(n.value))
        elif isinstance(n, ast.Call):
            skip.add(id(n.func))
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in skip
            and isinstance(n.ctx, ast.Load)}


def _only_scalar_calls(node: ast.AST) -> bool:
    return all(isinstance(c.func, ast.Name) and c.func.id in _SCALAR_CALLS or
               isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and
               c.func.value.id == "math" for c in ast.walk(node) if isinstance(c, ast.Call))


def _walks_python(iterable: ast.AST) -> bool:
    """The loop hands out Python values (or submodules): not a tensor's rows."""
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.ListComp,
                             ast.GeneratorExp, ast.DictComp, ast.SetComp, ast.JoinedStr)):
        return True
    if isinstance(iterable, ast.Call):
        func = iterable.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in _PYTHON_ITERABLES
    return False


def _targets(target: ast.AST) -> tuple[str, ...]:
    return tuple(n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _derived(loop: ast.For, line: int) -> set[str]:
    """The loop variables and the names the loop's body computes only from them before
    ``line`` (``n = t * h * w``; ``hm = h // 2``)."""
    names = set(_targets(loop.target))
    assigns = sorted((n for stmt in loop.body for n in ast.walk(stmt)
                      if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno < line
                      and n.value is not None), key=lambda n: n.lineno)
    for _ in range(3):  # a short chain of assignments
        for node in assigns:
            used = _plain_names(node.value)
            if used and used <= names and _only_scalar_calls(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


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


# Calls whose arguments are sizes (a 0-d tensor there needs its value on the host).
_SIZE_CALLS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones",
                         "new_empty", "new_full", "zeros", "ones", "empty", "full", "arange",
                         "linspace", "rand", "randn", "narrow", "split", "unflatten", "tile",
                         "repeat_interleave", "interpolate", "range", "int", "float"})


def size_uses(loop: ast.For) -> list[int]:
    """The lines of ``loop``'s body that use its variables (or names computed only from them)
    as sizes: an argument of ``view``/``reshape``/``zeros``/``range``/``int``…, a slice bound.
    Empty when the loop walks Python values (``range``, ``.tolist()``, a literal)."""
    if _walks_python(loop.iter):
        return []
    names = _derived(loop, (loop.end_lineno or loop.lineno) + 1)
    sizes: list[ast.AST] = []
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or
                                               getattr(node.func, "id", None)) in _SIZE_CALLS:
                sizes += [*node.args, *(k.value for k in node.keywords)]
            elif isinstance(node, ast.Slice):
                sizes += [b for b in (node.lower, node.upper, node.step) if b is not None]
    return sorted({n.lineno for n in sizes if _plain_names(n) & names})


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
        if _walks_python(loop.iter):
            continue
        values = _statement_values(loop, line)
        if values is not None and _plain_names(values) & _derived(loop, line):
            return Iteration(loop.lineno, _targets(loop.target), ast.unparse(loop.iter))
    return None


def iteration_at(file: str, line: int) -> Iteration | None:
    """The loop over a tensor whose ``for`` statement is at ``file:line`` (for the advice)."""
    tree = module_ast(file)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.For) and node.lineno == line and not _walks_python(node.iter):
            return Iteration(line, _targets(node.target), ast.unparse(node.iter))
    return None


def merge_iterations(roots: Roots) -> None:
    """Breaks that need a value taken from iterating a tensor become one root cause at the
    ``for`` line, each break a site; the step Dynamo ends its graph at on that line (explain's
    ``step_unsupported``, the last point it can resume from before the loop) folds into it."""
    merged: dict[tuple[str, int], RootBreak] = {}
    keep: list[RootBreak] = []
    for item in roots.items:
        found = _loop_for(item) if item.root_category in VALUE_CATEGORIES and \
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
