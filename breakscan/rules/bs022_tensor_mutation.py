"""BS022 tensor_mutation: Change of a tensor's storage or metadata.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS022", "tensor_mutation", "tensor-mutation",
    "Change of a tensor's storage or metadata",
    why='`.data =`, `resize_`, `set_`, `share_memory_`, in-place view ops on inputs or '
        "mismatched `out=` tensors change a tensor behind Dynamo's back.",
    suggestion='Use out-of-place ops and return the new tensor; assign parameters outside '
               'forward.',
    before='self.w.data = self.w.data * 0.9',
    after='return x @ (self.w * 0.9)',
    ids=('GB0056 GB0058 GB0072 GB0126 GB0127 GB0128 GB0220 GB0240 GB0241 GB0242 '
         'GB0247 GB4197 '
         'GB0998 GB1576 GB5282 GB5491 GB7020 GB7905 GB8587 GB6602 GB9182'))
