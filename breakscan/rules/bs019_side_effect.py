"""BS019 side_effect: Side effect Dynamo cannot replay.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Match, Rule

RULE = Rule(
    "BS019", "side_effect", "side-effect",
    'Side effect Dynamo cannot replay',
    why='Mutating Python state from inside a higher-order op (activation checkpointing, '
        'torch.cond bodies) or in forms Dynamo cannot model (class attributes, computed '
        'setattr names, __class__).',
    suggestion='Change Python state outside the compiled function: return the value and '
               'update the state in the caller (class attributes, attributes set by a '
               'computed name, `__class__`, a mapping being iterated); inside forward keep '
               'to plain attributes set by constant names.',
    before='def block(h):\n    STATS.append(1)\n    return lin(h)',
    after='def block(h):\n    return lin(h)  # STATS.append(1) in the caller',
    matches=(Match("GB0067", r"checkpoint"),),
    advice_by_id=(("GB0067", 'Python state mutated inside a checkpointed function (`torch.utils.checkpoint`) '
                          'cannot be replayed in backward: move the mutation to the caller (return the '
                          'value), or set `torch._dynamo.config.'
                          'skip_fwd_side_effects_in_bwd_under_checkpoint = True` if not replaying it '
                          'is fine (`--fix` tries it: Dynamo\'s hint names it).'),
                  ("GB4413", "Python state changed inside a higher-order op's body (a "
                          '`torch.utils.checkpoint`ed block, a `torch.cond` branch): move the change (a '
                          'counter, a list append) out of the block into the caller, which may change '
                          'Python state freely.')),
    ids=('GB0067 GB0097 GB0169 GB0189 GB0198 GB0254 GB0271 GB0358 GB0467 GB1177 '
         'GB2404 GB3241 GB3697 GB4271 GB4413 GB7502 '
         'GB6815 GB8949 GB1392 GB1940'))
