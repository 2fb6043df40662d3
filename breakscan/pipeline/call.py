"""The scanned model's call as every stage makes it: one :class:`ModelCall`, built once after
load, passed to capture, the eager run, the recompile check and measure instead of each taking
the callable, its inputs, grad mode, device and the user's torch.compile settings one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..options import ScanOptions
from .load import LoadedTarget


@dataclass(frozen=True)
class ModelCall:
    """``fn(*args, **kwargs)`` on ``device``, in training or inference mode, compiled the way
    the user compiles it."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    device: torch.device
    training: bool = False
    # Compile only this method of this object while ``fn`` runs eagerly: (owner, method).
    compile_only: tuple[Any, str] | None = None
    dynamic: bool | None = None  # the user's torch.compile(dynamic=...)
    compile_options: dict[str, Any] = field(default_factory=dict)  # torch.compile(options=...)


def model_call(loaded: LoadedTarget, options: ScanOptions) -> ModelCall:
    """The call of a loaded target, with the scan's torch.compile settings."""
    only = (loaded.model, loaded.compile_only) if loaded.compile_only else None
    return ModelCall(loaded.fn, loaded.args, loaded.kwargs, device=loaded.device,
                     training=loaded.training, compile_only=only, dynamic=options.dynamic,
                     compile_options=dict(options.compile_options))


def synchronize(device: torch.device) -> None:
    """Wait for the accelerator's queued work: a timed call ends when its kernels do."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
