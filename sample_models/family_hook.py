"""A tensor hook with a side effect registered in forward: the hook family."""

import torch
from torch import nn

GRAD_NORMS: list = []


class HookInForward(nn.Module):
    """Grad-CAM style: the activation's gradient is wanted even in evaluation, so forward
    builds the graph (`torch.enable_grad()`) and records the gradient's norm with
    `h.register_hook(...)`, the hook appending to a global list: a side effect Dynamo cannot
    put in the backward graph (GB0067): a break. Keep what the hook records in a tensor
    (a buffer it writes), or record outside the compiled region.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: hook
        gb_id: GB0067
        advice_contains: register the hook outside forward
        fix: skip_fwd_side_effects_in_bwd_under_checkpoint no effect
        break_at: h.register_hook(lambda g: GRAD_NORMS.append(g.norm()))
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with torch.enable_grad():
            h = self.fc(x)
            h.register_hook(lambda g: GRAD_NORMS.append(g.norm()))
        return torch.relu(h)


class HookOutsideForward(nn.Module):
    """Fixed twin: forward returns the activation as well, and the caller registers the hook on
    it, outside the compiled region (`out, h = model(x); h.register_hook(...)`): no break on
    any torch.

    Expected scan (--input-shape 8,16):
        twin_of: HookInForward
        graphs: 1
        breaks: 0
        records: 0
        same_outputs: no
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with torch.enable_grad():
            h = self.fc(x)
        return torch.relu(h), h


class HookIntoBuffer(nn.Module):
    """A tempting fix that holds only on some releases: the hook writes the norm into a buffer
    (a tensor op, traced on 2.13 and 2.14). torch 2.15 traces the hook's body as a higher-order
    op, where writing a buffer is an input mutation (GB0041): a break again, in the hook family.
    Register the hook outside forward instead (HookOutsideForward).

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 0
        records: 0
        graphs@2.15+: 2
        breaks@2.15+: 1
        records@2.15+: 1
        category@2.15+: hook
        gb_id@2.15+: GB0041
        break_at@2.15+: h.register_hook(lambda g: self.grad_norm.copy_(g.norm()))
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("grad_norm", torch.zeros(()), persistent=False)

    def forward(self, x):
        with torch.enable_grad():
            h = self.fc(x)
            h.register_hook(lambda g: self.grad_norm.copy_(g.norm()))
        return torch.relu(h)
