"""Where a target's code lives, found without importing it (the parent process stays light).

A file inside a package (``mypkg/model.py`` next to ``mypkg/__init__.py``, a ``src/`` layout, or
a namespace package its relative imports imply) is imported as ``mypkg.model`` from the folder
above the package, so its relative imports work; a module target (``mypkg.model:Net``) is mapped
back to its file, so source fixes can rewrite it. The source tree is what a fix copies.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .target import read_source


@dataclass(frozen=True)
class SourceTree:
    """How to import a target's file: from ``root``, as ``module`` (None: a lone file)."""

    file: Path  # resolved
    root: Path  # the folder to put on sys.path
    module: str | None  # dotted name inside root; None: import the file on its own
    package_dir: Path | None  # the top package folder (what a fix copies); None: a lone file

    @property
    def tree(self) -> Path:
        """The folder whose files belong to the target: its top package, or its own folder."""
        return self.package_dir or self.file.parent


def _relative_level(path: Path) -> int:
    """The deepest relative import in the file (``from ..x import y`` is 2); 0 if none."""
    try:
        source = read_source(path)  # a FIFO or /dev/zero is refused, never read
        tree = ast.parse(source.decode("utf-8")) if source is not None else None
    except (UsageError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError,
            MemoryError):
        return 0
    if tree is None:
        return 0
    return max((node.level for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level), default=0)


def source_tree(file: str | os.PathLike[str]) -> SourceTree:
    """Walk up ``__init__.py`` files from the file's folder (and as many folders as its relative
    imports need, for namespace packages) to the import root."""
    path = Path(file).resolve()
    parts = [path.stem] if path.stem != "__init__" else []
    folder = path.parent
    depth = 0
    needed = _relative_level(path)
    while (folder / "__init__.py").exists() or depth < needed:
        if folder.parent == folder:
            break
        parts.insert(0, folder.name)
        folder = folder.parent
        depth += 1
    if depth == 0:
        return SourceTree(file=path, root=path.parent, module=None, package_dir=None)
    return SourceTree(file=path, root=folder, module=".".join(parts),
                      package_dir=folder / parts[0])


def module_file(dotted: str, search: list[str] | None = None) -> Path | None:
    """The file of a module given by dotted name, looked up on ``search`` (default: the working
    directory, then sys.path) without importing anything; None when not found there."""
    rel = Path(*dotted.split("."))
    for base in search if search is not None else [os.getcwd(), *sys.path]:
        for candidate in (Path(base or ".") / rel.with_suffix(".py"),
                          Path(base or ".") / rel / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def target_file(target: str) -> Path | None:
    """The file of a target: given (``FILE.py:NAME``) or found for its module (``pkg.mod:NAME``),
    without importing it."""
    source = target.rpartition(":")[0]
    return Path(source).resolve() if source.endswith(".py") else module_file(source)
