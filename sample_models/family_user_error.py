"""A call probed with a keyword it may not take (`try: ... except TypeError:`): user_error."""

import inspect

import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, h):
        return torch.sigmoid(self.fc(h)) * h


class SignatureProbe(nn.Module):
    """Feature detection by calling: try the layer with an extra keyword and fall back on
    `TypeError` (timm's `_efficientnet_builder.py` probes `se_layer(8, rd_ratio=1.0)` the same
    way, at build time). Traced in forward, the call whose arguments cannot bind is a user
    error to Dynamo (GB7312), and a break inside `try:` skips the whole frame: forward runs
    eagerly (the gate's own forward, called from there, compiles alone: the one graph). Decide
    once in `__init__` (`inspect.signature`) and call the right form. torch 2.14 traces the
    failed call and its `except TypeError:` branch: one graph, no break; so does 2.15.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 1
        category: frame_skipped
        cause: user_error
        frames_skipped: 1
        break_at: out = self.gate(h, scale=2.0)
        frames_run_eagerly_per_call: 1
        gb_id: GB7312
        advice_contains: Run it uncompiled
        fix: none
        breaks@2.14+: 0
        records@2.14+: 0
        frames_skipped@2.14+: 0
        frames_run_eagerly_per_call@2.14+: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.gate = Gate(width)

    def forward(self, x):
        h = self.fc(x)
        try:
            out = self.gate(h, scale=2.0)
        except TypeError:
            out = self.gate(h)
        return torch.relu(out)


class SignatureKnown(nn.Module):
    """Fixed twin: whether the gate takes `scale` is decided once, in `__init__`.

    Expected scan (--input-shape 8,16):
        twin_of: SignatureProbe
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.gate = Gate(width)
        self.gate_takes_scale = "scale" in inspect.signature(self.gate.forward).parameters

    def forward(self, x):
        h = self.fc(x)
        out = self.gate(h, scale=2.0) if self.gate_takes_scale else self.gate(h)
        return torch.relu(out)
