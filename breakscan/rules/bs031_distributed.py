"""BS031 distributed: Distributed feature outside Dynamo's support.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS031", "distributed", "distributed",
    "Distributed feature outside Dynamo's support",
    why='`async_op=True` collectives, P2P ops, FSDP with use_orig_params=False and similar '
        'are not traced.',
    suggestion='Use `async_op=False` (the default) inside the compiled region, FSDP '
               '`use_orig_params=True`, or enable P2P compilation.',
    before='dist.all_reduce(t, async_op=True).wait()',
    after='dist.all_reduce(t)',
    settings=(('enable_p2p_compilation', True),),
    ids=('GB0053 GB0172 GB0181 GB0210 GB0282 GB1750 GB2696 GB3343 GB9300 GB9860 GB5210'))
