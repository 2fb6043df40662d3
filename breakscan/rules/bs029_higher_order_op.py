"""BS029 higher_order_op: torch.cond / while_loop / scan / map / checkpoint / functorch used with arguments it does not accept.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS029", "higher_order_op", "higher-order-op",
    'torch.cond / while_loop / scan / map / checkpoint / functorch used with arguments it '
    'does not accept',
    why="A higher-order op's body or operands break its rules (non-tensor operands, "
        'differing branch outputs, an nn.Module or mutation inside the body).',
    suggestion='Pass operands as a tuple of tensors, return the same structure from both '
               'branches, and keep bodies free of mutation and module calls.',
    before='torch.cond(p, f, g, x)',
    after='torch.cond(p, f, g, (x,))',
    ids=('GB0017 GB0040 GB0041 GB0042 GB0068 GB0073 GB0074 GB0102 GB0149 GB0301 '
         'GB0302 GB0303 GB0304 GB0305 GB0306 GB0307 GB0308 GB0309 GB0310 GB0311 '
         'GB0312 GB0313 GB0314 GB0315 GB0316 GB0317 GB0318 GB0319 GB0320 GB0321 '
         'GB0322 GB0323 GB0324 GB0325 GB0326 GB0327 GB0328 GB0329 GB0330 GB0331 '
         'GB0332 GB0333 GB0334 GB0335 GB0336 GB0337 GB0338 GB0339 GB0340 GB0341 '
         'GB0342 GB0343 GB0344 GB0345 GB0349 GB0350 GB0351 GB0353 GB0355 GB0356 '
         'GB1380 GB6017 '
         'GB1075 GB1824 GB4307 GB4774 GB5884 GB6183 GB7072 GB7694 GB8165 GB8206 GB8593 GB9203 GB9509 GB9760 GB7935'))
