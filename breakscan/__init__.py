"""breakscan: find, explain and fix torch.compile graph breaks.

Flow: load → capture → analyse → report. The Python API mirrors the CLI::

    from breakscan import scan
    result = scan("model.py:MyNet", input_shapes=["8,16"])
"""

from .errors import BreakscanError, ModelError, UsageError
from .result import SCHEMA_VERSION, ScanResult
from .scan import TimingOptions, scan, scan_callable

__version__ = "0.1.0"
__all__ = ["scan", "scan_callable", "TimingOptions", "ScanResult", "SCHEMA_VERSION", "BreakscanError",
           "UsageError", "ModelError", "__version__"]
