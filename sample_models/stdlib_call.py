"""A call into the Python standard library that Dynamo cannot trace."""

import random
import time

import numpy as np

import torch
from torch import nn


class RandomJitter(nn.Module):
    """`random.random()` is a C builtin Dynamo skips: a break at the call (family rng: draw with
    `torch.rand(())` instead). torch 2.14 and 2.15 trace the draw, then fail where the number
    meets the tensor (GB0213) and skips the whole function: 0 graphs (a bare explain agrees), the break at
    the `return`, its cause the random number drawn above it.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: rng
        break_at: jitter = random.random()
        gb_id: GB0007
        advice_contains: Seeding or drawing through a function Dynamo
        fix: torch_rng changes outputs
        graphs@2.14+: 0
        frames_skipped@2.14+: 1
        category@2.14+: frame_skipped
        cause@2.14+: rng
        break_at@2.14+: return h * (1 + jitter)
        gb_id@2.14+: GB0213
        advice_contains@2.14+: torch 2.14 and later trace the draw
        fix@2.14+: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        jitter = random.random()
        return h * (1 + jitter)


class TorchJitter(nn.Module):
    """Fixed twin: `torch.rand(())` stays in the graph (different random stream).

    Expected scan (--input-shape 8,16):
        twin_of: RandomJitter
        same_outputs: no
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        jitter = torch.rand((), device=x.device)
        return h * (jitter + 1)


class TimerInForward(nn.Module):
    """`time.perf_counter()` is a C builtin Dynamo skips: a break at the call (family
    unsupported_call). Nothing in the tensor math uses the time: `--fix` guards it with
    `torch.compiler.is_compiling()`. torch 2.15 gives clock reads their own registry id
    (GB9193 "Call to a time function"), same family.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: unsupported_call
        break_at: self.started = time.perf_counter()
        gb_id: GB0007
        gb_id@2.15+: GB9193
        advice_contains: If no tensor computation uses its result
        fix: guard_side_effect verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.started = 0.0

    def forward(self, x):
        h = self.fc(x)
        self.started = time.perf_counter()
        return torch.relu(h)


class NumpyRandom(nn.Module):
    """`np.random.rand()` in forward: Dynamo traces NumPy through torch._numpy and then needs
    the random value on the host (GB0033, as for `.item()`); breakscan calls it what it is, a
    random draw (family rng), and suggests `torch.rand(())`.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: rng
        break_at: scale = 1.0 + np.random.rand() * 0.1
        gb_id: GB0033
        advice_contains: A NumPy or `random` draw that returns a Python
        fix: torch_rng changes outputs
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        scale = 1.0 + np.random.rand() * 0.1
        return h * scale
