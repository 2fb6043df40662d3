"""An object of a registered opaque type created in forward: the opaque_object family."""

import torch
from torch import nn
from torch._library.opaque_object import register_opaque_type
from torch._opaque_base import OpaqueBase


class RunningStats(OpaqueBase):
    """Host-side statistics a custom op can take as an argument (a reference-type opaque
    object: torch.compile passes it through without looking inside)."""

    def __init__(self):
        self.calls = 0


try:
    register_opaque_type(RunningStats, typ="reference")
except RuntimeError:  # this file imported again in the same process: already registered
    pass


class StatsPerCall(nn.Module):
    """A fresh `RunningStats()` made on every call: an opaque object cannot be created inside
    the compiled region (GB0363): a break. Create it once, outside (in `__init__`), and use
    that one.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: opaque_object
        gb_id: GB0363
        advice_contains: Create it before `torch.compile`
        break_at: stats = RunningStats()
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.stats = None

    def forward(self, x):
        h = self.fc(x)
        stats = RunningStats()
        self.stats = stats
        return torch.relu(h)


class StatsInInit(nn.Module):
    """Fixed twin: one `RunningStats` made in `__init__`.

    Expected scan (--input-shape 8,16):
        twin_of: StatsPerCall
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.stats = RunningStats()

    def forward(self, x):
        h = self.fc(x)
        return torch.relu(h)
