"""BS025 sparse_nested_tensor: Sparse or strided nested tensor.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, Scope, register, text_of
from .model import Match, Rule

RULE = Rule(
    "BS025", "sparse_nested_tensor", "sparse-or-nested",
    'Sparse or strided nested tensor',
    why='torch.compile does not support sparse tensors or strided NestedTensors inside the '
        'graph (creating them included).',
    suggestion='Create sparse tensors outside the compiled region and pass dense ones in (or '
               '`.to_dense()` before the call); use jagged NestedTensors '
               '(`layout=torch.jagged`).',
    before='s = y.to_sparse()\nreturn torch.sparse.mm(s, w)',
    after='return y @ w  # dense inside the compiled region',
    matches=(Match("GB0007", r"qualname: [\w.]*sparse"),),
    ids=('GB0015 GB0016 GB0044 GB0129 GB0130 GB0233 GB0245 GB0277 GB0374 GB1501'))


_SPARSE_MAKERS = frozenset({"sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
                            "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor"})


@register(METHOD_CHECKS, RULE)
def sparse_tensor(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    func = node.func
    made = qual.startswith("torch.") and qual.rpartition(".")[2] in _SPARSE_MAKERS
    if made or qual.startswith("torch.sparse.") or (
            isinstance(func, ast.Attribute) and func.attr.startswith("to_sparse") and
            w.qual(func) is None and w.kind(func.value) is True):
        gb_id = "GB0007" if made else "GB0277"
        return f"`{text_of(func)}` makes or uses a sparse tensor, which Dynamo does not trace: " \
               f"graph break ({RULE.gb(gb_id)}); keep it dense, or run " \
               "the sparse step outside the compiled region"
    return None
