"""Which lines of a ``for`` loop over a tensor use its variables as sizes, read from the
source alone: the lint's check for sizes taken from a tensor's rows, and the loop analysis of
stage 3 (``analysis/loops.py``) that groups such breaks under their ``for`` line.
"""

from __future__ import annotations

import ast

# Iterables that hand out Python values (or are not a tensor's rows).
_PYTHON_ITERABLES = frozenset({"range", "enumerate", "zip", "tolist", "items", "keys", "values",
                               "list", "tuple", "sorted", "reversed", "children", "modules",
                               "named_children", "named_modules", "parameters",
                               "named_parameters", "buffers", "named_buffers"})
# Calls a size computed from loop variables may go through and stay "only from them".
_SCALAR_CALLS = frozenset({"int", "float", "round", "abs", "min", "max"})


def plain_names(node: ast.AST) -> set[str]:
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


def walks_python(iterable: ast.AST) -> bool:
    """The loop hands out Python values (or submodules): not a tensor's rows."""
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.ListComp,
                             ast.GeneratorExp, ast.DictComp, ast.SetComp, ast.JoinedStr)):
        return True
    if isinstance(iterable, ast.Call):
        func = iterable.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in _PYTHON_ITERABLES
    return False


def loop_targets(target: ast.AST) -> tuple[str, ...]:
    return tuple(n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def derived(loop: ast.For, line: int) -> set[str]:
    """The loop variables and the names the loop's body computes only from them before
    ``line`` (``n = t * h * w``; ``hm = h // 2``)."""
    names = set(loop_targets(loop.target))
    assigns = sorted((n for stmt in loop.body for n in ast.walk(stmt)
                      if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno < line
                      and n.value is not None), key=lambda n: n.lineno)
    for _ in range(3):  # a short chain of assignments
        for node in assigns:
            used = plain_names(node.value)
            if used and used <= names and _only_scalar_calls(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


# Calls whose arguments are sizes (a 0-d tensor there needs its value on the host).
_SIZE_CALLS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones",
                         "new_empty", "new_full", "zeros", "ones", "empty", "full", "arange",
                         "linspace", "rand", "randn", "narrow", "split", "unflatten", "tile",
                         "repeat_interleave", "interpolate", "range", "int", "float"})


def size_uses(loop: ast.For) -> list[int]:
    """The lines of ``loop``'s body that use its variables (or names computed only from them)
    as sizes: an argument of ``view``/``reshape``/``zeros``/``range``/``int``…, a slice bound.
    Empty when the loop walks Python values (``range``, ``.tolist()``, a literal)."""
    if walks_python(loop.iter):
        return []
    names = derived(loop, (loop.end_lineno or loop.lineno) + 1)
    sizes: list[ast.AST] = []
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or
                                               getattr(node.func, "id", None)) in _SIZE_CALLS:
                sizes += [*node.args, *(k.value for k in node.keywords)]
            elif isinstance(node, ast.Slice):
                sizes += [b for b in (node.lower, node.upper, node.step) if b is not None]
    return sorted({n.lineno for n in sizes if plain_names(n) & names})
