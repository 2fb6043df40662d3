"""`copy.deepcopy` of a tensor inside forward."""

import copy

import torch
from torch import nn


class DeepCopyInForward(nn.Module):
    """Dynamo does not trace `copy.deepcopy()` of a tensor: a break; `.clone()` is the fix
    (`--fix` rewrites the line and verifies it).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: tensor_deepcopy
        break_at: snapshot = copy.deepcopy(h)
        gb_id: GB4198
        advice_contains: Use `t.clone()` (add `.detach()` when the copy
        fix: clone verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        snapshot = copy.deepcopy(h)
        return torch.tanh(h) + snapshot


class CloneInForward(nn.Module):
    """Fixed twin: `.clone()`.

    Expected scan (--input-shape 8,16):
        twin_of: DeepCopyInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        snapshot = h.clone()
        return torch.tanh(h) + snapshot
