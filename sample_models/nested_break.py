"""A break two levels down: a submodule calls a helper in another file that uses `.item()`.

One source break cuts every enclosing frame: explain reports several graphs and reasons for it;
breakscan reports one root-cause break at the helper's line, with the call chain to it.
"""

import torch
from torch import nn

from nested_helpers import normalise, normalise_and_log


class Block(nn.Module):
    def __init__(self, width: int, fixed: bool):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.fixed = fixed

    def forward(self, h):
        h = self.fc(h)
        h = normalise(h) if self.fixed else normalise_and_log(h)
        return torch.relu(h)


class NestedBreak(nn.Module):
    """The break is in nested_helpers.py, called from Block, called from here.

    Expected scan (--input-shape 8,16):
        graphs: 6
        breaks: 1
        records: 3
        category: item
        break_at: nested_helpers.py: peak = h.abs().max().item()
        explain_breaks: 5
        gb_id: GB0124
        advice_contains: Keep the value as a 0-d tensor
        fix: capture_scalar_outputs verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.block = Block(width, fixed=False)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        h = self.inp(x)
        h = self.block(h)
        return self.out(h)


class NestedFixed(nn.Module):
    """Fixed twin: the helper keeps the peak as a tensor; same outputs.

    Expected scan (--input-shape 8,16):
        twin_of: NestedBreak
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.block = Block(width, fixed=True)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        h = self.inp(x)
        h = self.block(h)
        return self.out(h)
