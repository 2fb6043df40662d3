"""Writing the files a scan produces (reports, baselines, rewritten sources) whole or not at all."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterable


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temp file in the same folder and rename, so a reader never sees half a file.

    Only a regular file (or a missing path) is replaced that way, fsynced first, so a disk that
    fills keeps the old file. A symlink is followed (its
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
    data = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        try:
            write_all(fd, data)  # a full disk raises here, the old file untouched
        finally:
            os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is a normal file
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


MAX_DATA_BYTES = 64 * 1024 * 1024  # a config, expected-counts or durations file: far less


def read_regular(path: str | os.PathLike[str], what: str,
                 max_bytes: int = MAX_DATA_BYTES) -> bytes:
    """The bytes of a file the user named as input (``what``: "--expected", "config", …).

    Only a regular file of at most ``max_bytes`` is read: it is opened without blocking and
    checked before a byte is read, so a FIFO, ``/dev/zero`` or a terminal is refused at once
    instead of hanging or reading without bound. A missing file raises ``FileNotFoundError``
    (the caller says what to do); anything else unreadable is a :class:`UsageError`.
    """
    from .errors import UsageError

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UsageError(f"{what} {path} is {kind}; name a file")
        if info.st_size > max_bytes:
            raise UsageError(f"{what} {path} is {info.st_size:,} bytes, more than the "
                             f"{max_bytes:,} such a file can be")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while being read
            raise UsageError(f"{what} {path} is more than the {max_bytes:,} bytes such a file "
                             "can be")
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


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


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Do two paths name one file (a link to it, or a path not made yet, included)?"""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


Named = Iterable[tuple[str, "str | os.PathLike[str] | None"]]


def load_json_data(data: bytes, numbers: str) -> Any:
    """JSON a user named as data (expected counts, durations): UTF-8, and no ``NaN`` or
    ``Infinity`` (which Python's reader takes by default and none of its ``numbers`` can be).
    ``ValueError`` otherwise."""
    import json

    def refused(name: str) -> Any:
        raise ValueError(f"{name} is not {numbers}")

    return json.loads(data.decode("utf-8"), parse_constant=refused)


def refuse_collisions(outputs: Named, inputs: Named) -> None:
    """A usage error when two outputs are one file (``-o`` and ``--results``), or an output is
    a file another flag reads (``--results`` onto the ``--durations`` file, ``-o`` onto the
    ``--expected`` file). The same flag may read and write its file (``--update-expected``,
    ``--resume``)."""
    from .errors import UsageError

    written = [(flag, path) for flag, path in outputs if path is not None]
    for i, (flag, path) in enumerate(written):
        for other, other_path in written[i + 1:]:
            if same_file(path, other_path):
                raise UsageError(f"{flag} and {other} name one file ({path}): name two files")
        for other, read in inputs:
            if read is not None and other != flag and same_file(path, read):
                raise UsageError(f"refusing to write {flag} {path}: it is the {other} file "
                                 f"{read}, which this run reads; name another file")


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


def line_ends(original: bytes) -> list[str]:
    """Each line's own end in a source's bytes, in order: ``\r\n``, ``\n`` or ``\r`` (a file
    may mix them). UTF-8 never puts those bytes inside a character."""
    return [end.decode() for end in _LINE_END.findall(original)]


_LINE_END = re.compile(rb"\r\n|\r|\n")


def carry_line_ends(old: str, new: str, ends: list[str]) -> list[str]:
    """The line ends of ``new``, a rewrite of ``old`` (both with ``\n`` ends; ``old``'s lines end
    with ``ends``): every line before and after the rewritten statement keeps its own end; the
    lines the rewrite wrote take the end of the first line they replace (of the line above, when
    they only add lines)."""
    a, b = old.split("\n"), new.split("\n")
    shortest = min(len(a), len(b))
    prefix = 0
    while prefix < shortest and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    replaced = len(a) - suffix > prefix
    written = _end_near(ends, prefix if replaced else prefix - 1)
    shift = len(a) - len(b)
    kept = min(prefix, len(ends))  # an old last line without an end gets one when followed
    return [ends[j] if j < kept else ends[j + shift] if j >= len(b) - suffix else written
            for j in range(len(b) - 1)]


def _end_near(ends: list[str], index: int) -> str:
    if not ends:
        return "\n"
    return ends[min(max(index, 0), len(ends) - 1)]


class SourceNotRestored(OSError):
    """Writing a source failed part-way and putting its old bytes back failed too: the file may
    be partial (the caller names the backup)."""


def write_source(path: str | os.PathLike[str], text: str, ends: list[str],
                 original: bytes) -> None:
    """Write a rewritten source over its file, whole or not at all.

    ``text`` has ``\n`` line ends; ``ends`` is each line's end to write (see
    :func:`carry_line_ends`), so a CRLF, CR-only or mixed file keeps every untouched line's end;
    the BOM is kept. A link is written through (its target changes, the link stays). A file with
    one name is replaced by a fully written, fsynced temporary file in its folder (its mode and
    owner copied first); a file with hard links, or whose owner cannot be kept, is written in
    place after reserving its size, and put back from ``original`` if the write fails. Any
    ``OSError`` but :class:`SourceNotRestored` leaves the file as it was.
    """
    bom = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
    lines = text.split("\n")
    missing = len(lines) - 1 - len(ends)  # never a line dropped for want of an end
    ends = ends[: len(lines) - 1] + [_end_near(ends, len(ends) - 1)] * max(missing, 0)
    data = bom + "".join(line + end for line, end in zip(lines, ends + [""])).encode("utf-8")
    target = Path(os.path.realpath(path))
    info = os.stat(target)
    if info.st_nlink > 1 or not _replace(target, data, info):
        _write_in_place(target, data, original)


def _replace(target: Path, data: bytes, info: os.stat_result) -> bool:
    """``data`` into a temporary file beside ``target``, renamed over it; False (nothing done)
    when no temporary file can be made there (a link's read-only target folder) or it cannot
    get ``target``'s owner."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except PermissionError:
        return False
    try:
        try:
            if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fd, info.st_uid, info.st_gid)
        except PermissionError:
            os.close(fd)
            os.unlink(tmp)
            return False
        os.fchmod(fd, stat.S_IMODE(info.st_mode))  # after fchown, which clears setuid bits
        write_all(fd, data)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    _sync_folder(target.parent)
    return True


def _write_in_place(target: Path, data: bytes, original: bytes) -> None:
    """``data`` written into ``target`` itself (hard links see it); on failure ``original`` is
    written back, or :class:`SourceNotRestored` when that fails too."""
    fd = os.open(target, os.O_WRONLY)
    try:
        try:
            _reserve(fd, len(data))
            write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError as exc:
            try:  # the old bytes fit in the blocks the file already has
                os.lseek(fd, 0, os.SEEK_SET)
                write_all(fd, original)
                os.ftruncate(fd, len(original))
                os.fsync(fd)
            except OSError:
                raise SourceNotRestored(exc.errno, exc.strerror, str(target)) from exc
            raise
    finally:
        os.close(fd)


def _reserve(fd: int, size: int) -> None:
    """The blocks for ``size`` bytes taken before a byte changes, where the filesystem can."""
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd`` from its offset (a short write continued), then fsync:
    a disk that fills raises here, before anything is renamed."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _sync_folder(folder: Path) -> None:
    """The rename made durable (best effort: some filesystems refuse a folder's fsync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
