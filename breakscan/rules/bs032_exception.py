"""BS032 exception: Exception handling Dynamo cannot model.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS032", "exception", "exception",
    'Exception handling Dynamo cannot model',
    why='Raising/catching exceptions in forward in forms Dynamo cannot trace (non-exception '
        'values, keyword args, traceback access), or an exception raised while tracing.',
    suggestion='Validate inputs before the compiled call and keep exceptions out of '
               "forward's normal path; use `torch._check` for checks.",
    before='if x.dim() != 2:\n    raise ValueError(msg=...)',
    after='torch._check(x.dim() == 2)',
    ids=('GB0028 GB0050 GB0051 GB0057 GB0088 GB0089 GB0095 GB0135 GB0273 GB9625 '
         'GB1273'),
    smallest_region=True)
