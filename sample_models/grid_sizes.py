"""Sizes taken from iterating a tensor, as vision-language models walk each image's patch grid
(`for t, h, w in grid_thw:`) to reshape its patches."""

import torch
from torch import nn


class GridSizes(nn.Module):
    """`for t, h, w in self.grid_thw:` hands each step three 0-d tensors; `.view(t, h // m, m,
    w, -1)` needs their values on the host, so Dynamo breaks at `int(t * hh * w)` on every step
    (inside a loop: it skips `forward`, which runs eagerly). The line a person changes is the
    `for` line: the root is there, the use its site, and the advice turns the sizes into Python
    ints once (`.tolist()` before the loop, or passed in), not "keep it as a 0-d tensor".

    Expected scan (--input-shape 8,16):
        graphs: 0
        breaks: 1
        records: 1
        frames_skipped: 1
        category: frame_skipped
        cause: item
        break_at: for t, hh, w in self.grid_thw:
        sites: 1
        gb_id: GB0124
        advice_contains: come from iterating the tensor
        fix: capture_scalar_outputs verified
    """

    def __init__(self, width: int = 16, merge: int = 2):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.grid_thw = nn.Buffer(torch.tensor([[1, 2, 2], [1, 2, 2]]), persistent=False)
        self.merge = merge

    def forward(self, x):
        h = self.fc(x)
        out, start = [], 0
        for t, hh, w in self.grid_thw:
            n = int(t * hh * w)
            patches = h[start:start + n].reshape(n, -1)
            out.append(patches.view(t, hh // self.merge, self.merge, w, -1).sum(2))
            start += n
        return torch.cat([o.flatten() for o in out])


class GridSizesAsInts(GridSizes):
    """Fixed twin: the sizes as Python ints, made once when the model is built (`.tolist()` of
    the buffer inside `forward` would still break once: its values are data to Dynamo).

    Expected scan (--input-shape 8,16):
        twin_of: GridSizes
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16, merge: int = 2):
        super().__init__(width, merge)
        self.sizes = [tuple(row) for row in self.grid_thw.tolist()]

    def forward(self, x):
        h = self.fc(x)
        out, start = [], 0
        for t, hh, w in self.sizes:
            n = int(t * hh * w)
            patches = h[start:start + n].reshape(n, -1)
            out.append(patches.view(t, hh // self.merge, self.merge, w, -1).sum(2))
            start += n
        return torch.cat([o.flatten() for o in out])
