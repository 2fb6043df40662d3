"""BS027 object_identity: Object identity, hash or data pointer used as a value.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import (COMPARE_CHECKS, SKIPS_FRAME, SUBSCRIPT_CHECKS, Scope, method_on_tensor,
                     register, text_of)
from .model import Rule

RULE = Rule(
    "BS027", "object_identity", "object-identity",
    'Object identity, hash or data pointer used as a value',
    why='`id(x)`, `hash(obj)`, weakrefs, `data_ptr()` comparisons and sets of tensors depend '
        'on runtime objects Dynamo cannot know at trace time.',
    suggestion='Key caches by something stable (a name, a module attribute, a shape tuple); '
               'compare tensors with `is`; keep identity caches outside forward.',
    before='if y.data_ptr() == w.data_ptr():\n    y = y.clone()',
    after='if y is w:\n    y = y.clone()',
    advice_by_id=(("GB5976", '`data_ptr()` is a run-time address Dynamo cannot know while tracing: compare '
                          'the tensors themselves (`if y is w:`), or decide once outside forward.'),
                  ("GB4501", '`id(x)` is a run-time address: key caches by something stable (a name, a '
                          'module attribute, a shape tuple), or keep the cache outside forward.')),
    ids=('GB0027 GB0141 GB0176 GB0191 GB0222 GB0272 GB0276 GB0283 GB0364 GB0365 '
         'GB0366 GB0367 GB0682 GB0871 GB2861 GB4501 GB4608 GB4749 GB5976 GB9316 GB9118 GB3003'))


def _id_of_computed(w: Scope, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and w.qual(node.func) == "id" and len(node.args) == 1 \
        and w.computed(node.args[0])


@register(COMPARE_CHECKS, RULE)
def address_compared(w: Scope, node: ast.Compare) -> str | None:
    if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return None  # `id(h) in CACHE`: a lookup, no break
    for operand in [node.left, *node.comparators]:
        if isinstance(operand, ast.Call) and method_on_tensor(w, operand, {"data_ptr"}):
            return f"`{text_of(operand)}` compared: a storage address is a run-time fact " \
                   f"Dynamo cannot know while tracing, graph break " \
                   f"({RULE.gb('GB5976')}); compare the tensors (`is`) or " \
                   "write out of place"
        if _id_of_computed(w, operand):
            return f"`{text_of(operand)}` compared: the id of a tensor made while tracing is " \
                   f"not a real id, graph break ({RULE.gb('GB9316')}), " \
                   f"{SKIPS_FRAME}; compare with `is`"
    return None


@register(SUBSCRIPT_CHECKS, RULE)
def id_as_stored_key(w: Scope, node: ast.Subscript) -> str | None:
    root = node.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    local = isinstance(root, ast.Name) and root.id in w.locals and not w.is_self(root)
    key = next((n for n in ast.walk(node.slice) if _id_of_computed(w, n)), None)
    if key is not None and isinstance(node.ctx, ast.Store) and not local:
        return f"`{text_of(key)}` kept as a key outside forward: the id of a tensor made " \
               "while tracing cannot leave the graph, graph break " \
               f"({RULE.gb('GB4501')}, reported at the return), {SKIPS_FRAME}; key " \
               "by something stable (a name, a layer index)"
    return None
