"""The result cache of ``breakscan check``: a target whose code, inputs and settings have not
changed is not scanned again (as ruff and mypy cache theirs).

An entry is keyed by what the scan was asked (the target, every scan option, breakscan's, torch's
and Python's versions) and holds the finished, ungated result plus the hash of every user file
the model's frames, graphs and breaks came from (the target's own file included). It is used
only while each of those files still has the same content: editing a model, or a helper its
forward calls, rescans it. Entries live in ``.breakscan_cache/`` (with a ``.gitignore`` inside)
and are written atomically, so concurrent runs never read half an entry. Imports no torch.

A cache can be restored from another branch or written by someone else: an entry is JSON data
(``jsondata``), never a pickle, and it is used only when it is exactly what this version writes
for this key: its format version, key and target match, its result's checksum matches (a keyed
HMAC when ``$BREAKSCAN_CACHE_KEY`` is set; else a plain hash, which detects corruption, not
forgery), it names every file its result came from (the target's own file among them) with a
content hash, and each hash still matches.
Anything else, a flipped byte included, is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import platform
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..frames import is_user_file
from ..model.result import ScanResult
from ..options import ScanOptions
from ..target import parse_target
from ..version import __version__

CACHE_DIR = ".breakscan_cache"
ENTRY_VERSION = 3  # 1 was a pickle: never read; 2 had an unprefixed, never keyed checksum


def torch_version() -> str:
    """The installed torch's version, read without importing it."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


def _own_code() -> str:
    """breakscan's own code as it is on disk (an edited checkout must not reuse old entries)."""
    here = Path(__file__).resolve().parent
    stamp = [(str(p.relative_to(here)), p.stat().st_size, p.stat().st_mtime_ns)
             for p in sorted(here.rglob("*.py"))]
    return hashlib.sha256(repr(stamp).encode()).hexdigest()[:16]


def _digest(path: str) -> str | None:
    """A file's content hash; None (a miss) for one that is missing, unreadable, over
    ``files.MAX_DATA_BYTES`` or not a regular file: an entry's file names are data, and a FIFO
    or ``/dev/zero`` there must not hang or fill the parent."""
    from ..errors import BreakscanError
    from ..files import read_regular

    try:
        return hashlib.sha256(read_regular(path, "cached file")).hexdigest()
    except (OSError, BreakscanError):
        return None


def source_files(target: str, result: ScanResult) -> set[str]:
    """The user files a scan's result came from: the target's file, every compiled or skipped
    frame's, every graph op's, every break's (and its call chain's), every recompile's."""
    files = {f.file for f in result.frames}
    files |= {loc.rpartition(":")[0] for g in result.graphs for loc in g.source_lines}
    for brk in result.breaks:
        files |= {brk.file} | {f.file for f in brk.call_chain} | {f.file for f in brk.sites}
    if result.recompiles is not None:
        files |= {r.file for r in result.recompiles.recompiles}
    spec = parse_target(target)
    if spec.is_file:
        files.add(spec.source)
    return {os.path.realpath(f) for f in files if f and is_user_file(f)}


KEY_VARIABLE = "BREAKSCAN_CACHE_KEY"


def _checksum(result: ScanResult) -> str:
    """The result's content hash: a byte flipped anywhere in an entry makes it a miss. Plain
    SHA-256 catches corruption only (anyone can recompute it); with ``$BREAKSCAN_CACHE_KEY`` set
    it is an HMAC that only a holder of the key can forge, and an entry made without that key
    (or with another) is a miss."""
    from ..model.jsondata import dumps

    text = dumps(result).encode()
    key = os.environ.get(KEY_VARIABLE)
    if key:
        return "hmac-sha256:" + hmac.new(key.encode(), text, hashlib.sha256).hexdigest()
    return "sha256:" + hashlib.sha256(text).hexdigest()


def input_files(options: ScanOptions) -> set[str]:
    """The user's ``--inputs FILE.py:fn`` file: read, never compiled, so no record names it."""
    from ..sources import target_file

    if not options.inputs:
        return set()
    try:
        file = target_file(options.inputs)
    except Exception:  # a malformed spec fails elsewhere, with its own message
        return set()
    return {os.path.realpath(file)} if file is not None and is_user_file(str(file)) else set()


def file_hashes(target: str, options: ScanOptions, result: ScanResult) -> dict[str, str | None]:
    """Every user file a result came from (and the ``--inputs`` file), with its content hash
    (None: unreadable): what a cache entry, or a ``check --results`` line, is valid under."""
    return {f: _digest(f) for f in sorted(source_files(target, result) | input_files(options))}


def target_key(target: str, options: ScanOptions) -> str:
    """What a scan was asked, as a hash: the target, every scan option, breakscan's code,
    torch's and Python's versions, the folder and the ``TORCHDYNAMO_*`` settings. A cache entry,
    or a ``check --results`` line that ``--resume`` reuses, is valid only under the same key."""
    spec = parse_target(target)
    where = os.path.realpath(spec.source) if spec.is_file else spec.source
    asked = {"target": target, "where": where, "options": options.to_dict(),
             "breakscan": __version__, "code": _own_code(), "torch": torch_version(),
             "python": platform.python_version(), "cwd": os.getcwd(),
             # Dynamo settings from the environment change counts as options do
             "env": {k: v for k, v in os.environ.items() if k.startswith("TORCHDYNAMO_")}}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str)
                          .encode()).hexdigest()[:32]


@dataclass
class ResultCache:
    """``.breakscan_cache/`` under ``root`` (the folder of the config that lists the targets)."""

    root: Path

    @property
    def folder(self) -> Path:
        return self.root / CACHE_DIR

    def key(self, target: str, options: ScanOptions) -> str:
        return target_key(target, options)

    def get(self, target: str, options: ScanOptions) -> ScanResult | None:
        """The stored result, when the entry is valid and every file it came from is
        unchanged; else None."""
        from ..model.jsondata import DataError, loads

        key = self.key(target, options)
        try:
            with open(self.folder / f"{key}.json", "rb") as handle:
                entry = loads(handle.read())
        except (OSError, DataError):
            return None
        if not isinstance(entry, dict) or entry.get("version") != ENTRY_VERSION or \
                entry.get("key") != key or entry.get("target") != target:
            return None
        result, files = entry.get("result"), entry.get("files")
        if not isinstance(result, ScanResult) or not isinstance(files, dict) or result.partial \
                or not hmac.compare_digest(str(entry.get("checksum")).encode(),
                                        _checksum(result).encode()):
            return None
        try:
            needed = source_files(target, result) | input_files(options)
        except Exception:  # a result whose records do not hold together
            return None
        if not needed or set(files) != needed or any(
                not isinstance(d, str) or _digest(f) != d for f, d in files.items()):
            return None
        return result

    def put(self, target: str, options: ScanOptions, result: ScanResult) -> None:
        """Store a finished scan (never a partial one); a cache that cannot be written is
        skipped silently: it only saves time."""
        from ..model.jsondata import dumps

        if result.partial:
            return
        files = file_hashes(target, options, result)
        if not files or None in files.values():
            return  # a result with no readable file behind it can never be checked again
        key = self.key(target, options)
        entry = {"version": ENTRY_VERSION, "key": key, "target": target, "files": files,
                 "checksum": _checksum(result), "result": result}
        try:
            self.folder.mkdir(exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# breakscan's result cache (breakscan check)\n*\n")
            text = dumps(entry)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, self.folder / f"{key}.json")
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except (OSError, ValueError):  # a full disk; a result that is no record (DataError)
            pass
