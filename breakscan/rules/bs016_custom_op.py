"""BS016 custom_op: Operator that cannot run on fake tensors.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Match, Rule

RULE = Rule(
    "BS016", "custom_op", "custom-op-fake",
    'Operator that cannot run on fake tensors',
    why='A custom op with no or a failing fake (meta) implementation, a non-PT2-compliant '
        'op, or a Triton kernel call Dynamo cannot wrap.',
    suggestion='Register a fake implementation that only computes output shapes/dtypes '
               '(`@op.register_fake`, no data reads; '
               '`torch.library.get_ctx().new_dynamic_size()` for data-dependent sizes).',
    before='@scale.register_fake\ndef _(x):\n    return x.new_empty(int(x.sum()))',
    after='@scale.register_fake\ndef _(x):\n    return torch.empty_like(x)',
    chain_matches=(Match("GB0033", r"torch/_library/custom_ops\.py|^custom_op: "),
                   Match("GB4315", r"torch/_library/custom_ops\.py|^custom_op: ")),
    matches=(Match("GB4315", r"fake impl|fake kernel|register_fake"),),
    ids=('GB0043 GB0049 GB0087 GB0090 GB0216 GB0361 GB2977 GB3326 GB4026 GB6735 '
         'GB3069'))
