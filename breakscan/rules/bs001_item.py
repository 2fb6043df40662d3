"""BS001 item: Tensor converted to a Python number.

The rule's whole behaviour: its entry, its lint checks and its fixes; and which lines of a
``for`` loop over a tensor use its variables as sizes (``size_uses``), read from the source
alone: the lint's check here and stage 3's loop grouping (``analysis/loops.py``) both read it.
"""
from __future__ import annotations

import ast

from .checks import (CALL_CHECKS, LOOP_CHECKS, METHOD_CHECKS, SUBSCRIPT_CHECKS, Scope, register,
                     tensor_method, text_of)
from .model import FixSpec, Match, Rule

RULE = Rule(
    "BS001", "item", "tensor-item", "Tensor converted to a Python number",
    why="`.item()` (also `float(t)`, `int(t)`) needs the value on the host: a device sync, "
        "and Dynamo ends the graph there and resumes in a new one, so nothing fuses across "
        "it and Python runs between the two graphs.",
    suggestion="Keep the value as a 0-d tensor (e.g. `s = y.sum()` and use `s` in tensor "
               "math), or return it and call .item() outside the compiled region.",
    before="h = self.fc(x)\nself.last_mean = h.mean().item()\nreturn h",
    after="h = self.fc(x)\nreturn h, h.mean()  # log mean.item() after the call",
    fixes=("capture_scalar_outputs",),
    matches=(Match("GB0124"),  # Tensor.item(), float(t), int(t)
             Match("GB0033")),  # data-dependent operator (aten._local_scalar_dense…)
    type_pattern=r"\.item\(\)|capture_scalar_outputs",
    needs_host_value=True, constant_can_cause=True, setting_is_the_fix=True,
    data_dependent=True)

FIXES: tuple[FixSpec, ...] = (
    FixSpec("capture_scalar_outputs", "setting", "BS001",
            "torch._dynamo.config.capture_scalar_outputs = True",
            (("capture_scalar_outputs", True),),
            offered="a break of this rule's family, unless the scanned process already sets it"),
)


@register(METHOD_CHECKS, RULE)
def item_method(w: Scope, node: ast.Call) -> str | None:
    if tensor_method(w, node, "item"):
        return f"`.item()` turns a tensor into a Python number: graph break " \
               f"({RULE.gb('GB0124')}) and a device sync"
    return None


@register(CALL_CHECKS, RULE)
def number_of_tensor(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual in ("float", "int") and node.args and w.kind(node.args[0]) is True:
        return f"`{qual}(tensor)` turns a tensor into a Python number: graph break " \
               f"({RULE.gb('GB0124')}) and a device sync"
    return None


@register(LOOP_CHECKS, RULE)
def sizes_from_tensor(w: Scope, node: ast.AST, it: ast.AST) -> str | None:
    """``for t, h, w in grid_thw:`` then ``.view(t, h // 2, …)``: reported at the ``for`` line
    (the walker treats the loop's variables as the finding's sites, not as tensors)."""
    if not isinstance(node, ast.For) or w.kind(it) is not True:
        return None
    lines = size_uses(node)
    if not lines:
        return None
    names = ", ".join(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    where = ", ".join(map(str, lines))
    return f"iterating the tensor `{text_of(it)}` hands out 0-d tensors; `{names}` used as " \
           f"sizes (line {where}) need their values on the host: graph break " \
           f"({RULE.gb('GB0124')}) on every step; turn them into Python ints once " \
           "(pass them in, or `.tolist()` before the loop)"


@register(SUBSCRIPT_CHECKS, RULE)
def tensor_slice_bound(w: Scope, node: ast.Subscript) -> str | None:
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    bounds = [b for s in parts if isinstance(s, ast.Slice) for b in (s.lower, s.upper, s.step)
              if b is not None and w.scalar_tensor(b)]
    if bounds and w.kind(node.value) is not False:
        return f"the slice bound `{text_of(bounds[0])}` is a tensor: Python needs its value, " \
               f"graph break ({RULE.gb('GB0124')}); slice by a Python int or use " \
               "`torch.narrow`/a mask"
    return None


# -- sizes taken from iterating a tensor -------------------------------------------------------

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
