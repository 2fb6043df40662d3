"""Random state handled in forward (`torch.manual_seed`, a `torch.Generator`): the rng family
(a generator made in forward is also an opaque object, GB0363)."""

import torch
from torch import nn


class SeedInForward(nn.Module):
    """Fixed noise made by reseeding the global RNG on every call (`torch.manual_seed(0)`):
    Dynamo skips `manual_seed` (GB0007): a break. Draw the noise once, in `__init__`, from a
    seeded generator, and keep it as a buffer (the same numbers).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: rng
        gb_id: GB0007
        advice_contains: seed once outside forward
        break_at: torch.manual_seed(0)
        fix: dont_skip_tracing no effect
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        torch.manual_seed(0)
        noise = torch.randn(h.shape[-1])
        return h + 0.01 * noise


class GeneratorInForward(nn.Module):
    """The same noise from a `torch.Generator` made per call: a generator is an opaque object,
    and one created inside the compiled region is a break (GB0363); breakscan names it by what
    it is for, random state (rng). Passing the generator on (`generator=g`) is a second break
    (GB0055), reported as a consequence of the first.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 2
        records: 3
        consequences: 1
        category: rng
        gb_id: GB0363
        advice_contains: A `torch.Generator` made in forward is an opaque object
        break_at: g = torch.Generator().manual_seed(0)
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        g = torch.Generator().manual_seed(0)
        noise = torch.randn(h.shape[-1], generator=g)
        return h + 0.01 * noise


class NoiseBuffer(nn.Module):
    """Fixed twin of both: the noise drawn once, a (non-persistent) buffer.

    Expected scan (--input-shape 8,16):
        twin_of: SeedInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        noise = torch.randn(width, generator=torch.Generator().manual_seed(0))
        self.register_buffer("noise", noise, persistent=False)

    def forward(self, x):
        return self.fc(x) + 0.01 * self.noise
