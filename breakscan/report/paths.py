"""Where a CI annotation points for a recompile (GitHub and SARIF share it); paths are
:func:`breakscan.frames.repo_path`'s."""

from __future__ import annotations

from ..frames import repo_path
from ..model.records import Recompile


def recompile_location(rec: Recompile) -> tuple[str, int]:
    """Where to annotate a recompile: the user line a failing guard names, else the function."""
    if rec.guard_lines:
        file, _, line = rec.guard_lines[0].rpartition(":")
        if line.isdigit():
            return repo_path(file), int(line)
    return repo_path(rec.file), rec.line
