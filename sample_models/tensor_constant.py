"""Constants kept in tensors (`nn.Buffer(torch.tensor(pad))`), as audio codecs do for their
kernel sizes, strides and paddings."""

import torch
import torch.nn.functional as F
from torch import nn


class ConstantInTensor(nn.Module):
    """`self.pad` and `self.stride` are 0-d tensor buffers: the `if`, the pad amounts and the
    slice step each need their value on the host. One root cause, at the line that creates the
    first of them, with the two uses as its sites; the fix stores them as Python ints.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 2
        category: tensor_constant
        break_at: self.pad = nn.Buffer(torch.tensor(pad), persistent=False)
        sites: 2
        gb_id: GB0124
        advice_contains: A constant kept in a tensor
        fix: python_constants verified
    """

    def __init__(self, width: int = 16, pad: int = 2, stride: int = 2):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.pad = nn.Buffer(torch.tensor(pad), persistent=False)
        self.stride = nn.Buffer(torch.tensor(stride), persistent=False)

    def forward(self, x):
        h = self.fc(x)
        if self.pad > 0:
            h = F.pad(h, (self.pad, self.pad))
        return h[..., :: self.stride]


class ConstantAsInt(nn.Module):
    """Fixed twin: the same constants as Python ints (Dynamo specialises on them).

    Expected scan (--input-shape 8,16):
        twin_of: ConstantInTensor
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
