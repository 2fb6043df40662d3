"""A `dict_items` view kept on the module and iterated in forward: the iteration family."""

import torch
from torch import nn


class ItemsView(nn.Module):
    """The per-branch scales kept as a view (`self.scales = scales.items()`) and iterated in
    forward: Dynamo does not know how to iterate a `dict_items` it did not make itself (GB0811,
    missing tp_iter): a break at the loop, which runs in Python (the graph is the Linear before
    it). Keep the dict and call `.items()` in forward.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 1
        category: iteration
        gb_id: GB0811
        gb_id@2.14+: GB9493
        advice_contains: pass the dict, list or tuple itself
        break_at: for name, scale in self.scales:
        eager_gaps_per_call: 1
        fix: disable_region no effect
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scales = {"relu": 1.0, "tanh": 0.5}.items()

    def forward(self, x):
        h = self.fc(x)
        out = torch.zeros_like(h)
        for name, scale in self.scales:
            out = out + scale * getattr(torch, name)(h)
        return out


class DictKept(nn.Module):
    """Fixed twin: the dict itself, `.items()` called in forward.

    Expected scan (--input-shape 8,16):
        twin_of: ItemsView
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scales = {"relu": 1.0, "tanh": 0.5}

    def forward(self, x):
        h = self.fc(x)
        out = torch.zeros_like(h)
        for name, scale in self.scales.items():
            out = out + scale * getattr(torch, name)(h)
        return out
