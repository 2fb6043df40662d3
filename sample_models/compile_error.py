"""A model `torch.compile` cannot compile at all: not a graph break, a compile error."""

import torch
from torch import nn


class CompileFails(nn.Module):
    """Index assignment with tuples of 0-d tensors (`rows, cols = zip(*ind)`, as a real
    document-understanding model does): eager runs, every compiled call raises
    `TorchRuntimeError` (fake tensors). breakscan reports a compile error and exits 3.

    Expected scan (--input-shape 8,16):
        graphs: 0
        breaks: 0
        records: 0
        compile_error: keep[rows, cols] = False
        exception: TorchRuntimeError
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("picked", torch.tensor([[0, 1], [1, 3], [0, 7]]), persistent=False)

    def forward(self, x):
        h = self.fc(x)
        rows, cols = zip(*self.picked)
        keep = torch.ones_like(h, dtype=torch.bool)
        keep[rows, cols] = False
        return h * keep


class CompileFixed(nn.Module):
    """Fixed twin: index with the columns of the index tensor (two 1-d tensors).

    Expected scan (--input-shape 8,16):
        twin_of: CompileFails
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("picked", torch.tensor([[0, 1], [1, 3], [0, 7]]), persistent=False)

    def forward(self, x):
        h = self.fc(x)
        keep = torch.ones_like(h, dtype=torch.bool)
        keep[self.picked[:, 0], self.picked[:, 1]] = False
        return h * keep
