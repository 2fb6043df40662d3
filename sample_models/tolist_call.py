"""`.tolist()` of a float tensor inside forward."""

import torch
from torch import nn


class TolistInForward(nn.Module):
    """Reads per-feature scales as a Python list: a break (and a device sync).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: tolist_numpy
        break_at: scales = self.scale.abs().tolist()
        gb_id: GB0109
        advice_contains: Keep the data as tensors
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scale = nn.Parameter(torch.ones(width))

    def forward(self, x):
        h = self.fc(x)
        scales = self.scale.abs().tolist()
        return h * scales[0]


class IntTolistInForward(nn.Module):
    """`.tolist()` of an integer tensor: Dynamo files it under a data-dependent operator
    (GB0033, as it does `.item()`); breakscan names what was written, `.tolist()`.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: tolist_numpy
        break_at: counts = (h > 0).sum(-1).tolist()
        gb_id: GB0033
        advice_contains: Keep the data as tensors
        fix: capture_scalar_outputs verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        counts = (h > 0).sum(-1).tolist()
        return h * max(counts)


class TensorIndexInstead(nn.Module):
    """Fixed twin: index the tensor instead of converting it; same outputs.

    Expected scan (--input-shape 8,16):
        twin_of: TolistInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scale = nn.Parameter(torch.ones(width))

    def forward(self, x):
        h = self.fc(x)
        return h * self.scale.abs()[0]
