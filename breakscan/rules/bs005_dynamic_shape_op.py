"""BS005 dynamic_shape_op: Operator whose output shape depends on the data.

The rule's whole behaviour: its entry, its lint checks and its fixes.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, SUBSCRIPT_CHECKS, Scope, call_arg, method_on_tensor, register
from .model import FixSpec, Match, Rule

RULE = Rule(
    "BS005", "dynamic_shape_op", "data-dependent-shape",
    "Operator whose output shape depends on the data",
    why="`nonzero`, boolean masks (`x[x > 0]`), `unique`… have a size known only after "
        "running: by default Dynamo breaks before them.",
    suggestion="Use a static-shape formulation (`torch.where(mask, x, 0)` instead of "
               "`x[mask]`, masked sums instead of nonzero).",
    before="picked = h[h > 0]\nreturn picked.sum()",
    after="return torch.where(h > 0, h, 0).sum()  # same value, static shape",
    fixes=("capture_dynamic_output_shape_ops",),
    matches=(Match("GB0036"),  # nonzero, boolean mask, unique…
             Match("GB0037"),
             Match("GB0246")),  # one_hot with data-dependent shape
    type_pattern=r"[Dd]ynamic shape operator|nonzero",
    constant_can_cause=True,
    data_dependent=True)

FIXES: tuple[FixSpec, ...] = (
    FixSpec("capture_dynamic_output_shape_ops", "setting", "BS005",
            "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
            (("capture_dynamic_output_shape_ops", True),),
            offered="a break of this rule's family, unless the scanned process already sets it"),
)


_DATA_SHAPE = ("nonzero", "unique", "unique_consecutive", "masked_select", "argwhere")


@register(METHOD_CHECKS, RULE)
def data_shape_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    func = node.func
    name = qual.rpartition(".")[2] if qual.startswith("torch.") else (
        func.attr if isinstance(func, ast.Attribute) and w.qual(func) is None and
        not w.is_self(func.value) and w.kind(func.value) is True else "")
    if name in _DATA_SHAPE:
        return f"`{name}` returns a tensor whose size depends on the data: graph break " \
               f"({RULE.gb('GB0036')}) unless capture_dynamic_output_shape_ops"
    return None


def _bool_mask(w: Scope, index: ast.AST) -> bool:
    """``x > 0``, ``~m``, ``(a > 0) & (b < 1)`` on tensors: a boolean mask."""
    if isinstance(index, ast.Compare):
        return any(w.kind(v) is True for v in [index.left, *index.comparators])
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _bool_mask(w, index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _bool_mask(w, index.left) or _bool_mask(w, index.right)
    return False


@register(SUBSCRIPT_CHECKS, RULE)
def boolean_mask_index(w: Scope, node: ast.Subscript) -> str | None:
    if w.kind(node.value) is True and _bool_mask(w, node.slice) and \
            isinstance(node.ctx, ast.Load):
        return "indexing with a boolean mask gives a tensor whose size depends on the data: " \
               f"graph break ({RULE.gb('GB0036')}); `torch.where(mask, x, 0)` " \
               "keeps the shape"
    return None


@register(METHOD_CHECKS, RULE)
def counts_from_data(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    if qual == "torch.bincount" or method_on_tensor(w, node, {"bincount"}):
        what = "`bincount`"
    elif any(k.arg == "output_size" for k in node.keywords):
        return None
    elif qual == "torch.repeat_interleave" and len(node.args) + len(node.keywords) == 1:
        what = "`repeat_interleave(counts)`"
    elif (qual == "torch.repeat_interleave" and w.computed(call_arg(node, 1, "repeats"))) or (
            method_on_tensor(w, node, {"repeat_interleave"}) and
            w.computed(call_arg(node, 0, "repeats"))):
        what = "`repeat_interleave` with tensor repeats"
    else:
        return None
    return f"{what} returns a tensor whose size depends on the data: graph break " \
           f"({RULE.gb('GB0036')}) unless capture_dynamic_output_shape_ops " \
           "(or pass `output_size=`)"
