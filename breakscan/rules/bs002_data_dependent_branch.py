"""BS002 data_dependent_branch: Python control flow on a tensor value.

The rule's whole behaviour: its entry, its lint checks and its fixes.
"""
from __future__ import annotations

import ast

from .checks import ASSERT_CHECKS, BRANCH_CHECKS, Scope, register
from .model import FixSpec, Match, Rule

RULE = Rule(
    "BS002", "data_dependent_branch", "tensor-branch",
    "Python control flow on a tensor value",
    why="`if` (or `while`, `and`/`or`, `assert`) on a tensor value needs the value on the "
        "host to pick a side: a sync and a graph break; each side is compiled lazily as its "
        "own resume function, only when taken.",
    suggestion="Make it branchless: `torch.where(cond, a, b)` when both branches are "
               "tensors, `torch.cond(pred, true_fn, false_fn, operands)` for real control "
               "flow, or always apply the transform (clamp, nan_to_num) instead of testing "
               "for it.",
    before="if h.sum() > 0:\n    h = h * 2\nelse:\n    h = h - 1",
    after="h = torch.where(h.sum() > 0, h * 2, h - 1)  # both sides computed, no branch",
    fixes=("torch_where",),
    matches=(Match("GB0170"),  # if/while on a tensor
             Match("GB0035"),  # non-constant __bool__
             Match("GB0034")),  # data-dependent assert
    type_pattern=r"[Dd]ata-dependent branching|generic_jump",
    constant_can_cause=True,
    data_dependent=True)

FIXES: tuple[FixSpec, ...] = (
    FixSpec("torch_where", "source", "BS002",
            title="replace the tensor `if` with torch.where",
            rewrite="where"),
)


def _const_text(node: ast.AST | None) -> bool:
    """A message CPython folds to a constant (Dynamo can then rewrite the assert)."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in node.values)
    return isinstance(node, ast.BinOp) and _const_text(node.left) and _const_text(node.right)


@register(BRANCH_CHECKS, RULE)
def branch_on_tensor(w: Scope, node: ast.AST, test: ast.AST, what: str) -> str | None:
    if w.tensor_test(test):
        return f"{what} on a tensor value: Dynamo cannot know which way to go, graph break " \
               f"({RULE.gb('GB0170')})"
    return None


@register(ASSERT_CHECKS, RULE)
def assert_with_computed_message(w: Scope, node: ast.Assert) -> str | None:
    # Dynamo rewrites `assert <tensor>[, "text"]` into torch._assert_async (no break); a
    # computed message (an f-string with values) defeats the rewrite.
    if not _const_text(node.msg) and w.tensor_test(node.test):
        return "`assert` on a tensor with a computed message: Dynamo cannot rewrite it to " \
               f"torch._assert_async, graph break ({RULE.gb('GB0170')})"
    return None
