"""An explicit `torch._dynamo.graph_break()` left in the code."""

import torch
from torch import nn


class ExplicitBreak(nn.Module):
    """Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: explicit_break
        break_at: torch._dynamo.graph_break()
        gb_id: GB0025
        advice_contains: Remove the `torch._dynamo.graph_break()` call
        fix: remove_graph_break verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        torch._dynamo.graph_break()
        return self.fc2(h)


class NoExplicitBreak(nn.Module):
    """Fixed twin; same outputs.

    Expected scan (--input-shape 8,16):
        twin_of: ExplicitBreak
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h)
