"""BS004 tolist_numpy: Tensor turned into a Python list or NumPy array.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, Scope, register, tensor_method
from .model import Match, Rule

RULE = Rule(
    "BS004", "tolist_numpy", "tensor-to-python", "Tensor turned into a Python list or NumPy "
    "array",
    why="`.tolist()` of a float tensor breaks the graph (GB0109) and syncs; "
        "`capture_scalar_outputs` does not help here on torch 2.13. (`t.numpy()` followed by "
        "NumPy ops is traced through torch._numpy and does not break.)",
    suggestion="Keep the data as tensors (index, `torch.unbind`, tensor ops) instead of "
               ".tolist()/.numpy(); do the conversion outside forward.",
    before="scores = h.softmax(-1).tolist()\nreturn torch.tensor([max(r) for r in scores])",
    after="return h.softmax(-1).amax(-1)",
    matches=(Match("GB0109"),  # Tensor.tolist() non-integer
             Match("GB0105"),  # Tensor.numpy() without trace_numpy
             *(Match(i) for i in ("GB0106", "GB0185", "GB0231", "GB0290", "GB0293",
                                  "GB0294"))),
    type_pattern=r"tolist|numpy",
    # a NumPy random draw turned into a list is an RNG break first (rng, BS015)
    code_matches=(Match("GB0033", r"^(?!.*\b(np|numpy)\.random\.).*\.tolist\(\)"),),
    ids="GB0157 GB0158 GB0159 GB0232 GB0250 GB0300",
    no_automatic_fix=True,
    data_dependent=True)


@register(METHOD_CHECKS, RULE)
def tolist_method(w: Scope, node: ast.Call) -> str | None:
    if tensor_method(w, node, "tolist"):
        return "`.tolist()` copies a tensor into Python numbers: graph break " \
               f"({RULE.gb('GB0109')}) and a device sync"
    if tensor_method(w, node, "numpy"):
        return "`.numpy()` leaves torch for NumPy: Dynamo can trace it through torch._numpy, " \
               "so it may not break (a scan tells)"
    return None
