"""The source lines a report shows: read from the files on the machine that scanned, carried in
a result that travels, and never read again from a file such a result names.

A ``check --results`` line comes from another machine (a fork's CI job, a shared volume): a
break in it may name ``/proc/self/environ`` or any private file of the machine that merges. So
the shard records, when it writes the line, every line its reports will show
(:func:`carry_sources`), and a result read back from a file (``merge``, ``--resume``) is shown
from what it carries only (:func:`from_file`). A live scan's result carries nothing and is shown
from the files it ran (under ``source_roots`` for a trace). Imports no torch.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

from ..frames import is_user_file, source_lines, split_location
from .result import ScanResult, SourceExcerpt

WHOLE_FILE_LINES = 600  # the HTML report shows a user file this short whole (html.py)
MAX_CARRIED_FILES = 500  # a result read back shows at most this many files
MAX_CARRIED_LINES = 200_000  # a longer file is not shown from a line (nothing of it is)
WINDOW = 12  # else, and for library files, this many lines either side of a named line


def _locations(value: Any, depth: int = 0) -> Iterator[tuple[str, int]]:
    """Every (file, line) a result names: a record's ``file``/``line``, a ``"file.py:12"``."""
    if depth > 40:
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        file, line = getattr(value, "file", None), getattr(value, "line", None)
        if isinstance(file, str) and isinstance(line, int) and not isinstance(line, bool):
            yield file, line
        for f in dataclasses.fields(value):
            if f.name not in ("sources", "model_output", "dynamo_log"):
                yield from _locations(getattr(value, f.name), depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _locations(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _locations(item, depth + 1)
    elif isinstance(value, str) and value.endswith(tuple("0123456789")) and ".py:" in value:
        parsed = split_location(value)
        if parsed is not None:
            yield parsed


def carry_sources(result: ScanResult) -> dict[str, SourceExcerpt]:
    """The lines the reports of ``result`` show, read now from the Python files it names (as
    a live report would read them: regular files, under ``source_roots`` when set): a short
    user file whole, else windows around each named line."""
    named: dict[str, set[int]] = {}
    for file, line in _locations(result):
        if file.endswith(".py") and line > 0:
            named.setdefault(file, set()).add(line)
    carried: dict[str, SourceExcerpt] = {}
    for file, lines in named.items():
        text = source_lines(file, result.source_roots)
        if not text:
            continue
        if is_user_file(file) and len(text) <= WHOLE_FILE_LINES:
            keep = range(1, len(text) + 1)
        else:
            keep = sorted({n for line in lines
                           for n in range(max(1, line - WINDOW), min(len(text), line + WINDOW) + 1)})
        carried[file] = SourceExcerpt(line_count=len(text), windows=_windows(keep, text))
    return carried


def _windows(numbers: Any, text: list[str]) -> list[tuple[int, list[str]]]:
    """Runs of consecutive line numbers (ascending) as (first, their lines)."""
    windows: list[tuple[int, list[str]]] = []
    for n in numbers:
        if windows and windows[-1][0] + len(windows[-1][1]) == n:
            windows[-1][1].append(text[n - 1])
        else:
            windows.append((n, [text[n - 1]]))
    return windows


def from_file(result: ScanResult) -> ScanResult:
    """A result read back from a file someone else wrote: shown from the lines it carries only
    (none when it carries none), never from a file or a folder it names."""
    result.source_roots = []
    kept: dict[str, SourceExcerpt] = {}
    for file, excerpt in list((result.sources or {}).items())[:MAX_CARRIED_FILES]:
        windows = [(first, lines) for first, lines in excerpt.windows
                   if 0 < first and first + len(lines) - 1 <= excerpt.line_count and lines]
        if not windows:
            continue
        # A longer file is shown as windows around lines it carries: the lines past its last
        # window are never shown, so they are not made (a forged count cannot cost time).
        last = max(first + len(lines) - 1 for first, lines in windows)
        shown = max(last + WINDOW + 1, WHOLE_FILE_LINES + 1)
        kept[file] = SourceExcerpt(line_count=min(excerpt.line_count, shown), windows=windows)
    result.sources = kept
    return result


def shown_lines(result: ScanResult, file: str) -> list[str]:
    """The lines of ``file`` a report may show for ``result`` (empty: show none): those it
    carries, else the file's own."""
    if result.sources is None:
        return source_lines(file, result.source_roots)
    excerpt = result.sources.get(file)
    if excerpt is None or not 0 < excerpt.line_count <= MAX_CARRIED_LINES:
        return []
    lines = ["\n"] * excerpt.line_count
    for first, window in excerpt.windows:
        lines[first - 1:first - 1 + len(window)] = window
    return lines[:excerpt.line_count]
