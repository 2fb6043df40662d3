"""Boolean-mask indexing: an op whose output shape depends on the data."""

import torch
from torch import nn


class BooleanMask(nn.Module):
    """`h[h > 0]` has a data-dependent length: Dynamo breaks before it.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: dynamic_shape_op
        break_at: positive = h[h > 0]
        gb_id: GB0036
        advice_contains: Use a static-shape formulation
        fix: capture_dynamic_output_shape_ops verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        positive = h[h > 0]
        return positive.sum() * 2


class WhereMask(nn.Module):
    """Fixed twin: a static-shape formulation with `torch.where`; same outputs.

    Expected scan (--input-shape 8,16):
        twin_of: BooleanMask
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        positive = torch.where(h > 0, h, torch.zeros_like(h))
        return positive.sum() * 2
