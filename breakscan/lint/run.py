"""The lint's entry points: parse a Python file or source text and walk it for findings.

:func:`lint_file` reads and decodes the file (its coding cookie honoured), :func:`lint_source`
parses it with ``ast`` and runs :class:`breakscan.lint.walker.Walker`; every way the text can
fail to be linted (missing, a directory, undecodable, not Python, nested too deep) is one
UsageError line. ``breakscan lint`` and a scan's static section call these.
"""

from __future__ import annotations

import ast
import os
import warnings
from importlib.util import decode_source

from ..errors import UsageError
from ..model.records import StaticFinding
from .walker import Walker


def lint_source(source: str, filename: str, *, only: str | None = None) -> list[StaticFinding]:
    """Findings in ``source`` (sorted by line; one per line and category).

    ``only``: a class (its ``forward``), ``Class.method`` or a module-level function to start
    from instead of every nn.Module's ``forward``. Raises UsageError (one line) when the source
    is not valid Python or ``only`` names nothing in it.
    """
    try:
        with warnings.catch_warnings():  # the model's own SyntaxWarnings are not lint's to show
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        msg = " ".join(str(exc.msg).split())
        raise UsageError(f"{filename}: not valid Python (line {exc.lineno}): {msg}") from None
    except (RecursionError, MemoryError):
        raise UsageError(f"{filename}: code nested too deeply to lint") from None
    except ValueError as exc:  # e.g. null bytes
        raise UsageError(f"{filename}: not valid Python: {' '.join(str(exc).split())}") from None
    try:
        return Walker(tree, source, os.path.abspath(filename)).run(only)
    except RecursionError:
        raise UsageError(f"{filename}: code nested too deeply to lint") from None


def lint_file(path: str | os.PathLike, *, only: str | None = None) -> list[StaticFinding]:
    """Findings in the Python file at ``path`` (see lint_source).

    UsageError (one line) for a missing file, a directory, undecodable text or a SyntaxError.
    """
    name = os.fspath(path)
    if os.path.isdir(name):
        raise UsageError(f"{name} is a directory, not a Python file")
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        source = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError) as exc:
        raise UsageError(f"{name}: not valid Python source text: "
                         f"{' '.join(str(exc).split())}") from None
    return lint_source(source, name, only=only)
