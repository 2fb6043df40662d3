"""BS012 tensor_constant: A constant kept in a tensor.

The rule's whole behaviour: its entry, its advice (with the patch for the built model) and its
fixes.
"""
from __future__ import annotations

import os
from typing import Any

from .model import FixSpec, Rule


def constant_patch(brk: Any) -> str:
    """The code a user runs after building the model: each constant as a Python value."""
    by_class: dict[str, list[str]] = {}
    for const in brk.constants:
        by_class.setdefault(const.cls.rpartition(".")[2], []).append(const.attr)
    lines = ["for module in model.modules():"]
    for cls, attrs in by_class.items():
        names = ", ".join(repr(a) for a in attrs) + ("," if len(attrs) == 1 else "")
        lines += [f"    if type(module).__name__ == {cls!r}:",
                  f"        for name in ({names}):",
                  "            value = getattr(module, name).tolist()  # a Python int/float",
                  "            delattr(module, name)  # a buffer: unregister it first",
                  "            setattr(module, name, value)"]
    return "\n".join(lines)


def _advise(brk: Any, context: Any) -> str:
    """A module's constants kept in tensors: store them as Python values (where they are made,
    or on the built model when the class is a library's)."""
    if not brk.constants:
        return ""
    names = ", ".join(f"self.{c.attr}" for c in brk.constants)
    where = ", ".join(sorted({f"{os.path.basename(c.file)}:{c.line}" for c in brk.constants}))
    return (f"A constant kept in a tensor: {names} of {brk.constants[0].cls} "
            f"(created at {where}) hold fixed values, and each of the "
            f"{len(brk.sites)} use(s) needs them on the host. Store them as Python "
            "ints/floats" + (" where they are created." if brk.owner == "user" else
                             ": without editing the library, after building the "
                             "model run:\n" + constant_patch(brk)))

RULE = Rule(
    "BS012", "tensor_constant", "constant-in-tensor", "A constant kept in a tensor",
    why="A kernel size, stride or padding stored as a 0-d tensor buffer (`nn.Buffer("
        "torch.tensor(stride))`) is data to Dynamo: every `if`, pad amount or slice that "
        "uses it needs its value on the host, a break at each use, in every layer.",
    suggestion="Store the constant as a Python int/float attribute (`self.stride = "
               "stride`) instead of a tensor; for library code, replace the attributes on "
               "the built model (breakscan prints the loop).",
    before="self.stride = nn.Buffer(torch.tensor(stride), persistent=False)\n"
           "...\nif length % self.stride:\n    x = F.pad(x, (0, self.stride))",
    after="self.stride = stride  # a Python int: Dynamo specialises on it\n"
          "...\nif length % self.stride:\n    x = F.pad(x, (0, self.stride))",
    fixes=("python_constants", "constant_source"),
    advise=_advise, advice_first=True)

FIXES: tuple[FixSpec, ...] = (
    # Constants kept in tensors, as Python values: on the built model, or where they are made.
    FixSpec("python_constants", "constants", "BS012",
            title="the constants as Python values on the built model",
            offered="a break on a constant kept in a module's tensor attribute (its class and "
                    "attribute known)"),
    FixSpec("constant_source", "source", "BS012",
            title="keep the constants as Python values: {lines}",
            rewrite="rewrite"),
)
