"""A tensor's storage address compared in forward (`data_ptr()`): the object_identity family."""

import torch
from torch import nn


class AliasCheck(nn.Module):
    """Copy before writing in place only if the reshape returned a view: the test compares
    storage addresses (`flat.data_ptr() == h.data_ptr()`). An address is a run-time fact
    Dynamo cannot know while tracing (GB5976): a break. Write out of place instead (or compare
    the tensors themselves, `is`).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: object_identity
        gb_id: GB5976
        advice_contains: `data_ptr()` is a run-time address
        break_at: if flat.data_ptr() == h.data_ptr():
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        flat = h.reshape(-1)
        if flat.data_ptr() == h.data_ptr():
            flat = flat.clone()
        flat.mul_(2.0)
        return h + flat.view_as(h)


class OutOfPlace(nn.Module):
    """Fixed twin: out of place, nothing to alias.

    Expected scan (--input-shape 8,16):
        twin_of: AliasCheck
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        return h + h * 2.0
