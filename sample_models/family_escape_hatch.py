"""A `nonstrict_trace` function handed an object it cannot flatten: the escape_hatch family."""

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class ScaleOptions:
    scale: float = 2.0
    shift: float = 0.5


@torch._dynamo.nonstrict_trace
def rescale(h, options):
    return h * options.scale + options.shift


@torch._dynamo.nonstrict_trace
def rescale_values(h, scale, shift):
    return h * scale + shift


class NonstrictWithObject(nn.Module):
    """`torch._dynamo.nonstrict_trace` traces its function outside Dynamo, but its inputs
    must be tensors, constants or pytree-registered types: a plain dataclass is not, so the
    call is a break (GB0236). Pass the fields (or `torch.utils._pytree.register_dataclass`
    the class). Three graphs: forward up to the call, `rescale` compiled as a frame of its
    own when it runs eagerly, and the rest of forward.

    Expected scan (--input-shape 8,16):
        graphs: 3
        breaks: 1
        records: 1
        category: escape_hatch
        break_at: h = rescale(h, self.options)
        gb_id: GB0236
        advice_contains: Pass tensors/pytrees of tensors, define the
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.options = ScaleOptions()

    def forward(self, x):
        h = self.fc(x)
        h = rescale(h, self.options)
        return torch.relu(h)


class NonstrictWithValues(nn.Module):
    """Fixed twin: the dataclass's fields passed as plain values.

    Expected scan (--input-shape 8,16):
        twin_of: NonstrictWithObject
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.options = ScaleOptions()

    def forward(self, x):
        h = self.fc(x)
        h = rescale_values(h, self.options.scale, self.options.shift)
        return torch.relu(h)
