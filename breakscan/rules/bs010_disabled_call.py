"""BS010 disabled_call: Call into a `torch.compiler.disable`d function.

The rule's whole behaviour: its entry, its advice (where the disabled function is defined) and
its lint checks.
"""
from __future__ import annotations

import ast
import os
from typing import Any

from .checks import CALLEE_CHECKS, Scope, register, text_of
from .model import Match, Rule

def _advise(brk: Any, context: Any) -> str:
    """Name the disabled function and where it is defined; torch's own are disabled on
    purpose (nothing of the user's to change)."""
    fn = context.disabled_function(brk)
    if fn is None:
        return ""
    where = f" ({os.path.basename(fn.file)}:{fn.line})" if fn.file else ""
    if fn.file and context.is_torch_file(fn.file):
        return (f"`{fn.function}()`{where} is disabled by torch itself, on purpose: it runs "
                "eagerly by design. Keep the call outside the compiled function, or accept the "
                "split.")
    return (f"`{fn.function}()`{where} is decorated with `torch.compiler.disable`: it runs "
            "eagerly by design. Narrow the decorator to the part that cannot be traced, or "
            "remove it.")


RULE = Rule(
    "BS010", "disabled_call", "disabled-function", "Call into a `torch.compiler.disable`d "
    "function",
    why="A function decorated with `torch.compiler.disable` (or `torch._dynamo.disable`) "
        "runs eagerly by design: the graph ends before the call and resumes after it.",
    suggestion="It runs eagerly by design: narrow the decorator to the part that cannot be "
               "traced, or remove it.",
    before="@torch.compiler.disable\ndef scale(h):\n    return h * 2\n\n"
           "h = scale(self.fc(x))",
    after="def scale(h):  # traceable: no decorator needed\n    return h * 2\n\n"
          "h = scale(self.fc(x))",
    matches=(Match("GB0098"),  # calling a torch.compiler.disable'd function
             Match("GB0099")),  # inlining one
    ids="GB0376 GB0377",  # torch 2.14: calling torch.compiler.disable() itself in forward
    type_pattern=r"torch\.compiler\.disable",
    advise=_advise)


_DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})


@register(CALLEE_CHECKS, RULE)
def disabled_callee(w: Scope, node: ast.Call,
                    callee: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    decorators = {w.qual(d.func if isinstance(d, ast.Call) else d)
                  for d in callee.decorator_list}
    if decorators & _DISABLE:
        return f"`{text_of(node.func)}` is wrapped in torch.compiler.disable: calling it is a " \
               f"graph break ({RULE.gb('GB0098')})"
    return None
