"""The scanned model's inputs: random tensors of the asked shapes (token ids below the model's
smallest embedding table), inputs moved to the device, the report's rows describing them, and
the check that the model's signature takes them (before anything runs).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch
from torch import nn

from ..errors import UsageError

DEFAULT_INT_HIGH = 100  # token ids in [0, 100) unless the model has a smaller embedding table


def embedding_bound(model: nn.Module) -> int:
    sizes = [m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)]
    return min(sizes) if sizes else DEFAULT_INT_HIGH


def make_tensor(shape: list[int], dtype: torch.dtype, device: torch.device,
                int_high: int) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device)
    if dtype == torch.bool:
        return torch.rand(shape, device=device) > 0.5
    return torch.randint(0, max(int_high, 1), shape, dtype=dtype, device=device)


def to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value



def describe_inputs(args: tuple[Any, ...], kwargs: dict[str, Any], names: list[str]):
    """InputSpec rows for the report (shape and dtype for tensors, the type otherwise)."""
    from ..model.result import InputSpec

    rows = []
    items = list(zip(names, args)) + list(kwargs.items())
    for name, value in items:
        if isinstance(value, torch.Tensor):
            rows.append(InputSpec(name=name, shape=list(value.shape),
                                  dtype=str(value.dtype).replace("torch.", "")))
        else:
            rows.append(InputSpec(name=name, shape=None, dtype=None, kind=type(value).__name__))
    return rows


def positional_names(fn: Callable[..., Any], count: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(count)]


def check_arity(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                label: str) -> None:
    """Catch 'too many/too few inputs' before running anything (exit 2, not a traceback)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        wanted = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
        raise UsageError(f"{label}{sig} got {len(args)} positional input(s): {exc}; pass one "
                         f"--input-shape per input ({len(wanted)} required)") from None
