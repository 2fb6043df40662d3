"""A Python `if` on a tensor value (data-dependent branch)."""

import torch
from torch import nn


class TensorIf(nn.Module):
    """`if` on a tensor: Dynamo cannot know which way to go, so it breaks the graph.

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

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:
            h = h * 2
        else:
            h = h - 1
        return torch.tanh(h)


class TensorWhere(nn.Module):
    """Fixed twin: both branches are tensors, so `torch.where` picks without a branch.

    Same outputs as TensorIf for the same weights and inputs.

    Expected scan (--input-shape 8,16):
        twin_of: TensorIf
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        h = torch.where(h.sum() > 0, h * 2, h - 1)
        return torch.tanh(h)
