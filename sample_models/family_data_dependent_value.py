"""Tensors sorted by Python's `sorted()` in forward: the data_dependent_value family."""

import torch
from torch import nn


class SortedHalves(nn.Module):
    """The two halves' norms put in order with `sorted([...])`: Python compares the 0-d
    tensors, so it needs their values while tracing (GB0207, sort with non-constant keys): a
    break. Sort with tensor ops (`torch.stack(...).sort().values`).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: data_dependent_value
        gb_id: GB0207
        fix: sorted_stack verified
        advice_contains: torch.stack(xs).sort().values
        break_at: low, high = sorted([a.abs().sum(), b.abs().sum()])
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        a, b = h.chunk(2, dim=-1)
        low, high = sorted([a.abs().sum(), b.abs().sum()])
        return h * (low / high)


class StackedSort(nn.Module):
    """Fixed twin: the sort is a tensor op.

    Expected scan (--input-shape 8,16):
        twin_of: SortedHalves
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        a, b = h.chunk(2, dim=-1)
        low, high = torch.stack([a.abs().sum(), b.abs().sum()]).sort().values
        return h * (low / high)
