"""Context managers Dynamo cannot enter in forward (a module-level `threading.Lock`, cuDNN's
flags, `fork_rng`): the context_manager family."""

import threading

import torch
from torch import nn

SCALES: dict[int, float] = {}
SCALES_LOCK = threading.Lock()


class LockedCache(nn.Module):
    """A shared, thread-safe cache of per-width scales filled in forward (`with SCALES_LOCK:`).
    Dynamo does not know how to enter a `threading.Lock` (GB0142), and a break in a `with`
    block skips the whole frame: forward runs eagerly, no graph at all (the Linear it calls is
    torch's own code, not compiled on its own). Compute the scale once in `__init__`.

    Expected scan (--input-shape 8,16):
        graphs: 0
        breaks: 1
        records: 1
        category: frame_skipped
        cause: context_manager
        gb_id: GB0142
        fix: disable_region verified
        frames_skipped: 1
        advice_contains: Take the lock in the caller around the model call
        break_at: with SCALES_LOCK:
        frames_run_eagerly_per_call: 1
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with SCALES_LOCK:
            scale = SCALES.setdefault(x.shape[-1], x.shape[-1] ** -0.5)
        return torch.relu(self.fc(x)) * scale


class ScaleInInit(nn.Module):
    """Fixed twin: the scale is a constant of the module.

    Expected scan (--input-shape 8,16):
        twin_of: LockedCache
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scale = width ** -0.5

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale


class CudnnOffBlock(nn.Module):
    """cuDNN switched off around one activation (`with torch.backends.cudnn.flags(...)`), as
    audio encoders do around an RNN. Calling `flags()` returns a non-tensor (GB0208) and Dynamo
    cannot enter what it returned (GB0142): two records, one construct, one root cause named
    after the manager. The flags are global settings read when kernels run: set them around the
    call in the caller.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 2
        category: frame_skipped
        cause: context_manager
        gb_id: GB0142
        gb_id@2.14+: GB0208
        advice_contains: set them around the call in the caller
        break_at: with torch.backends.cudnn.flags(enabled=False):
        fix: hoist_context verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        x = self.fc(x)
        with torch.backends.cudnn.flags(enabled=False):
            y = torch.relu(x)
        return y * 2


class ForkedNoise(nn.Module):
    """Noise drawn inside `torch.random.fork_rng()`, so the global generator does not advance.
    One root cause (GB0142, the GB0208 of the `fork_rng()` call its context). No guard is safe
    here: skipping the block when compiling would drop the noise, so the fix moves the `with`
    to the caller around the model call (the noise drawn is the same). torch 2.15 skips the
    whole forward at the `with` (0 graphs; only the GB0208 record).

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 2
        category: frame_skipped
        cause: context_manager
        gb_id: GB0142
        gb_id@2.14+: GB0208
        graphs@2.15+: 0
        records@2.15+: 1
        advice_contains: Move the `with torch.random.fork_rng():` to the caller
        break_at: with torch.random.fork_rng():
        fix: hoist_context verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        x = self.fc(x)
        with torch.random.fork_rng():
            noise = torch.randn_like(x)
        return x + noise


class NoiseFromCaller(nn.Module):
    """Fixed twin: the caller draws the noise (inside `fork_rng()` if it must) and passes it in.

    Expected scan (--input-shape 8,16):
        twin_of: ForkedNoise
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
        same_outputs: no
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x, noise=None):
        x = self.fc(x)
        return x + (noise if noise is not None else torch.zeros_like(x))
