"""Locations a person reads: which installed libraries a report's paths are in (their versions,
said once; each path is shown from the package's top module by :func:`~breakscan.frames.
display_path`), and a graph's source lines folded into line ranges per file."""

from __future__ import annotations

import os
from typing import Any

from ..frames import display_path, is_user_file, package_path, package_version, split_location


def libraries(result: Any) -> str:
    """'transformers 5.23.0, diffusers 0.42.1': the installed packages other than torch whose
    files the report names (breaks, their call chains, graphs' lines, compiled frames)."""
    files = [b.file for b in result.breaks] + [f.file for b in result.breaks
                                                for f in b.call_chain]
    files += [f.file for f in getattr(result, "frames", [])]
    files += [loc.rpartition(":")[0] for g in result.graphs for loc in g.source_lines]
    tops = dict.fromkeys(p.split("/")[0] for p in map(package_path, files) if p)
    return ", ".join(f"{top} {package_version(top) or '(version unknown)'}" for top in tops
                     if top != "torch")


def line_ranges(locations: list[str]) -> list[tuple[str, str, str]]:
    """A graph's ``file:line`` source lines as (file name, the path shown, folded line ranges),
    one per file, the user's files first: ``("modeling_bert.py", "transformers/models/bert/
    modeling_bert.py", "170, 188–190, 247–262")``."""
    by_file: dict[str, list[int]] = {}
    for loc in locations:
        parsed = split_location(loc)
        if parsed is not None:
            by_file.setdefault(parsed[0], []).append(parsed[1])
    order = sorted(by_file, key=lambda f: not is_user_file(f))  # stable: user files first
    return [(os.path.basename(f), display_path(f), _folded(by_file[f])) for f in order]


def _folded(lines: list[int]) -> str:
    """'170, 188–190, 247–262' for consecutive runs of line numbers."""
    runs: list[list[int]] = []
    for line in sorted(set(lines)):
        if runs and line == runs[-1][1] + 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)
