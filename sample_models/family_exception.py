"""An exception built with keyword arguments inside forward: the exception family."""

import torch
from torch import nn


class ExceptionWithKeywords(nn.Module):
    """The model notes why it takes its fallback path as an `ImportError` carrying the
    missing module's name (`ImportError(msg, name=...)`, as torch.package raises
    `ModuleNotFoundError(msg, name=name)`). Dynamo models exception objects but not keyword
    arguments to their constructor (GB0273): a break. Pass the details positionally or keep
    them in a plain string.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: exception
        break_at: self.fallback_reason = ImportError("fused_ops is not installed", name="fused_ops")
        gb_id: GB0273
        advice_contains: Validate inputs before the compiled call and
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.fallback_reason = None

    def forward(self, x):
        h = self.fc(x)
        self.fallback_reason = ImportError("fused_ops is not installed", name="fused_ops")
        return torch.relu(h)


class ExceptionPositional(nn.Module):
    """Fixed twin: the same exception with its message only.

    Expected scan (--input-shape 8,16):
        twin_of: ExceptionWithKeywords
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.fallback_reason = None

    def forward(self, x):
        h = self.fc(x)
        self.fallback_reason = ImportError("fused_ops is not installed")
        return torch.relu(h)
