"""Dropout in train mode around a tensor `if`: randomness that must not fail a verified fix."""

import torch
from torch import nn


class DropoutBranch(nn.Module):
    """A tensor `if` between two dropouts. In train mode (`--train`) compiled Inductor draws its
    own random numbers, so compiled and eager differ unless both draw the same ones: `--fix`
    compiles with `fallback_random` and verifies the `torch.where` rewrite (outputs match).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: data_dependent_branch
        break_at: if h.sum() > 0:
        gb_id: GB0170
        advice_contains: Make it branchless: `torch.where(cond, a, b)`
        fix: torch_where verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        h = self.drop(self.fc(x))
        if h.sum() > 0:
            h = h * 2
        else:
            h = h - 1
        return self.drop(torch.tanh(h))


class DropoutWhere(nn.Module):
    """Fixed twin: `torch.where` instead of the `if`; the same random draws in the same order.

    Same outputs as DropoutBranch for the same weights, inputs and seed.

    Expected scan (--input-shape 8,16):
        twin_of: DropoutBranch
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        h = self.drop(self.fc(x))
        h = torch.where(h.sum() > 0, h * 2, h - 1)
        return self.drop(torch.tanh(h))
