"""The lint's findings for the scanned model's class, checked against the run: where it broke,
where a frame Dynamo skipped ran eagerly, which lines ran, which were never reached by these
inputs (``StaticFinding.status``).
"""

from __future__ import annotations

import torch

from ..errors import UsageError
from ..model.records import StaticFinding
from ..model.result import ScanResult
from .load import LoadedTarget


def lint_model(loaded: LoadedTarget) -> tuple[list[StaticFinding], str | None]:
    """The static findings for the scanned model's class (in the file that defines it)."""
    import inspect

    from ..lint.run import lint_file

    owner = type(loaded.model) if isinstance(loaded.fn, torch.nn.Module) or \
        loaded.method != "forward" else None
    try:
        path = inspect.getsourcefile(owner) if owner is not None else None
    except TypeError:  # a built-in or dynamically made class
        path = None
    if owner is None or path is None or owner.__module__.startswith("torch."):
        return [], None
    entry = owner.__name__ if loaded.method == "forward" else f"{owner.__name__}.{loaded.method}"
    try:
        return lint_file(path, only=entry), None
    except UsageError as exc:
        return [], f"static lint skipped: {exc}"


def cross_check(static: list[StaticFinding], result: ScanResult,
                executed: dict[str, set[int]]) -> list[StaticFinding]:
    """Mark each static finding: the run broke there, ran it eagerly in a frame Dynamo skipped,
    ran through it, or never reached it."""
    import os

    broke = {(os.path.realpath(b.file), b.line) for b in result.breaks}
    skipped = skipped_spans(result)
    for finding in static:
        where = os.path.realpath(finding.file)
        if (where, finding.line) in broke:
            finding.status = "break"
        elif any(file == where and first <= finding.line <= last for file, first, last in skipped):
            finding.status = "not traced"
        elif finding.line in executed.get(finding.file, ()):
            finding.status = "ran"
        else:
            finding.status = "not exercised"
    return static


def skipped_spans(result: ScanResult) -> list[tuple[str, int, int]]:
    """(file, first line, last line) of every function Dynamo skipped (it ran eagerly)."""
    import ast
    import os

    from ..frames import module_ast

    spans = []
    for frame in result.frames:
        tree = module_ast(frame.file) if frame.skipped and frame.file else None
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name == frame.name.rpartition(".")[2] and \
                    min([node.lineno] + [d.lineno for d in node.decorator_list]) \
                    <= frame.first_line <= node.lineno:
                spans.append((os.path.realpath(frame.file), node.lineno, node.end_lineno or
                              node.lineno))
    return spans
