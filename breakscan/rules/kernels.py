"""The catalogue's kernel rules (BS2xx): what ``--kernels`` finds inside a compiled graph.

They are part of the one registry (``catalogue.CATALOGUE``); ``analysis/kernels.py`` finds them in
Inductor's account of each graph. Checked against torch 2.13 on CPU with the sample models in
``sample_models/kernels.py``.
"""

from __future__ import annotations

from .model import FixSpec, Rule

FALLBACK = Rule(
    "BS201", "fallback", "fallback-kernel", "Op without an Inductor lowering",
    kind="kernel",
    why="Inductor has no lowering for this op and calls ATen's kernel instead: nothing "
        "fuses into it or out of it, so its inputs are written to memory and read back, "
        "and the ops around it become separate kernels.",
    suggestion="Compute only what you need with ops Inductor lowers (`amax` instead of a "
               "sort for the largest value, a reduction instead of `median`), or move the "
               "op to the start or end of the graph so the work around it still fuses.",
    before="v, _ = torch.sort(h, dim=-1)\nreturn v[..., -1:] + 1",
    after="return h.amax(-1, keepdim=True) + 1  # one fused reduction")

DTYPE_CAST = Rule(
    "BS202", "dtype_cast", "dtype-round-trip", "Dtype round trip or float32 island in a "
    "graph", kind="kernel",
    why="A value cast to another dtype and back (f32 → f64 → f32), or an upcast to float32 "
        "inside a half-precision graph, computes the ops between at the wider type: more "
        "bytes moved, slower math, and an extra pass where the cast is not fused.",
    suggestion="Compute in the model's dtype, or cast once at the graph's edge; for a "
               "numerically sensitive op in a half model, `torch.autocast` keeps the "
               "upcast inside the op that needs it.",
    before="h = h.to(torch.float64).sin().to(torch.float32)",
    after="h = h.sin()  # stays float32", fixes=("drop_round_trip",))

LAYOUT_COPY = Rule(
    "BS203", "layout_copy", "layout-copy", "Layout change that copies a large tensor",
    kind="kernel",
    why="`.transpose()`/`.permute()` followed by `.contiguous()`, `.reshape()` or a "
        "library call that needs a dense layout makes Inductor write the whole tensor "
        "again in the new order: a kernel that only moves memory.",
    suggestion="Keep the original layout and let the next op read it strided (e.g. "
               "`torch.matmul` takes transposed inputs), permute the smaller operand, or "
               "choose the layout once where the tensor is created.",
    before="h = x.transpose(1, 2).contiguous()\nreturn h @ w",
    after="return x.transpose(1, 2) @ w  # matmul reads the transposed view")

BROADCAST = Rule(
    "BS204", "broadcast", "large-broadcast", "Implicit broadcast of a large operand",
    kind="kernel",
    why="A pointwise op between tensors of different shapes broadcasts them to the full "
        "output shape: `a[:, None] - b[None, :]` makes an N×M tensor out of two vectors. "
        "When it is not fused into the reduction that follows, it is written to memory.",
    suggestion="Express it as the reduction it feeds (`torch.cdist`, a matmul, "
               "`torch.einsum`), or reduce in the same expression so Inductor fuses the "
               "broadcast away.",
    before="d = (a[:, None, :] - b[None, :, :]).pow(2).sum(-1)",
    after="d = torch.cdist(a, b).pow(2)")

HOST_SYNC_IN_GRAPH = Rule(
    "BS205", "host_sync_in_graph", "host-sync-in-graph", "Host sync inside a graph",
    kind="kernel",
    why="With `capture_scalar_outputs`, `.item()` stays in the graph as "
        "`_local_scalar_dense`: no break, but the compiled code still waits for the value "
        "on the host (a device sync on GPU) in the middle of the graph.",
    suggestion="Keep the value a 0-d tensor and use it in tensor math, or read it after "
               "the compiled call.",
    before="n = int(mask.sum().item())\nreturn h[:n]",
    after="return h * mask  # no host value needed")

KERNEL_RULES: tuple[Rule, ...] = (FALLBACK, DTYPE_CAST, LAYOUT_COPY, BROADCAST, HOST_SYNC_IN_GRAPH)

RULES = KERNEL_RULES

FIXES: tuple[FixSpec, ...] = (
    # A kernel rule's rewrite: a dtype round trip in one expression dropped.
    FixSpec("drop_round_trip", "source", "BS202",
            title="drop a dtype round trip: cast to a dtype and back in one expression",
            rewrite="casts"),
)
