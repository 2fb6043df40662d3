"""Models whose first call takes a Python path later calls skip.

A hook installed once, a warning issued once, a buffer initialised lazily: the first call — the
one a user's first compiled call makes — breaks, later calls do not. An eager warm-up before the
capture would hide every one of these; breakscan captures the first call of a freshly built
model and then a later call, and marks each break with the calls it appears on. A one-time path
in a frame Dynamo skipped leaves its split in the compiled code, which later calls reuse
(`HooksOnceInHelper`).

Scan: breakscan sample_models/first_call.py:WarnOnce --input-shape 8,16
"""

import warnings

import torch
from torch import nn


class WarnOnce(nn.Module):
    """Warns about a deprecated input layout on its first call only.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: print
        calls: first_only
        break_at: warnings.warn("WarnOnce: input layout is deprecated")
        explain_breaks: 1
        gb_id: GB0007
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: reorderable_logging_functions verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self._warned = False

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if not self._warned:
            warnings.warn("WarnOnce: input layout is deprecated")
            self._warned = True
        return self.fc2(h)


class LazyScale(nn.Module):
    """Initialises a scale from the first batch it sees (`.item()` on the first call only).

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: item
        calls: first_only
        break_at: self.scale = h.detach().abs().mean().item()
        explain_breaks: 1
        gb_id: GB0124
        advice_contains: Keep the value as a 0-d tensor
        fix: capture_scalar_outputs verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.scale = None

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.scale is None:
            self.scale = h.detach().abs().mean().item()
        return self.fc2(h) * self.scale


class HookOnce(nn.Module):
    """Installs a forward hook on its first call.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: hook
        calls: first_only
        break_at: self.fc2.register_forward_hook(_keep_output)
        explain_breaks: 1
        gb_id: GB0467
        advice_contains: Register hooks outside forward
        fix: switch:_hooked=not current verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self._hooked = False

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if not self._hooked:
            self.fc2.register_forward_hook(_keep_output)
            self._hooked = True
        return self.fc2(h)


def _keep_output(module, inputs, output):
    return output


class PrintAfterFirstCall(nn.Module):
    """Prints a call counter from the second call on: clean on the first call, breaks later.

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
        later_breaks: 1
        calls: later_only
        category: print
        break_at: print("call", self.calls)
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.calls = 0

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        self.calls += 1
        if self.calls > 1:
            print("call", self.calls)
        return self.fc2(h)


class InitInConstructor(nn.Module):
    """Fixed twin: the one-time work happens in `__init__`, so every call is the same graph.

    Expected scan (--input-shape 8,16):
        twin_of: LazyScale
        same_outputs: no
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.scale = 1.0  # fixed at construction, or computed once outside forward

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h) * self.scale


class HooksOnceInHelper(nn.Module):
    """Installs forward hooks on its first call, in a helper that loops over its layers (as
    transformers' output capturing does). The loop makes Dynamo skip the helper and split
    `forward` at the call; later calls install nothing, yet the code compiled on the first call
    is reused, so **every** call still runs two graphs with a return to Python between them.
    Calling the model once before `torch.compile` (or installing the hooks in `__init__`) gives
    one graph.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 2
        frames_skipped: 1
        category: frame_skipped
        cause: hook
        calls: first_only
        break_at: layer.register_forward_hook(_keep_output)
        graph_calls_per_call: 2.0
        fires_per_call: 1.0
        gb_id: GB0467
        advice_contains: Register hooks outside forward
        fix: switch:_hooked=not current verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(2))
        self._hooked = False

    def forward(self, x):
        h = torch.relu(self.layers[0](x))
        self.install_hooks()
        return self.layers[1](h)

    def install_hooks(self):
        if self._hooked:
            return
        for layer in self.layers:
            layer.register_forward_hook(_keep_output)
        self._hooked = True


class HooksInInit(nn.Module):
    """Fixed twin: the hooks installed in `__init__`; every call is one graph.

    Expected scan (--input-shape 8,16):
        twin_of: HooksOnceInHelper
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(2))
        for block in self.layers:
            block.register_forward_hook(_keep_output)

    def forward(self, x):
        h = torch.relu(self.layers[0](x))
        return self.layers[1](h)
