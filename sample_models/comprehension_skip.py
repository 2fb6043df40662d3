"""A comprehension under a skipped frame (Python 3.11: a comprehension is a frame of its own)."""

import torch
from torch import nn

FLAGS = {"scale": True, "shift": False}


class ComprehensionUnderSkip(nn.Module):
    """`self.inner` prints (a break) inside a `try`, so Dynamo skips all of `forward`; run
    eagerly, the dict comprehension at its top is a frame Dynamo compiles alone, and there it
    breaks too (`next()` on a live `dict_keyiterator`). That second break is a follow-on of the
    first, not a root cause: it goes when the print is guarded.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 3
        frames_skipped: 2
        category: frame_skipped
        cause: print
        break_at: print("inner", h.shape)
        follow_on: wanted = {f"use_{k}": FLAGS[k] and x.dim() > 1 for k in FLAGS}
        gb_id: GB0059
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        wanted = {f"use_{k}": FLAGS[k] and x.dim() > 1 for k in FLAGS}
        try:
            h = self.inner(x)
        finally:
            pass
        return h * (2 if wanted["use_scale"] else 1)

    def inner(self, x):
        h = self.fc(x)
        print("inner", h.shape)
        return h


class ComprehensionCompiled(nn.Module):
    """Fixed twin: the print guarded, so `forward` (and its comprehension) compiles whole.

    Expected scan (--input-shape 8,16):
        twin_of: ComprehensionUnderSkip
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        wanted = {f"use_{name}": FLAGS[name] and x.dim() > 1 for name in FLAGS}
        try:
            h = self.inner(x)
        finally:
            pass
        return h * (2 if wanted["use_scale"] else 1)

    def inner(self, x):
        h = self.fc(x)
        if not torch.compiler.is_compiling():
            print("inner, eager only", h.shape)
        return h
