"""``--fix --write``: the verified source fixes applied to the user's files, with a backup.

The only place breakscan changes a user's file. Each file is written once, refused when it
changed since the scan verified the fix or is read-only; the backup never overwrites anything.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..files import content_hash, read_source, write_source_in_place
from ..frames import display_path
from ..verdicts import Fix
from .plan import rewrite_for


def write_fixes(fixes: list[Fix]) -> list[str]:
    """Apply the verified source fixes to the user's files, each file once, with a backup.

    Fixes of one file are applied from the bottom up, so each rewrite's line is still where the
    scan saw it. Returns the files written.
    """
    by_file: dict[str, list[Fix]] = {}
    for fix in fixes:
        if fix.kind == "source" and fix.verified and fix.file:
            by_file.setdefault(fix.file, []).append(fix)
    from ..errors import UsageError

    written = []
    for file, file_fixes in by_file.items():
        path = Path(file)
        if any(f.source_sha256 and content_hash(path) != f.source_sha256 for f in file_fixes):
            raise UsageError(f"refusing to write {display_path(file)}: it changed since the "
                             "scan verified the fix; run --fix again")
        if not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK):  # root too
            raise UsageError(f"refusing to write {display_path(file)}: the file is read-only")
        try:
            source, original = read_source(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {display_path(file)}: {exc}") from None
        for fix in sorted(file_fixes, key=lambda f: f.line or 0, reverse=True):
            rewrite = rewrite_for(fix.fix_id, fix.category, source, fix.line or 0, fix.call)
            if rewrite.new_source is not None:
                source = rewrite.new_source
                fix.written = True
        if not any(f.written for f in file_fixes):
            continue  # nothing to change: the file stays as it is, no backup
        backup = _free_name(path.with_name(path.name + ".breakscan.bak"))
        try:
            shutil.copy2(path, backup)
            write_source_in_place(path, source, original)
        except OSError as exc:
            raise UsageError(f"cannot write {display_path(file)} or its backup: "
                             f"{exc.strerror or exc}") from None
        for fix in file_fixes:
            fix.backup = str(backup) if fix.written else None
        written.append(file)
    return written


def _free_name(path: Path) -> Path:
    candidate, number = path, 1
    while os.path.lexists(candidate):  # a dangling link is taken too: never written through
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate
