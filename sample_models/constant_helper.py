"""Constants kept in tensors made through a helper: a lambda (`mk = lambda v:
nn.Buffer(torch.tensor(v))`) and a method that registers the buffer by name, as model code that
builds many such buffers does."""

import torch
import torch.nn.functional as F
from torch import nn


class ConstantThroughHelpers(nn.Module):
    """`self.pad` is registered by `self._keep("pad", pad)`, `self.stride` made by a lambda: both
    are 0-d tensor buffers, so the `if`, the pad amounts and the slice step need their values on
    the host. One root cause, at the line that creates the first of them (the helper's call, not
    the `register_buffer` inside it), with the two uses as its sites.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 2
        category: tensor_constant
        break_at: self._keep("pad", pad)
        sites: 2
        gb_id: GB0124
        advice_contains: A constant kept in a tensor
        fix: python_constants verified
    """

    def __init__(self, width: int = 16, pad: int = 2, stride: int = 2):
        super().__init__()
        self.fc = nn.Linear(width, width)
        mk = lambda v: nn.Buffer(torch.tensor(v), persistent=False)  # noqa: E731
        self._keep("pad", pad)
        self.stride = mk(stride)

    def _keep(self, name: str, value: int) -> None:
        self.register_buffer(name, torch.tensor(value), persistent=False)

    def forward(self, x):
        h = self.fc(x)
        if self.pad > 0:
            h = F.pad(h, (self.pad, self.pad))
        return h[..., :: self.stride]


class ConstantHelpersAsInt(nn.Module):
    """Fixed twin: the same constants as Python ints.

    Expected scan (--input-shape 8,16):
        twin_of: ConstantThroughHelpers
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16, pad: int = 2, stride: int = 2):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.pad = pad
        self.stride = stride

    def forward(self, x):
        h = self.fc(x)
        if self.pad > 0:
            h = F.pad(h, (self.pad, self.pad))
        return h[..., :: self.stride]
