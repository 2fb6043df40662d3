"""`nn.Parameter(...)` built inside forward: the nn_module family."""

import torch
import torch.nn.functional as F
from torch import nn


class ParameterInForward(nn.Module):
    """A pruning mask applied by wrapping the masked weight in a new `nn.Parameter` on every
    call. Dynamo does not trace the `nn.Parameter()` constructor (GB0264): a break. The masked
    weight needs no wrapper: use the plain tensor (the gradient still reaches `fc.weight`).
    Another member of the family: an `nn.GRU`/`nn.LSTM` call (GB0014, `allow_rnn` off; e.g.
    transformers' EnCodec and Parakeet use `nn.LSTM`) skips the whole frame.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: nn_module
        break_at: weight = nn.Parameter(self.fc.weight * self.mask)
        gb_id: GB0264
        advice_contains: Create parameters in `__init__`
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("mask", (torch.arange(width * width) % 3 != 0).float().view(width, width))

    def forward(self, x):
        h = torch.tanh(x)
        weight = nn.Parameter(self.fc.weight * self.mask)
        return F.linear(h, weight, self.fc.bias)


class MaskedWeight(nn.Module):
    """Fixed twin: the masked weight as a plain tensor.

    Expected scan (--input-shape 8,16):
        twin_of: ParameterInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("mask", (torch.arange(width * width) % 3 != 0).float().view(width, width))

    def forward(self, x):
        h = torch.tanh(x)
        weight = self.fc.weight * self.mask
        return F.linear(h, weight, self.fc.bias)
