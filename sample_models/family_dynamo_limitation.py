"""`del` of a variable a closure captured: the dynamo_limitation family."""

import torch
from torch import nn


class DelCapturedVariable(nn.Module):
    """`del h` to free an activation early (diffusers' attention processors `del` their
    scores the same way), but `h` is also captured by a nested function, so Python compiles
    the `del` to `DELETE_DEREF`, a bytecode Dynamo has no handler for (GB0082): a break. Pass
    the tensor to the helper as an argument (or drop the `del`). Dynamo makes no resume
    function after it: the rest of forward runs eagerly, so one graph. torch 2.15 handles
    `DELETE_DEREF`: one graph, no break.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 1
        category: dynamo_limitation
        break_at: del h
        gb_id: GB0082
        advice_contains: Write the construct more plainly (a loop
        fix: none
        breaks@2.15+: 0
        records@2.15+: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)

        def residual(t):
            return torch.relu(t + h)

        y = residual(x)
        del h
        return torch.tanh(y)


class DelArgument(nn.Module):
    """Fixed twin: the helper takes the tensor as an argument; `del` is then of a plain local.

    Expected scan (--input-shape 8,16):
        twin_of: DelCapturedVariable
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        hidden = self.fc(x)

        def residual(t, skip):
            return torch.relu(t + skip)

        y = residual(x, hidden)
        del hidden
        return torch.tanh(y)
