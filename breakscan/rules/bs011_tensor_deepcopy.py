"""BS011 tensor_deepcopy: `copy.deepcopy` of a tensor.

The rule's whole behaviour: its entry, its lint checks and its fixes.
"""
from __future__ import annotations

import ast

from .checks import CALL_CHECKS, Scope, register
from .model import FixSpec, Match, Rule

RULE = Rule(
    "BS011", "tensor_deepcopy", "tensor-deepcopy", "`copy.deepcopy` of a tensor",
    why="Dynamo does not trace `copy.deepcopy()` of a tensor: the graph ends before it.",
    suggestion="Use `t.clone()` (add `.detach()` when the copy must not carry autograd "
               "history, as `deepcopy` of a leaf does).",
    before="h = self.fc(x)\nsnapshot = copy.deepcopy(h)",
    after="h = self.fc(x)\nsnapshot = h.clone()",
    fixes=("clone",),
    matches=(Match("GB4198"),),
    type_pattern=r"copy\.deepcopy",
    ids="GB0179")

FIXES: tuple[FixSpec, ...] = (
    # A break inside a library, acted on at the user's own call into it.
    FixSpec("clone", "source", "BS011",
            title="replace copy.deepcopy(tensor) with tensor.clone()",
            rewrite="rewrite"),
)


@register(CALL_CHECKS, RULE)
def deepcopy_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "copy.deepcopy" and node.args and w.kind(node.args[0]) is True:
        return "`copy.deepcopy()` of a tensor is not traced by Dynamo: graph break " \
               f"({RULE.gb('GB4198')}); use `.clone()`"
    return None
