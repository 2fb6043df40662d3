"""A branch on a tensor's *shape*: no break, one graph per shape (recompiles)."""

import torch
from torch import nn


class ShapeBranch(nn.Module):
    """Branches on `x.shape[1]`: Dynamo specialises on the shape and guards on it, so one
    scan shows a single clean graph; other widths recompile (see --vary-batch).

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        if x.shape[1] == 16:
            x = x * 2
        return self.fc(x)


class NoShapeBranch(nn.Module):
    """Fixed twin: no shape-dependent Python branch.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x * 2)
