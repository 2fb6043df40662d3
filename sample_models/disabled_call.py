"""A call into a `torch.compiler.disable`d function."""

import torch
from torch import nn


@torch.compiler.disable
def rescale(h):
    return h * 0.5 + 1


def rescale_traced(h):
    return h * 0.5 + 1


class CallsDisabled(nn.Module):
    """`rescale` is decorated with `torch.compiler.disable`: it runs eagerly by design, so the
    graph ends before the call. The advice names `rescale()` and its line.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: disabled_call
        break_at: h = rescale(h)
        gb_id: GB0098
        advice_contains: is decorated with `torch.compiler.disable`
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        h = rescale(h)
        return torch.tanh(h)


class CallsTraced(nn.Module):
    """Fixed twin: the same arithmetic without the decorator.

    Expected scan (--input-shape 8,16):
        twin_of: CallsDisabled
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        h = rescale_traced(h)
        return torch.tanh(h)
