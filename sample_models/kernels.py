"""What Inductor makes of a graph (``breakscan FILE:NAME --kernels``): one model per kernel rule
with its twin. None of them breaks the graph (1 graph, 0 breaks); the findings are inside it.

    breakscan sample_models/kernels.py:SortForMax -s 4,64 --kernels   # BS201 at the sort
    breakscan sample_models/kernels.py:CastRoundTrip -s 4,64 --kernels   # BS202 f32 → f64 → f32
    breakscan sample_models/kernels.py:HalfUpcast -s 4,64 --dtype bfloat16 --kernels   # BS202
    breakscan sample_models/kernels.py:LayoutCopy -s 8,64,256 --kernels   # BS203
    (its twin LayoutView takes the input channels-last: -s 8,256,64)
    breakscan sample_models/kernels.py:PairwiseBroadcast -s 256,8 --kernels   # BS204

ItemInGraph shows BS205 only with ``torch._dynamo.config.capture_scalar_outputs = True`` (the
Python API inside ``config.patch``; the CLI has no Dynamo-config option); breakscan's Inductor
compile of that graph then fails (its unbacked scalar needs Dynamo's own tracing context) and
the report says so.

Each twin (``MaxNoSort``, ``NoCast``, ``HalfKept``, ``LayoutView``, ``PairwiseProjected``,
``NoItem``) computes the same thing without the finding: 0 kernel findings.
"""

import torch
import torch.nn as nn


class SortForMax(nn.Module):
    """BS201: a sort to take the largest value; Inductor has no sort lowering on CPU (an ATen
    fallback between two fused kernels)."""

    def forward(self, x):
        h = torch.relu(x) * 2
        v, _ = torch.sort(h, dim=-1)
        return v[..., -1:] + 1


class MaxNoSort(nn.Module):
    """SortForMax's twin: ``amax`` is a reduction Inductor fuses: one kernel, no fallback."""

    def forward(self, x):
        h = torch.relu(x) * 2
        return h.amax(-1, keepdim=True) + 1


class CastRoundTrip(nn.Module):
    """BS202: f32 → f64 → f32 between two pointwise ops."""

    def forward(self, x):
        h = torch.relu(x)
        h = h.to(torch.float64).sin().to(torch.float32)
        return h * 3


class NoCast(nn.Module):
    """CastRoundTrip's twin: the same math in float32."""

    def forward(self, x):
        h = torch.relu(x)
        h = h.sin()
        return h * 3


class HalfUpcast(nn.Module):
    """BS202 (run with --dtype bfloat16): a float32 island in a bfloat16 graph."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64, dtype=torch.bfloat16)

    def forward(self, x):
        h = self.fc(x)
        h = h.float().softmax(-1)
        return h.sum(-1)


class HalfKept(nn.Module):
    """HalfUpcast's twin: the softmax in the model's dtype."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64, dtype=torch.bfloat16)

    def forward(self, x):
        h = self.fc(x)
        h = h.softmax(-1)
        return h.sum(-1)


class LayoutCopy(nn.Module):
    """BS203: a transpose made contiguous copies the whole (8, 256, 64) tensor."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 32))

    def forward(self, x):
        h = x.transpose(1, 2).contiguous()
        return torch.relu(h @ self.w)


class LayoutView(nn.Module):
    """LayoutCopy's twin (run with -s 8,256,64): the layout chosen once, where the input is
    made, so the matmul reads it as it is."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 32))

    def forward(self, x):
        return torch.relu(x @ self.w)


class PairwiseBroadcast(nn.Module):
    """BS204: ``a[:, None] - a[None, :]`` writes a (256, 256, 8) tensor for the matmul."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, a):
        d = a[:, None, :] - a[None, :, :]
        return torch.relu(d @ self.w)


class PairwiseProjected(nn.Module):
    """PairwiseBroadcast's twin: project first ((a_i - a_j) W = a_i W - a_j W); the broadcast
    is fused into the kernel that writes the result."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, a):
        p = a @ self.w
        return torch.relu(p[:, None, :] - p[None, :, :])


class ItemInGraph(nn.Module):
    """BS205: with capture_scalar_outputs, ``.item()`` stays in the graph as a host read."""

    def forward(self, x):
        scale = x.abs().max().item()
        return x / scale


class NoItem(nn.Module):
    """ItemInGraph's twin: the scale stays a 0-d tensor."""

    def forward(self, x):
        scale = x.abs().max()
        return x / scale
