"""BS007 explicit_break: Explicit graph break.

The rule's whole behaviour: its entry, its advice and its lint checks.
"""
from __future__ import annotations

import ast
import os
from typing import Any

from .checks import CALL_CHECKS, Scope, register
from .model import Match, Rule

def _advise(brk: Any, context: Any) -> str:
    """torch.optim's step() calls graph_break() itself (to keep no_grad for AOT autograd):
    nothing of the user's to remove."""
    inside = brk.call_chain[-1] if brk.call_chain else None
    if inside is None or not context.is_torch_file(inside.file):
        return ""
    return (f"torch itself calls `torch._dynamo.graph_break()` here (in "
            f"{inside.function}() of {os.path.basename(inside.file)}:{inside.line}), "
            "on purpose: nothing in your code to remove. Keep the call outside the "
            "compiled function (compile the model, run this step eagerly), or accept "
            "the split and its returns to Python.")


RULE = Rule(
    "BS007", "explicit_break", "explicit-break", "Explicit graph break",
    why="`torch._dynamo.graph_break()` (or a `torch.compiler.disable`d function) splits the "
        "graph on purpose; left in by accident it costs a resume function and lost fusion.",
    suggestion="Remove the `torch._dynamo.graph_break()` call unless the split is intended.",
    before="h = self.fc1(x)\ntorch._dynamo.graph_break()\nreturn self.fc2(h)",
    after="h = self.fc1(x)\nreturn self.fc2(h)",
    matches=(Match("GB0025"),),  # torch._dynamo.graph_break()
    type_pattern=r"graph_break\(\)",
    ids="GB0030 GB0269 GB0275 GB0284 GB4636",
    no_automatic_fix=True,
    advise=_advise)


@register(CALL_CHECKS, RULE)
def graph_break_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "torch._dynamo.graph_break":
        return "`torch._dynamo.graph_break()` forces a graph break " \
               f"({RULE.gb('GB0025')})"
    return None
