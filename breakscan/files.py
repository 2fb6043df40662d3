"""Writing the files a scan produces (reports, baselines, rewritten sources), safely."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temp file in the same folder and rename, so a reader never sees half a file.

    Only a regular file (or a missing path) is replaced that way. A symlink is followed (its
    target is written, the link kept); a character device, FIFO or other special file
    (``-o /dev/stdout``, ``-o /dev/null``, a named pipe) is written into directly, never replaced.
    """
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    if target.exists() and not target.is_file():
        if target.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(target))
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is a normal file
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
