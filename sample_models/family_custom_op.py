"""A custom operator whose fake (meta) implementation reads tensor data: the custom_op family."""

import torch
from torch import nn


@torch.library.custom_op("breakscan_samples::soft_root", mutates_args=())
def soft_root(x: torch.Tensor) -> torch.Tensor:
    return x.abs().sqrt()


@soft_root.register_fake
def _(x):
    if float(x.abs().max()) > 1e6:  # a check copied from the real kernel: reads the data
        raise ValueError("input too large")
    return torch.empty_like(x)


@torch.library.custom_op("breakscan_samples::soft_root_shape_only", mutates_args=())
def soft_root_shape_only(x: torch.Tensor) -> torch.Tensor:
    return x.abs().sqrt()


@soft_root_shape_only.register_fake
def _(x):
    return torch.empty_like(x)


class FakeReadsData(nn.Module):
    """The custom op's fake implementation validates the input's values: while tracing the
    tensors are fake, without data, so the read is a data-dependent operator (GB0033) inside
    torch's custom-op machinery (torch/_library/custom_ops.py): a break at the op's call, which
    runs eagerly. A fake implementation computes only the output's shape and dtype; keep checks
    in the real kernel.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: custom_op
        gb_id: GB0033
        advice_contains: only computes output shapes/dtypes
        break_at: r = soft_root(h)
        fix: capture_scalar_outputs no effect
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        r = soft_root(h)
        return torch.tanh(r) + h


class FakeShapeOnly(nn.Module):
    """Fixed twin: the same op with a fake implementation that only makes the output.

    Expected scan (--input-shape 8,16):
        twin_of: FakeReadsData
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        r = soft_root_shape_only(h)
        return torch.tanh(r) + h
