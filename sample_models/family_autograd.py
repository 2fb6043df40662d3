"""Autograd driven from inside forward (`torch.autograd.grad`, `requires_grad_()` on an
intermediate): the autograd family."""

import torch
from torch import nn


class GradInForward(nn.Module):
    """A gradient penalty computed in forward with `torch.autograd.grad(...,
    create_graph=True)`: Dynamo does not trace `autograd.grad` unless
    `torch._dynamo.config.trace_autograd_ops` is on (GB9186): a break. Here the gradient has a
    closed form (d/dW of sum((Wx+b)^2) is 2 hᵀx); otherwise take it outside the compiled
    region, or turn the setting on. torch 2.15 cannot resume inside the `with enable_grad()`
    block: it skips the whole forward (0 graphs), the same break its cause.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: autograd
        gb_id: GB9186
        fix: trace_autograd_ops verified
        advice_contains: trace_autograd_ops
        break_at: (g,) = torch.autograd.grad(h.pow(2).sum(), self.fc.weight, create_graph=True)
        graphs@2.15+: 0
        frames_skipped@2.15+: 1
        category@2.15+: frame_skipped
        cause@2.15+: autograd
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with torch.enable_grad():
            h = self.fc(x)
            (g,) = torch.autograd.grad(h.pow(2).sum(), self.fc.weight, create_graph=True)
        return h + g.norm()



class GradientPenalty(nn.Module):
    """WGAN-GP's gradient penalty in forward: the critic's gradient at points mixed from two
    halves of the batch. Captured (Dynamo's own graphs run as they are) it is one
    `autograd.grad` break (GB9186). Compiled with Inductor it fails on every call: `mixed` leaves
    the first graph as an output of AOTAutograd's function, so `autograd.grad` differentiates a
    tensor the score does not depend on ("The differentiated Tensor at index 0 appears to not
    have been used in the graph"). `--time` reports that as torch.compile failing with
    backend=inductor (exit 3, the break kept); `--fix --time` verifies
    `trace_autograd_ops`, which makes it compile as one graph.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: autograd
        gb_id: GB9186
        fix: trace_autograd_ops verified
        advice_contains: trace_autograd_ops
        break_at: (g,) = torch.autograd.grad(score.sum(), mixed, create_graph=True)
        graphs@2.15+: 0
        frames_skipped@2.15+: 1
        category@2.15+: frame_skipped
        cause@2.15+: autograd
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(width, 32), nn.Tanh(), nn.Linear(32, 1))
        self.mix = nn.Parameter(torch.full((1, width), 0.5))

    def forward(self, x):
        real, fake = x.chunk(2)
        with torch.enable_grad():
            mixed = self.mix * real + (1 - self.mix) * fake
            score = self.critic(mixed)
            (g,) = torch.autograd.grad(score.sum(), mixed, create_graph=True)
        return score.mean() + ((g.norm(dim=1) - 1) ** 2).mean()

class GradClosedForm(nn.Module):
    """Fixed twin: the same gradient written out.

    Expected scan (--input-shape 8,16):
        twin_of: GradInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        with torch.enable_grad():
            h = self.fc(x)
            g = 2 * h.t() @ x
        return h + g.norm()


class LeafInForward(nn.Module):
    """A new autograd leaf made from an intermediate (`h.detach().requires_grad_()`), to take
    gradients with respect to it later: an intermediate that requires grad leaving the compiled
    region is a break (GB8985). Make the leaf outside forward, or drop it when no gradient
    is taken.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: autograd
        gb_id: GB8985
        advice_contains: call it on the input in the caller
        break_at: feats = h.detach().requires_grad_()
        fix: trace_autograd_ops no effect
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.head = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        feats = h.detach().requires_grad_()
        return self.head(feats), feats


class NoLeafInForward(nn.Module):
    """Fixed twin: the features returned detached; the caller makes the leaf.

    Expected scan (--input-shape 8,16):
        twin_of: LeafInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.head = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        feats = h.detach()
        return self.head(feats), feats
