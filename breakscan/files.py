"""Writing the files a scan produces (reports, baselines, rewritten sources), safely."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temp file in the same folder and rename, so a reader never sees half a file.

    Only a regular file (or a missing path) is replaced that way. A symlink is followed (its
    target is written, the link kept); a character device, FIFO or other special file
    (``-o /dev/stdout``, ``-o /dev/null``, a named pipe) is written into directly, never replaced.
    """
    target = Path(path)
    try:
        info = os.stat(target)  # follows links: /dev/stdout -> a pipe, a FIFO, a device
    except FileNotFoundError:
        info = None
    except OSError as exc:  # a symlink loop (ELOOP), a path through a file
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(target))
        with open(target, "w", encoding="utf-8") as fh:  # written into, never replaced
            fh.write(text)
        return
    if target.is_symlink():
        target = Path(os.path.realpath(target))
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


def refuse_over_sources(outputs: Iterable[tuple[str, "str | os.PathLike[str] | None"]],
                        sources: Iterable[str]) -> None:
    """Raise a usage error when an output (``("-o", path)``) is one of the files the scan reads:
    the model's own file, a source file the result came from, the config. A link to one counts
    (``os.path.samefile``). A report never replaces what it reports on."""
    from .errors import UsageError

    existing = [s for s in dict.fromkeys(sources) if s and os.path.exists(s)]
    for flag, path in outputs:
        if path is None or not os.path.exists(path):
            continue
        for source in existing:
            try:
                same = os.path.samefile(path, source)
            except OSError:
                continue
            if same:
                raise UsageError(f"refusing to write {flag} {path}: it is {source}, a file the "
                                 "scan reads; name another file")


def content_hash(path: str | os.PathLike[str]) -> str | None:
    """sha256 of a file's bytes (None when unreadable)."""
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def read_source(path: str | os.PathLike[str]) -> tuple[str, bytes]:
    """A Python file's text with ``\n`` line ends (what the rewriter works on) and its bytes."""
    data = Path(path).read_bytes()
    text = data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n"), data


def write_source_in_place(path: str | os.PathLike[str], text: str, original: bytes) -> None:
    """Write a rewritten source over the same file, keeping what the rewrite did not change:
    its line ends (CRLF stays CRLF), its BOM, its mode and its hard links (written in place,
    not replaced; the caller keeps a backup first)."""
    if original.startswith(b"\xef\xbb\xbf"):
        prefix, body = b"\xef\xbb\xbf", original[3:]
    else:
        prefix, body = b"", original
    newline = "\r\n" if body.count(b"\r\n") * 2 > body.count(b"\n") else "\n"
    data = prefix + text.replace("\n", newline).encode("utf-8")
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()
