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
from .state import CallState


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
    compile_only: list[tuple[Any, str]] | None = None
    dynamic: bool | None = None  # the user's torch.compile(dynamic=...)
    compile_options: dict[str, Any] = field(default_factory=dict)  # torch.compile(options=...)
    # What the model's calls change on it: every compared run starts fresh; timed calls are
    # natural unless the model fails so (``state.py``). None: not tracked.
    state: CallState | None = None

    def fresh(self) -> None:
        """Before a compared run's first call: the model as it was built."""
        if self.state is not None:
            self.state.fresh()

    def steady(self) -> None:
        """Before a timed call, once natural calls failed: the model as after one call."""
        if self.state is not None:
            self.state.steady()


def compiled_part(model: Any, dotted: str | None) -> list[tuple[Any, str]] | None:
    """``compile_only`` as (owner, method) pairs: ``"forward"`` of the model, ``"lm.forward"``
    of its submodule ``lm`` (a ``generate()`` loop in the model's own forward stays eager),
    ``"@Block.forward"`` of every submodule of that class (regional compilation: one compiled
    code for every block). ``AttributeError`` when there is no such part."""
    if not dotted:
        return None
    path, _, method = dotted.rpartition(".")
    if path.startswith("@"):
        blocks = [(m, method) for m in model.modules() if type(m).__qualname__ == path[1:]]
        if not blocks:
            raise AttributeError(f"no submodule of class {path[1:]}")
        return blocks
    owner = model
    for name in filter(None, path.split(".")):
        owner = getattr(owner, name)
    return [(owner, method)]


def model_call(loaded: LoadedTarget, options: ScanOptions) -> ModelCall:
    """The call of a loaded target, with the scan's torch.compile settings."""
    only = compiled_part(loaded.model, loaded.compile_only)
    return ModelCall(loaded.fn, loaded.args, loaded.kwargs, device=loaded.device,
                     training=loaded.training, compile_only=only, dynamic=options.dynamic,
                     compile_options=dict(options.compile_options), state=loaded.state)


def synchronize(device: torch.device) -> None:
    """Wait for the accelerator's queued work: a timed call ends when its kernels do."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
