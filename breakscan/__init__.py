"""breakscan: find, explain and fix torch.compile graph breaks.

Flow: load → capture → analyse → measure → report/gate. The Python API mirrors the CLI::

    from breakscan import scan
    result = scan("model.py:MyNet", input_shapes=["8,16"])

Names that need torch are imported on first use, so ``import breakscan`` (and its pytest plugin)
stays cheap until a scan runs.
"""

from typing import Any

from .errors import BreakscanError, ModelError, UsageError
from .model.result import SCHEMA_VERSION, ScanResult
from .version import __version__

__all__ = ["scan", "scan_callable", "run_program", "ScanOptions", "ProgramOptions", "TimingOptions", "GateOptions", "Limits",
           "assert_max_graph_breaks", "GraphBreakError", "ScanResult", "SCHEMA_VERSION",
           "BreakscanError", "UsageError", "ModelError", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("scan", "scan_callable"):
        from .pipeline import scan as module
    elif name == "run_program":
        from .pipeline import program_scan as module
    elif name in ("ScanOptions", "ProgramOptions", "TimingOptions", "GateOptions", "Limits"):
        from . import options as module
    elif name in ("assert_max_graph_breaks", "GraphBreakError"):
        from .testing import assertions as module
    else:
        raise AttributeError(f"module 'breakscan' has no attribute {name!r}")
    return getattr(module, name)
