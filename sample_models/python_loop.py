"""A Python loop over a tensor's rows: not a graph break, but it unrolls.

Dynamo unrolls a loop over a static range into straight-line ops: one graph, no break, but the
op count grows with the batch size and every new batch size recompiles. Vectorise instead.
"""

import torch
from torch import nn


class LoopOverRows(nn.Module):
    """Processes the batch one row at a time in Python.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
        ops: 26
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        rows = []
        for row in x:
            rows.append(torch.relu(row) * 2)
        return self.fc(torch.stack(rows))


class VectorisedRows(nn.Module):
    """Fixed twin: one op for the whole batch; same outputs as LoopOverRows.

    Expected scan (--input-shape 8,16):
        twin_of: LoopOverRows
        graphs: 1
        breaks: 0
        records: 0
        ops: 3
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(torch.relu(x) * 2)
