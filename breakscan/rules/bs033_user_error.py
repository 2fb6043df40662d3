"""BS033 user_error: Code that fails in eager too (or arguments Dynamo rejects).

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS033", "user_error", "user-error",
    'Code that fails in eager too (or arguments Dynamo rejects)',
    why='The traced code raises on fake tensors or is called wrongly: shape/device mismatch, '
        'missing key, wrong arguments, undefined variable.',
    suggestion='Run it uncompiled (`torch.compiler.set_stance("force_eager")`) to see the '
               'error and fix the call.',
    before='return y @ torch.ones(3, 3)  # y is (4, 4)',
    after='return y @ torch.ones(4, 3)',
    ids=('GB0010 GB0011 GB0012 GB0020 GB0021 GB0064 GB0076 GB0081 GB0091 GB0111 '
         'GB0112 GB0136 GB0137 GB0167 GB0171 GB0174 GB0182 GB0196 GB0223 GB0248 '
         'GB0249 GB0285 GB0286 GB0288 GB2922 GB4315 GB5173 GB7312 GB9158 GB9840'))
