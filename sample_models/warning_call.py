"""`warnings.warn` inside forward."""

import warnings

import torch
from torch import nn


class WarnInForward(nn.Module):
    """Dynamo does not trace `warnings.warn`: a break (a logging call, BS003). `--fix` tries the
    settings Dynamo's hint names (`reorderable_logging_functions`, `ignore_logging_functions`)
    and the `is_compiling()` guard, and says what each did.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: print
        break_at: warnings.warn("activations are large")
        gb_id: GB0007
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: reorderable_logging_functions verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        warnings.warn("activations are large")
        return torch.tanh(h)


class WarnGuarded(nn.Module):
    """Fixed twin: the warning only when not compiling.

    Expected scan (--input-shape 8,16):
        twin_of: WarnInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if not torch.compiler.is_compiling():
            warnings.warn("activations are large (eager only)")
        return torch.tanh(h)
