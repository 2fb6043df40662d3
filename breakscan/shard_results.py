"""A shard's result file (``check --results FILE``), resuming it, and merging shards' files.

A model zoo is sharded over CI machines (``check --shard K/N``); each machine writes one line
per target as the target finishes (a :class:`~breakscan.result.ShardEntry` as ``jsondata``),
flushed and synced, so a machine killed mid-run keeps every finished target. ``--resume`` keeps
the lines whose key (the result cache's :func:`~breakscan.cache.target_key`) is still this
run's, so only the rest is scanned. ``breakscan merge`` reads every shard's file into one run:
a target in two files, or a listed target in none, is refused, naming them.

Files are parsed as data, never unpickled (another machine wrote them). The last line may be
cut short (the machine was killed while writing it): it is left out and said; anything else
unreadable is refused with its file and line. Imports no torch.
"""

from __future__ import annotations

import os
import platform
import socket
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from . import __version__
from .cache import target_key, torch_version
from .errors import UsageError
from .options import ScanOptions
from .result import ModelRun, RunOrigin, ShardEntry

MAX_LINE_BYTES = 512 * 1024 * 1024  # a result is a few MB; a longer line is not one of ours


def here(shard: str | None) -> RunOrigin:
    """This machine, its torch and Python, and the shard it runs."""
    return RunOrigin(shard=shard, machine=socket.gethostname(), torch=torch_version(),
                     python=platform.python_version(), breakscan=__version__)


@dataclass
class ReadResults:
    """A result file's entries in file order, and the note for a last line cut short."""

    entries: list[ShardEntry] = field(default_factory=list)
    cut_short: str | None = None


def read_results(path: Path) -> ReadResults:
    """Every entry of a result file; :class:`UsageError` for one that is not a result file."""
    from .jsondata import DataError, loads

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_LINE_BYTES * 4)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    last_complete = data.endswith(b"\n")
    read = ReadResults()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = loads(line)
            if not isinstance(entry, ShardEntry) or not isinstance(entry.run, ModelRun) or \
                    entry.format != 1 or not isinstance(entry.key, str):
                raise DataError("not a breakscan check --results line")
        except DataError as exc:
            if number == len(lines) and not last_complete:
                read.cut_short = f"{path} line {number} was cut short (a killed run): left out"
                continue
            raise UsageError(f"{path} line {number} is not a breakscan check --results entry "
                             f"({exc})") from None
        read.entries.append(entry)
    return read


class ResultsLog:
    """``check --results FILE``: one line per finished target; with ``resume``, the entries
    already there that are still valid answer their targets without a scan."""

    def __init__(self, path: Path, *, resume: bool, shard: str | None):
        if path.exists() and not path.is_file():
            raise UsageError(f"--results {path} is not a regular file")
        self.path, self.origin = path, here(shard)
        self.notes: list[str] = []
        self._kept: dict[str, ShardEntry] = {}
        if resume and path.exists():
            read = read_results(path)
            self._kept = {e.run.target: e for e in read.entries}
            self.notes += [read.cut_short] if read.cut_short else []
        elif resume:
            self.notes.append(f"--resume: {path} does not exist yet; every target is scanned")
        self._handle: IO[str] | None = None

    def reusable(self, target: str, options: ScanOptions) -> ModelRun | None:
        """The run the file already holds for this target, if it was made with this key."""
        entry = self._kept.get(target)
        if entry is None or entry.key != target_key(target, options) or entry.run.interrupted:
            return None
        return entry.run

    def start(self, reused: list[str]) -> None:
        """Replace the file atomically with the reused entries only, then append to it."""
        from .jsondata import dumps

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.writelines(dumps(self._kept[t]) + "\n" for t in reused)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._handle = open(self.path, "a", encoding="utf-8")
        if self._kept:
            self.notes.append(f"--resume: {len(reused)} target(s) kept from {self.path} "
                              f"({', '.join(reused) or 'none still valid'})")

    def record(self, target: str, options: ScanOptions | None, run: ModelRun) -> None:
        """Append a finished target (an interrupted one is not finished: it is left out)."""
        from .jsondata import dumps

        if self._handle is None or run.interrupted:
            return
        run = replace(run, origin=self.origin)
        key = target_key(target, options) if options is not None else ""
        self._handle.write(dumps(ShardEntry(key=key, run=run)) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def merge_results(paths: list[Path], listed: list[str]) -> tuple[list[ModelRun], list[str]]:
    """One run from the shards' files, in the config's order (``listed``), and notes (a cut
    line, several torch versions). Refused: a target in two files (or twice in one), a listed
    target in none, a target the config does not list."""
    found: dict[str, tuple[Path, ModelRun]] = {}
    twice: list[str] = []
    notes: list[str] = []
    for path in paths:
        read = read_results(path)
        notes += [read.cut_short] if read.cut_short else []
        for entry in read.entries:
            target = entry.run.target
            if target in found:
                twice.append(f"{target} ({found[target][0]} and {path})")
            found[target] = (path, entry.run)
    if twice:
        raise UsageError(f"{len(twice)} target(s) in more than one result: {'; '.join(twice)}")
    missing = [t for t in listed if t not in found]
    if missing:
        raise UsageError(f"{len(missing)} listed target(s) in no result file: "
                         f"{', '.join(missing)} (a shard that did not finish? --resume it)")
    unknown = sorted(set(found) - set(listed))
    if unknown:
        raise UsageError(f"{len(unknown)} target(s) the config does not list: "
                         f"{', '.join(unknown)} (results from another config?)")
    torches = sorted({run.origin.torch for _, run in found.values() if run.origin})
    if len(torches) > 1:
        notes.append(f"the shards ran on different torch versions: {', '.join(torches)}")
    return [found[t][1] for t in listed], notes
