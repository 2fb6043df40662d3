"""`.item()` used for logging inside forward — the most common graph break.

Scan: breakscan sample_models/item_logging.py:LogInsideForward --input-shape 8,16
"""

import torch
from torch import nn


class LogInsideForward(nn.Module):
    """Logs a statistic with `.item()`: a GPU->CPU sync and a graph break mid-forward.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: item
        break_at: self.last_mean = h.mean().item()
        explain_breaks: 1
        gb_id: GB0124
        advice_contains: Keep the value as a 0-d tensor
        fix: capture_scalar_outputs verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.last_mean = 0.0

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        self.last_mean = h.mean().item()
        return self.fc2(h)


class LogOutsideForward(nn.Module):
    """Fixed twin: keeps the statistic as a 0-d tensor; log it after the call.

    Expected scan (--input-shape 8,16):
        twin_of: LogInsideForward
        same_outputs: no
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h), h.mean()
