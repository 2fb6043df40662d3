"""A dtype round trip dropped (BS202): ``x.to(torch.float64).sin().to(torch.float32)`` becomes
``x.sin()``.

Offered for a kernel finding at the line, only when one expression there casts to a dtype and
back to another by a chain of method calls (``.to(torch.D)``, ``.double()``, ``.float()``,
``.half()``, ``.bfloat16()``); anything else is refused with its reason. The ops between then
compute in the dtype the value is cast back to: the verifying child compares the outputs and
times both, so a change in precision that matters shows as "changes outputs".
"""

from __future__ import annotations

import libcst as cst

from .rewrite import Rewrite, apply_fix
from .syntax import Refuse, Tree

_METHODS = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16"}
_TORCH_DTYPES = {"float64": "float64", "double": "float64", "float32": "float32",
                 "float": "float32", "float16": "float16", "half": "float16",
                 "bfloat16": "bfloat16"}


def _cast(node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """(dtype, receiver) of ``x.to(torch.D)`` / ``x.to(dtype=torch.D)`` / ``x.double()`` …"""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    name, receiver = node.func.attr.value, node.func.value
    if name in _METHODS and not node.args:
        return _METHODS[name], receiver
    if name != "to" or len(node.args) != 1 or node.args[0].star:
        arg = None
    else:
        keyword = node.args[0].keyword
        arg = node.args[0].value if keyword is None or keyword.value == "dtype" else None
    if isinstance(arg, cst.Attribute) and isinstance(arg.value, cst.Name) and \
            arg.value.value == "torch" and arg.attr.value in _TORCH_DTYPES:
        return _TORCH_DTYPES[arg.attr.value], receiver
    return None


def _receivers(node: cst.BaseExpression):
    """The expression and its receivers down a method chain (``a.b(c)[0].d()`` → … ``a``)."""
    while True:
        yield node
        if isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            return


def drop_round_trip(t: Tree, line: int) -> tuple[str, cst.Module]:
    """The rewrite handler (``rewrite._apply``): the one round trip on ``line`` dropped."""
    trips = []
    for node in t.pos:
        outer = _cast(node) if isinstance(node, cst.Call) and t.covers(node, line) else None
        if outer is None:
            continue
        for inner in _receivers(outer[1]):
            found = _cast(inner)
            if found is not None:  # the nearest cast below the outer one
                if found[0] != outer[0]:
                    trips.append((node, inner, outer[0], found[0]))
                break
    if not trips:
        raise Refuse(f"no cast and cast back in one expression on line {line}")
    if len(trips) > 1:
        raise Refuse(f"{len(trips)} round trips on line {line}: drop them by hand")
    outer, inner, back, wide = trips[0]
    receiver = outer.func.value
    unwrapped = inner.func.value
    new = unwrapped if receiver is inner else receiver.deep_replace(inner, unwrapped)
    title = f"compute in {back}: drop the cast to {wide} and back ({t.snippet(outer)})"
    return title, t.module.deep_replace(outer, new)


def propose_drop_round_trip(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``drop_round_trip`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "drop_round_trip", drop_round_trip)
