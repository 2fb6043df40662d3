"""A branch on a tensor's *shape*: no graph break, but a recompile per shape range.

Scan: breakscan sample_models/shape_branch.py:ShapeBranch --input-shape 8,16 --vary-batch 2,4,16
"""

import torch
from torch import nn


class ShapeBranch(nn.Module):
    """Branches on the batch size: Dynamo specialises on it and guards on it, so one scan shows
    a single clean graph, while calls with other batch sizes recompile.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
    Expected with --vary-batch 2,4,16:
        recompiles: 2
        recompiles_dynamic: 1
        guard_at: if x.shape[0] > 8:
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if x.shape[0] > 8:
            h = h * 0.5
        return torch.relu(h)


class NoShapeBranch(nn.Module):
    """Fixed twin: the scale is computed from the shape as a tensor op, so no Python branch.

    Same outputs as ShapeBranch.

    Expected scan (--input-shape 8,16):
        twin_of: ShapeBranch
        graphs: 1
        breaks: 0
        records: 0
    Expected with --vary-batch 2,4,16:
        recompiles: 1
        recompiles_dynamic: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        scale = torch.where(torch.tensor(x.shape[0] > 8), 0.5, 1.0)
        return torch.relu(h * scale)
