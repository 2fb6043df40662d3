"""Paths as CI tools want them: relative to the repository root (``$GITHUB_WORKSPACE`` when
set, else the working directory); a file outside it keeps its absolute path."""

from __future__ import annotations

import os

from ..result import Recompile


def repo_path(path: str) -> str:
    base = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def recompile_location(rec: Recompile) -> tuple[str, int]:
    """Where to annotate a recompile: the user line a failing guard names, else the function."""
    if rec.guard_lines:
        file, _, line = rec.guard_lines[0].rpartition(":")
        if line.isdigit():
            return repo_path(file), int(line)
    return repo_path(rec.file), rec.line
