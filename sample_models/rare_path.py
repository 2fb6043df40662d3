"""A break on a path these inputs never take: only the static lint can show it.

Scan: breakscan sample_models/rare_path.py:RarePathPrint --input-shape 8,16
(then --input-shape 128,16 to take the path and see the break happen).
"""

import torch
from torch import nn


class RarePathPrint(nn.Module):
    """A print only for batches over 64: batch 8 compiles to one graph, batch 128 breaks.

    The scan's static section lists the print as "not exercised by these inputs".

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if x.shape[0] > 64:
            print("large batch", x.shape)
        return torch.relu(h)


class RarePathGuarded(nn.Module):
    """Fixed twin: the print runs only in eager mode, whatever the batch.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if x.shape[0] > 64 and not torch.compiler.is_compiling():
            print("large batch (eager only)", x.shape)
        return torch.relu(h)
