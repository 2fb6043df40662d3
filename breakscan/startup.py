"""Process start-up: what torch prints while it is imported stays off breakscan's output.

A CUDA build of torch on a machine without a GPU logs "No CUDA runtime is found, using
CUDA_HOME=…" (``torch.utils.cpp_extension``) the first time Inductor imports it: a line ahead
of breakscan's own that scripts and CI read. :func:`keep_torch_import_notices` installs, before
torch is imported, a filter that keeps such records instead; ``--verbose`` puts them in the
report's Dynamo log (:func:`torch_import_notices`).
"""

from __future__ import annotations

import logging

# torch's loggers that speak while being imported, not about the model
_IMPORT_LOGGERS = ("torch.utils.cpp_extension",)
_KEPT: list[str] = []


class _Keep(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        _KEPT.append(f"{record.name}: {record.getMessage()}")
        return False


def keep_torch_import_notices() -> None:
    """Before torch is imported: its import-time notices are kept, not printed (once)."""
    for name in _IMPORT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Keep) for f in logger.filters):
            logger.addFilter(_Keep())


def torch_import_notices() -> list[str]:
    """What torch's import-time loggers said in this process so far (each once)."""
    return list(dict.fromkeys(_KEPT))
