"""A tensor `if` inside a block the model stacks 24 times: one break site, 24 breaks per call.

The unique counts (graphs 3, root-cause breaks 1) look harmless; at run time the compiled model
returns to Python 24 times per call and runs the loop over the blocks eagerly. This is the
README's headline pair: `--fix` rewrites the branch with `torch.where` and the same-process
timing shows what that is worth.
"""

import torch
from torch import nn

DEPTH = 24


class Block(nn.Module):
    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 10:
            h = h * 2
        return torch.relu(h) + x


class PerLayerBranch(nn.Module):
    """Every block branches on a tensor: Dynamo skips the loop's frame and breaks in each block.

    Expected scan (--input-shape 8,16):
        graphs: 3
        breaks: 1
        records: 2
        frames_skipped: 1
        category: frame_skipped
        cause: data_dependent_branch
        break_at: if h.mean() > 10:
        graph_calls_per_call: 48
        eager_gaps_per_call: 24
        frames_run_eagerly_per_call: 1
        fires_per_call: 24
        gb_id: GB0170
        advice_contains: Make it branchless: `torch.where(cond, a, b)`
        fix: torch_where verified
    """

    def __init__(self, width: int = 16, depth: int = DEPTH):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class WhereBlock(nn.Module):
    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        h = torch.where(h.mean() > 10, h * 2, h)
        return torch.relu(h) + x


class PerLayerWhere(nn.Module):
    """Fixed twin: `torch.where` keeps every block in one graph, called once per call.

    Same outputs as PerLayerBranch for the same weights and inputs.

    Expected scan (--input-shape 8,16):
        twin_of: PerLayerBranch
        graphs: 1
        breaks: 0
        records: 0
        graph_calls_per_call: 1
        eager_gaps_per_call: 0
        frames_run_eagerly_per_call: 0
    """

    def __init__(self, width: int = 16, depth: int = DEPTH):
        super().__init__()
        self.blocks = nn.ModuleList(WhereBlock(width) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
