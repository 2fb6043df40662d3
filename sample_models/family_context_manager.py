"""A module-level `threading.Lock` entered in forward: the context_manager family."""

import threading

import torch
from torch import nn

SCALES: dict[int, float] = {}
SCALES_LOCK = threading.Lock()


class LockedCache(nn.Module):
    """A shared, thread-safe cache of per-width scales filled in forward (`with SCALES_LOCK:`).
    Dynamo does not know how to enter a `threading.Lock` (GB0142), and a break in a `with`
    block skips the whole frame: forward runs eagerly, no graph at all (the Linear it calls is
    torch's own code, not compiled on its own). Compute the scale once in `__init__`.

    Expected scan (--input-shape 8,16):
        graphs: 0
        breaks: 1
        records: 1
        category: frame_skipped
        cause: context_manager
        gb_id: GB0142
        fix: disable_region verified
        frames_skipped: 1
        advice_contains: take the lock (or enter the manager) in the caller
        break_at: with SCALES_LOCK:
        frames_run_eagerly_per_call: 1
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with SCALES_LOCK:
            scale = SCALES.setdefault(x.shape[-1], x.shape[-1] ** -0.5)
        return torch.relu(self.fc(x)) * scale


class ScaleInInit(nn.Module):
    """Fixed twin: the scale is a constant of the module.

    Expected scan (--input-shape 8,16):
        twin_of: LockedCache
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scale = width ** -0.5

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale
