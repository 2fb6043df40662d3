"""BS006 unsupported_call: Call Dynamo cannot trace.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import CALL_CHECKS, NP_RANDOM_DRAWS, Scope, register, text_of
from .model import Match, Rule

RULE = Rule(
    "BS006", "unsupported_call", "untraceable-call", "Call Dynamo cannot trace",
    why="`time`, `threading`, C extensions and other skipped functions run in Python: the "
        "graph ends before the call. A call before any tensor op is invisible to "
        "`torch._dynamo.explain` (no prefix graph), breakscan still reports it.",
    suggestion="If no tensor computation uses its result, guard it with `if not "
               "torch.compiler.is_compiling():` or move it out of forward; otherwise use a "
               "torch equivalent, wrap it (`torch.library.custom_op`, "
               "`torch._dynamo.nonstrict_trace`, `torch.compiler.allow_in_graph`), or move "
               "just that call into a small helper decorated with "
               "`torch.compiler.disable` so the rest of forward still compiles.",
    before="t0 = time.perf_counter()\ny = self.fc(x)",
    after="if not torch.compiler.is_compiling():\n    t0 = time.perf_counter()  # eager only"
          "\ny = self.fc(x)",
    matches=(Match("GB0007"),  # function marked as skipped (random, time, C ext)
             *(Match(i) for i in ("GB0008", "GB0009", "GB0059", "GB0147", "GB0148",
                                  "GB0156"))),
    type_pattern=r"marked as skipped|Unsupported function call",
    ids="GB0005 GB0022 GB0060 GB0069 GB0146 GB0150 GB0151 GB0177 GB0187 GB0208 GB0213 "
        "GB0230 GB0270 GB0359 GB6025 GB6270 GB7489 GB9198 GB9193",
    no_automatic_fix=True)


@register(CALL_CHECKS, RULE)
def numpy_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("numpy.random.") and \
            qual[13:] in {*NP_RANDOM_DRAWS, "seed"}:
        return None  # measured: traced through torch._numpy (a one-number draw is rng)
    if qual and qual.startswith("numpy."):
        return f"`{text_of(node.func)}(...)` is a NumPy call: Dynamo can trace some NumPy calls " \
               "on tensors, so it may not break (a scan tells)"
    return None


@register(CALL_CHECKS, RULE)
def clock_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("time."):
        return f"`{text_of(node.func)}()` reads the host clock, which Dynamo does not trace: " \
               f"graph break ({RULE.gb('GB0007')})"
    return None
