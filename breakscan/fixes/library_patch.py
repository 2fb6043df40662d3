"""A break inside an installed library: the same rewrites as in the user's code, made on a copy of
the library's file and proved in the fix's child (``kind="library"``).

The planner (:func:`plan_library_patches`, no torch) tries the rewrites that keep what the code
computes (a host-only check guarded, a tensor ``if`` as ``torch.where``, host calls as torch ops,
a container looked up by a tensor index) at the library's line, and labels the diff with the
package, its version and the file's path inside it: a patch to carry, or to send upstream.

The child (:func:`patch_model`) never writes into site-packages: it executes the patched source
as a new module object (its ``__file__`` a copy in the child's temporary folder, so Dynamo's
records name the patched lines) and moves the fixed copy's objects whose class the file defines
onto the patched class (``obj.__class__``). The original copy keeps the installed classes, so
both run in one process for the interleaved timing. A patch that only a module-level function
called from another file would see cannot be proved this way, and says so.
"""

from __future__ import annotations

import hashlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import read_source
from ..frames import is_torch_file, package_path, package_version
from ..model.verdicts import Fix, FixMetrics
from ..rules.catalogue import rule_for_fix

# The rewrites tried on a library's line: each keeps the code's computation.
LIBRARY_REWRITES = ("guard_side_effect", "torch_where", "torch_equivalent", "tensor_lookup",
                    "hoist_context")


@dataclass
class Package:
    """Where an installed file belongs: its top package, version and path inside it."""

    name: str
    version: str
    relative: str  # transformers/models/bert/modeling_bert.py


def installed_package(file: str) -> Package | None:
    """The installed package holding ``file`` (None for the user's code and torch's own)."""
    relative = package_path(file)
    if relative is None or is_torch_file(file):
        return None
    top = relative.split("/", 1)[0]
    return Package(top, package_version(top), relative)


def plan_library_patches(brk: Any, before: FixMetrics,
                         seen: set) -> list[tuple[Fix, str, str | None]]:
    """(fix, patched source, the manager the caller enters: ``hoist_context``) for each rewrite
    that applies at the break's library line."""
    from .rewrite import unified_diff
    from .source_fixes import propose_rewrite

    package = installed_package(brk.file) if brk.file else None
    if package is None:
        return []
    try:
        source, original = read_source(brk.file)
    except (OSError, UnicodeDecodeError):
        return []
    out = []
    for fix_id in LIBRARY_REWRITES:
        if (fix_id, brk.file, brk.line) in seen:
            continue
        seen.add((fix_id, brk.file, brk.line))
        rewrite = propose_rewrite(source, brk.line, fix_id, category=brk.root_category)
        if rewrite.new_source is None:
            continue  # a library's line: only what applies is worth a word
        fix = Fix(rule=rule_for_fix(fix_id, brk.root_category), fix_id=fix_id, kind="library",
                  title=f"patch {package.name} {package.version or '(version unknown)'} "
                        f"({package.relative}): {rewrite.title}",
                  category=brk.root_category, file=brk.file, line=brk.line, before=before,
                  diff=unified_diff(source, rewrite.new_source, package.relative))
        fix.source_sha256 = hashlib.sha256(original).hexdigest()
        out.append((fix, rewrite.new_source, rewrite.around))
    return out


def patch_model(model: Any, file: str, new_source: str, tmp: Path) -> int:
    """Move the objects of ``model`` whose class ``file`` defines onto the classes of the
    patched source (executed as a new module, never written over the installed file); returns
    how many objects moved. ``UsageError`` when the file is not imported or nothing moved."""
    from ..errors import UsageError

    resolved = Path(file).resolve()
    installed = next((m for m in list(sys.modules.values())
                      if getattr(m, "__file__", None) and Path(m.__file__).resolve() == resolved),
                     None)
    if installed is None:
        raise UsageError(f"not applicable: {file} is not imported by the model")
    package = installed_package(file)
    copy = tmp / "library" / (package.relative if package else resolved.name)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(new_source, encoding="utf-8")
    patched = types.ModuleType(installed.__name__)
    patched.__file__ = str(copy)
    patched.__package__ = installed.__package__
    patched.__spec__ = installed.__spec__  # relative imports resolve against the installed one
    # The library's own file, patched: what the installed module would run.
    exec(compile(new_source, str(copy), "exec"), patched.__dict__)  # noqa: S102
    from ..pipeline.state import model_objects

    moved = 0
    for _, obj in model_objects(model):
        cls = type(obj)
        if cls.__module__ != installed.__name__ or "." in cls.__qualname__:
            continue
        new_cls = getattr(patched, cls.__qualname__, None)
        if isinstance(new_cls, type) and new_cls is not cls:
            obj.__class__ = new_cls
            moved += 1
    if not moved:
        raise UsageError(f"not applicable: no object of the model has a class {resolved.name} "
                         "defines (the patched code is reached through a function another file "
                         "calls); apply the patch to the installed file to try it")
    return moved
