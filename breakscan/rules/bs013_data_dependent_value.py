"""BS013 data_dependent_value: A tensor used where Python needs a plain value.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, Scope, register
from .model import Rule

RULE = Rule(
    "BS013", "data_dependent_value", "data-dependent-value",
    'A tensor used where Python needs a plain value',
    why='A tensor used as a sort key, list index, `torch.Size` index or `index()` must be a '
        'Python constant at trace time.',
    suggestion='Do the operation with tensor ops (stack then sort/gather), or index with '
               'Python ints.',
    before='s = sorted([x[0].sum(), x[1].sum()])',
    after='s = torch.stack([x[0].sum(), x[1].sum()]).sort().values',
    advice_by_id=(("GB0207", '`sorted()` over tensors needs their values in Python: stack them and sort with '
                          'tensor ops (`torch.stack(xs).sort().values`; `argsort` to reorder other '
                          'tensors by them).'),),
    ids=('GB0038 GB0070 GB0207 GB0218 GB7596 '
         'GB5687 GB9352 GB9211'),
    data_dependent=True)


_REDUCTIONS = frozenset({"sum", "mean", "norm", "max", "min", "amax", "amin", "prod", "std",
                         "var", "median", "logsumexp", "count_nonzero"})


def _tensor_key(key: ast.AST | None) -> bool:
    """``key=lambda t: t.sum()``: the sort key is a tensor reduction of the item."""
    if not (isinstance(key, ast.Lambda) and isinstance(key.body, ast.Call)):
        return False
    func, params = key.body.func, {a.arg for a in key.args.args}
    return isinstance(func, ast.Attribute) and func.attr in _REDUCTIONS and \
        isinstance(func.value, ast.Name) and func.value.id in params


def _tensor_items(w: Scope, items: ast.AST) -> bool:
    if isinstance(items, (ast.List, ast.Tuple, ast.Set)):
        return any(w.kind(e) is True for e in items.elts)
    if isinstance(items, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        elt = items.elt
        return w.kind(elt) is True or (isinstance(elt, ast.Call) and
                                       isinstance(elt.func, ast.Attribute) and
                                       elt.func.attr in _REDUCTIONS)
    return False


@register(METHOD_CHECKS, RULE)
def sort_tensors(w: Scope, node: ast.Call) -> str | None:
    key = next((k.value for k in node.keywords if k.arg == "key"), None)
    func = node.func
    if w.qual(func) == "sorted" and node.args and \
            (_tensor_items(w, node.args[0]) or _tensor_key(key)):
        what = "`sorted()`"
    elif isinstance(func, ast.Attribute) and func.attr == "sort" and _tensor_key(key) and \
            w.kind(func.value) is not True:
        what = "`list.sort()`"
    else:
        return None
    return f"{what} over tensors compares their values in Python: graph break " \
           f"({RULE.gb('GB0207')}); sort with tensor ops " \
           "(`torch.stack(xs).sort()`, `argsort`)"
