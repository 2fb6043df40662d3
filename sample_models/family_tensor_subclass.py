"""A tensor subclass's `_base` read inside forward: the tensor_subclass family."""

import torch
from torch import nn


class Tagged(torch.Tensor):
    """A do-nothing tensor subclass (the kind quantization and tracing libraries wrap)."""


class SubclassViewCheck(nn.Module):
    """A "copy if it is a view" check before an in-place op, done on a tensor subclass:
    Dynamo does not trace `._base` (nor `.grad`) of a tensor subclass (GB0163): a break. On a
    subclass, apply the subclass after the check (or clone unconditionally). Dynamo makes no
    resume function after it: the rest of forward runs eagerly, so one graph.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 1
        category: tensor_subclass
        break_at: if h._base is not None:
        gb_id: GB0163
        advice_contains: Unwrap to plain tensors before the compiled
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x).as_subclass(Tagged)[:, :8]
        if h._base is not None:
            h = h.clone()
        return torch.relu(h.add_(1.0))


class PlainViewCheck(nn.Module):
    """Fixed twin: the subclass is applied to the output, so the check runs on a plain tensor
    (`as_subclass(torch.Tensor)` to unwrap inside forward breaks too: GB0001).

    Expected scan (--input-shape 8,16):
        twin_of: SubclassViewCheck
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        view = self.fc(x)[:, :8]
        if view._base is not None:
            view = view.clone()
        return torch.relu(view.add_(1.0)).as_subclass(Tagged)
