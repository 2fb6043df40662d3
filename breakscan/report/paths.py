"""Paths as CI tools want them: relative to the working directory (the repository root in CI)."""

from __future__ import annotations

import os


def repo_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")
