"""A sparse tensor made in forward (`to_sparse()`, `torch.sparse.mm`): the
sparse_nested_tensor family."""

import torch
from torch import nn


class SparseAdjacency(nn.Module):
    """A graph layer's adjacency kept sparse (`adj.to_sparse()`, then `torch.sparse.mm`):
    Dynamo does not trace sparse tensors (GB0277, then GB0015 twice at the same line: one root),
    and the break skips forward's frame. At this size keep it dense (`adj @ h`); for a large, really
    sparse matrix run that step outside the compiled region.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 3
        category: frame_skipped
        cause: sparse_nested_tensor
        gb_id: GB0277
        frames_skipped: 1
        advice_contains: Create sparse tensors outside the compiled region
        break_at: out = torch.sparse.mm(adj.to_sparse(), h)
        frames_run_eagerly_per_call: 1
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        adj = (x @ x.t() > 0).float()
        out = torch.sparse.mm(adj.to_sparse(), h)
        return torch.relu(out)


class DenseAdjacency(nn.Module):
    """Fixed twin: a dense matmul.

    Expected scan (--input-shape 8,16):
        twin_of: SparseAdjacency
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        adj = (x @ x.t() > 0).float()
        out = adj @ h
        return torch.relu(out)
