"""The pipeline: load → capture → analyse, returning one :class:`ScanResult`.

This is the Python API behind the CLI::

    from breakscan import scan
    result = scan("sample_models/item_logging.py:LogInsideForward", input_shapes=["8,16"])
    print(result.summary.graph_break_count, result.breaks[0].location())

Or, for a model already in memory, :func:`scan_callable`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .analyse import analyse, python_version
from .capture import run_eager, run_explain
from .load import (LoadedTarget, describe_inputs, importable_folder, load_target,
                   positional_names)
from .result import ScanResult


def scan_loaded(loaded: LoadedTarget, *, verbose: bool = False) -> ScanResult:
    """Capture and analyse an already loaded target."""
    label = f"{loaded.spec.name}.{loaded.method}"
    folder = loaded.search_paths[0] if loaded.search_paths else None
    with importable_folder(folder):
        printed = run_eager(loaded.fn, loaded.args, loaded.kwargs, training=loaded.training,
                            label=label)
        raw = run_explain(loaded.fn, loaded.args, loaded.kwargs, training=loaded.training,
                          verbose=verbose)
    summary, explain, graphs, breaks, frames, gaps = analyse(raw)
    # A module's own signature is (*args, **kwargs); name the inputs after its method's.
    signature_of = getattr(loaded.fn, loaded.method, loaded.fn) \
        if isinstance(loaded.fn, torch.nn.Module) else loaded.fn
    return ScanResult(
        target=str(loaded.spec), method=loaded.method, torch_version=torch.__version__,
        python_version=python_version(), device=str(loaded.device), training=loaded.training,
        inputs=describe_inputs(loaded.args, loaded.kwargs,
                               positional_names(signature_of, len(loaded.args))),
        summary=summary, explain=explain, graphs=graphs, breaks=breaks, frames=frames,
        discrepancies=gaps, capture_seconds=round(raw.seconds, 4), notes=raw.notes,
        model_output=printed + raw.model_output, dynamo_log=raw.dynamo_log)


def scan(target: str, *, input_shapes: list[str] | None = None, dtype: str = "float32",
         device: str = "cpu", inputs: str | None = None, init_args: str | None = None,
         method: str | None = None, train: bool = False, verbose: bool = False) -> ScanResult:
    """Scan ``FILE.py:NAME[.method]`` (or ``pkg.mod:NAME``) and return the result.

    Raises :class:`breakscan.errors.UsageError` (exit 2) or :class:`ModelError` (exit 3).
    """
    loaded = load_target(target, input_shapes=input_shapes, dtype=dtype, device=device,
                         inputs=inputs, init_args=init_args, method=method, train=train)
    return scan_loaded(loaded, verbose=verbose)


def scan_callable(model: torch.nn.Module | Callable[..., Any], *args: Any,
                  name: str | None = None, train: bool = False, verbose: bool = False,
                  **kwargs: Any) -> ScanResult:
    """Scan a model (or any callable) already in memory with the given inputs."""
    from .load import TargetSpec

    module = model if isinstance(model, torch.nn.Module) else torch.nn.Module()
    label = name or type(model).__name__
    source = getattr(type(model), "__module__", "<memory>")
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
    loaded = LoadedTarget(spec=TargetSpec(source=source, is_file=False, name=label, method=None),
                          model=module, method="forward", fn=model, args=args, kwargs=kwargs,
                          device=device, training=train)
    return scan_loaded(loaded, verbose=verbose)


__all__ = ["scan", "scan_callable", "scan_loaded"]
