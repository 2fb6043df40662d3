"""A call into the Python standard library that Dynamo cannot trace."""

import random

import torch
from torch import nn


class RandomJitter(nn.Module):
    """`random.random()` is a C builtin Dynamo skips: a break at the call.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: unsupported_call
        break_at: jitter = random.random()
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        jitter = random.random()
        return h * (1 + jitter)


class TorchJitter(nn.Module):
    """Fixed twin: `torch.rand(())` stays in the graph (different random stream).

    Expected scan (--input-shape 8,16):
        twin_of: RandomJitter
        same_outputs: no
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        jitter = torch.rand((), device=x.device)
        return h * (1 + jitter)
