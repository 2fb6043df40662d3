"""``--fix --write``: the verified source fixes applied to the user's files, with a backup.

The only place breakscan changes a user's file. Each file is written once, refused when it
changed since the scan verified the fix or is read-only; the backup never overwrites anything.
A write is whole or not at all (``files.write_source``): when it fails the source is unchanged
and the message says so, and the backup it no longer needs is removed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..files import (SourceNotRestored, carry_line_ends, content_hash, line_ends, read_source,
                     write_source)
from ..frames import display_path
from ..model.verdicts import Fix
from .source_fixes import propose_rewrite


def write_fixes(fixes: list[Fix]) -> list[str]:
    """Apply the verified source fixes to the user's files, each file once, with a backup.

    Fixes of one file are applied from the bottom up, so each rewrite's line is still where the
    scan saw it. Returns the files written; a failure names the files already rewritten.
    """
    by_file: dict[str, list[Fix]] = {}
    for fix in fixes:
        if fix.kind == "source" and fix.verified and fix.file:
            by_file.setdefault(fix.file, []).append(fix)
    from ..errors import UsageError

    written: list[str] = []
    for file, file_fixes in by_file.items():
        try:
            backup = _write_file(Path(file), file_fixes)
        except UsageError as exc:
            if written:
                done = ", ".join(f"{display_path(f)} (backup beside it)" for f in written)
                raise UsageError(f"{exc}; already rewritten: {done}") from None
            raise
        if backup is not None:
            written.append(file)
    return written


def _write_file(path: Path, file_fixes: list[Fix]) -> Path | None:
    """One file's verified rewrites applied and written with a backup; the backup's path, or
    None when no rewrite applied (the file stays as it is, no backup)."""
    from ..errors import UsageError

    name = display_path(str(path))
    if any(f.source_sha256 and content_hash(path) != f.source_sha256 for f in file_fixes):
        raise UsageError(f"refusing to write {name}: it changed since the scan verified the "
                         "fix; run --fix again")
    if not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK):  # root too
        raise UsageError(f"refusing to write {name}: the file is read-only")
    try:
        source, original = read_source(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {name}: {exc}") from None
    ends = line_ends(original)
    for fix in sorted(file_fixes, key=lambda f: f.line or 0, reverse=True):
        rewrite = propose_rewrite(source, fix.line or 0, fix.fix_id, category=fix.category,
                                   call=fix.call)
        if rewrite.new_source is not None:
            ends = carry_line_ends(source, rewrite.new_source, ends)
            source = rewrite.new_source
            fix.written = True
    if not any(f.written for f in file_fixes):
        return None
    backup = _free_name(path.with_name(path.name + ".breakscan.bak"))
    _write_with_backup(path, backup, source, ends, original)
    for fix in file_fixes:
        fix.backup = str(backup) if fix.written else None
    return backup


def _write_with_backup(path: Path, backup: Path, source: str, ends: list[str],
                       original: bytes) -> None:
    """The backup, then the source; every failure one line that says what state the file is in."""
    from ..errors import UsageError

    name = display_path(str(path))
    try:
        shutil.copy2(path, backup)
    except OSError as exc:
        _remove(backup)
        raise UsageError(f"cannot write {name} or its backup: {exc.strerror or exc}; "
                         f"{name} is unchanged") from None
    try:
        write_source(path, source, ends, original)
    except SourceNotRestored as exc:
        raise UsageError(f"cannot write {name}: {exc.strerror or exc}; it may be partial: "
                         f"restore it from {display_path(str(backup))}") from None
    except OSError as exc:
        _remove(backup)
        raise UsageError(f"cannot write {name}: {exc.strerror or exc}; {name} is "
                         "unchanged") from None


def _remove(backup: Path) -> None:
    """A backup this write made and no longer needs (a partial one included)."""
    try:
        backup.unlink()
    except OSError:
        pass


def _free_name(path: Path) -> Path:
    candidate, number = path, 1
    while os.path.lexists(candidate):  # a dangling link is taken too: never written through
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate
