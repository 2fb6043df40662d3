"""`torch.repeat_interleave` with tensor repeats: an output size that depends on the data (the
dynamic_shape_op family)."""

import torch
from torch import nn


class RepeatByCounts(nn.Module):
    """Each row repeated by a count computed from the data (`torch.repeat_interleave(h,
    counts, dim=0)`): the output's length depends on the counts' values (GB0036, dynamic shape
    operator): a break. When the total is known in advance pass it (`output_size=`); otherwise
    keep a fixed-size layout (here: scale each row by its count).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: dynamic_shape_op
        gb_id: GB0036
        advice_contains: capture_dynamic_output_shape_ops
        fix: capture_dynamic_output_shape_ops verified
        break_at: rows = torch.repeat_interleave(h, counts, dim=0)
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        counts = (h > 0).sum(dim=1).clamp(max=2)
        rows = torch.repeat_interleave(h, counts, dim=0)
        return rows.sum(dim=0)


class WeightByCounts(nn.Module):
    """Fixed twin: the same sum, each row weighted by its count (a fixed shape).

    Expected scan (--input-shape 8,16):
        twin_of: RepeatByCounts
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        counts = (h > 0).sum(dim=1).clamp(max=2)
        return (h * counts.unsqueeze(1)).sum(dim=0)
