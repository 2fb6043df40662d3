"""A shard's result file (``check --results FILE``), resuming it, and merging shards' files.

A model zoo is sharded over CI machines (``check --shard K/N``); each machine writes one line
per target as the target finishes (a :class:`~breakscan.model.result.ShardEntry` as ``jsondata``),
whole or not at all, synced, so a machine killed mid-run keeps every finished target. Each line
carries what was asked (the target's scan options), the content hash of every file the result
came from, and the source lines its reports show. ``--resume`` keeps a line only while its key
(the result cache's :func:`~breakscan.runs.cache.target_key`) is still this run's and every file it
came from is unchanged. ``breakscan merge`` reads every shard's file into one run: a target in
two files, a listed target in none, or a line made with other options than the config gives is
refused, naming them.

A result file is untrusted data (another machine wrote it): parsed, never unpickled; every
field's type checked; its verdict never believed (every run is gated again under the current
config); and no file it names is read to show it (``report/excerpts.py``). The last line may be
cut short (the machine was killed while writing it): it is left out and said; anything else
unreadable is refused with its file and line. Imports no torch.
"""

from __future__ import annotations

import json
import math
import os
import platform
import socket
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import read_regular, write_all
from ..model.excerpts import carry_sources, from_file
from ..model.result import ModelRun, RunOrigin, ShardEntry
from ..options import ScanOptions
from ..version import __version__
from .cache import file_hashes as cache_hashes
from .cache import target_key, torch_version

MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024  # a result line is a few MB; a zoo's file far less
FORMAT = 2  # 1 carried no options, file hashes or source lines: not read
EXIT_CODES = {0, 1, 2, 3, 4}  # an interrupted run is never written
MAX_SECONDS = 1e9


def here(shard: str | None) -> RunOrigin:
    """This machine, its torch and Python, and the shard it runs."""
    return RunOrigin(shard=shard, machine=socket.gethostname(), torch=torch_version(),
                     python=platform.python_version(), breakscan=__version__)


@dataclass
class ReadResults:
    """A result file's entries in file order, and the note for a last line cut short."""

    entries: list[ShardEntry] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)  # each entry's line as it was written
    cut_short: str | None = None


def _insane(run: ModelRun) -> str | None:
    """What is wrong with a run read from a file, beyond its fields' types (None: nothing)."""
    if not run.target.strip() or "\n" in run.target:
        return "its target is not a target name"
    if run.exit_code not in EXIT_CODES:
        return f"exit_code {run.exit_code} is no exit code of breakscan's"
    if run.error is None and (run.result is None or run.exit_code not in (0, 1, 3)):
        return "a run without an error has no result"
    if run.seconds is not None and not 0 <= run.seconds <= MAX_SECONDS:
        return f"seconds {run.seconds} is not a duration"
    summary = run.result.summary if run.result is not None else None
    for name, value in vars(summary).items() if summary is not None else ():
        if value is not None and not (0 <= value <= 1e12 and math.isfinite(value)):
            return f"summary.{name} {value} is not a count"
    return None


def _entry(line: bytes) -> ShardEntry:
    """One line as an entry, every field checked; :class:`DataError` otherwise."""
    from ..model.jsondata import DataError, loads

    entry = loads(line)
    if not isinstance(entry, ShardEntry) or not isinstance(entry.run, ModelRun):
        raise DataError("not a breakscan check --results line")
    if entry.format != FORMAT:
        raise DataError(f"format {entry.format!r}, this breakscan reads {FORMAT} (run the shard "
                        "again with this version)")
    wrong = _insane(entry.run)
    if wrong:
        raise DataError(wrong)
    # Believed for nothing it can decide: gated again, judged again, shown from what it carries.
    run = entry.run
    run.expected, run.flaky = None, False
    if run.result is not None:
        from_file(run.result)
        run.result.gate = None
    return entry


def read_results(path: Path) -> ReadResults:
    """Every entry of a result file; :class:`UsageError` for one that is not a result file."""
    from ..model.jsondata import DataError

    try:
        data = read_regular(path, "results file", MAX_FILE_BYTES)
    except FileNotFoundError:
        raise UsageError(f"results file {path} does not exist") from None
    lines = data.split(b"\n")
    last_complete = data.endswith(b"\n")
    read = ReadResults()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            read.entries.append(_entry(line))
            read.lines.append(line)
        except DataError as exc:
            if number == len(lines) and not last_complete:
                read.cut_short = f"{path} line {number} was cut short (a killed run): left out"
                continue
            raise UsageError(f"{path} line {number} is not a breakscan check --results entry "
                             f"({exc})") from None
    return read


def file_hashes(target: str, options: ScanOptions, run: ModelRun) -> dict[str, str]:
    """Every file the run's result came from, hashed as the result cache hashes them ("": not a
    regular file, unreadable)."""
    if run.result is None:
        return {}
    return {f: d or "" for f, d in cache_hashes(target, options, run.result).items()}


def options_differ(recorded: dict[str, Any], options: ScanOptions) -> list[str]:
    """The scan options a line was made with that differ from what the config gives now."""
    given = json.loads(json.dumps(options.to_dict(), default=str))
    made = json.loads(json.dumps(recorded, default=str))
    return [f"{k}: {made.get(k)!r}, the config gives {given.get(k)!r}"
            for k in sorted(set(given) | set(made)) if made.get(k) != given.get(k)]


class ResultsLog:
    """``check --results FILE``: one line per finished target, the file locked while this run
    writes it; with ``resume``, the entries already there that are still valid answer their
    targets without a scan.

    A link is written through (the file it points at gets the lines). An existing file that is
    not a result file (a model's helper, notes) is refused before anything is written, and so
    is a file another ``check`` is writing (two shards given one file). A line that cannot be
    written whole (a full disk) is taken back: the file keeps whole lines only, and
    :attr:`failed` says what happened.
    """

    def __init__(self, path: Path, *, resume: bool, shard: str | None):
        self.given = path
        self.path = Path(os.path.realpath(path))
        self.origin = here(shard)
        self.notes: list[str] = []
        self.failed: str | None = None
        self._kept: dict[str, ShardEntry] = {}
        self._kept_lines: dict[str, bytes] = {}
        self._fd: int | None = None
        self._written = 0
        if not self.path.parent.is_dir():
            raise UsageError(f"--results {path}: the folder {self.path.parent} does not exist "
                             "or is not a folder")
        try:
            read = read_results(self.path)
        except UsageError as exc:
            if not self.path.exists():
                read = None
            elif self.path.is_file() and self.path.stat().st_size == 0:
                read = ReadResults()
            else:
                raise UsageError(f"refusing to write --results {path}: {exc}; name a new "
                                 "file") from None
        if resume and read is not None:
            self._kept = {e.run.target: e for e in read.entries}
            self._kept_lines = {e.run.target: raw for e, raw in zip(read.entries, read.lines)}
            self.notes += [read.cut_short] if read.cut_short else []
        elif resume:
            self.notes.append(f"--resume: {path} does not exist yet; every target is scanned")

    def reusable(self, target: str, options: ScanOptions) -> ModelRun | None:
        """The run the file already holds for this target (ungated: the caller gates it), if
        it was made with this key and every file it came from is unchanged."""
        entry = self._kept.get(target)
        if entry is None or entry.key != target_key(target, options) or entry.run.error:
            return None
        hashes = file_hashes(target, options, entry.run)
        if not hashes or hashes != entry.files or "" in hashes.values():
            return None
        run = entry.run
        run.exit_code = 0
        return run

    def start(self, reused: list[str]) -> None:
        """Lock the file, then replace it atomically with the reused entries only (made as a
        report is, not private to its owner) and append to it from here on."""
        old = _lock(self.path, self.given)
        try:
            data = b"".join(self._kept_lines[t] + b"\n" for t in reused)  # byte for byte
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
            try:
                _flock(fd, self.given)
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fd, 0o666 & ~umask)
                write_all(fd, data)
                os.replace(tmp, self.path)
            except BaseException as exc:
                os.close(fd)
                os.unlink(tmp)
                if isinstance(exc, OSError):
                    raise UsageError(f"cannot write --results {self.given}: "
                                     f"{exc.strerror or exc}") from None
                raise
        finally:
            os.close(old)
        self._fd, self._written = fd, len(data)
        if self._kept:
            self.notes.append(f"--resume: {len(reused)} target(s) kept from {self.given} "
                              f"({', '.join(reused) or 'none still valid'})")

    def record(self, target: str, options: ScanOptions | None, run: ModelRun) -> None:
        """Append a finished target (an interrupted one is not finished: it is left out), with
        its options, its files' hashes and the source lines its reports show."""
        from ..model.jsondata import dumps

        if self._fd is None or run.interrupted or self.failed:
            return
        result = run.result
        if result is not None:
            result = replace(result, sources=carry_sources(result))
        run = replace(run, origin=self.origin, result=result, expected=None)
        entry = ShardEntry(
            key=target_key(target, options) if options is not None else "", run=run,
            options=options.to_dict() if options is not None else None,
            files=file_hashes(target, options, run) if options is not None else {})
        data = (dumps(entry) + "\n").encode()
        try:
            write_all(self._fd, data)
            self._written += len(data)
        except OSError as exc:
            os.ftruncate(self._fd, self._written)  # whole lines only
            os.lseek(self._fd, self._written, os.SEEK_SET)
            self.failed = (f"cannot write --results {self.given}: {exc.strerror or exc} (it "
                           "keeps the lines of the targets written before)")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # and so unlocked
            self._fd = None


def _flock(fd: int, given: Path) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError(f"--results {given} is being written by another breakscan check (a "
                         "matrix job without its own shard index?): give each shard its own "
                         "file") from None
    except OSError:  # a filesystem without locks: written unlocked, as before
        pass


def _lock(path: Path, given: Path) -> int:
    """The file at ``path`` (created empty when missing) opened and locked, checked to be still
    the file at ``path`` once locked (another run may just have replaced it)."""
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666)
        except OSError as exc:
            raise UsageError(f"cannot write --results {given}: {exc.strerror or exc}") from None
        try:
            _flock(fd, given)
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise UsageError(f"--results {given} keeps being replaced by another process")


def merge_results(paths: list[Path], listed: list[str]) -> tuple[list[ShardEntry], list[str]]:
    """Every listed target's entry from the shards' files, in the config's order (``listed``),
    and notes (a cut line, several torch versions). Refused: a target in two files (or twice in
    one), a listed target in none, a target the config does not list."""
    found: dict[str, tuple[Path, ShardEntry]] = {}
    twice: list[str] = []
    notes: list[str] = []
    for path in paths:
        read = read_results(path)
        notes += [read.cut_short] if read.cut_short else []
        for entry in read.entries:
            target = entry.run.target
            if target in found:
                twice.append(f"{target} ({found[target][0]} and {path})")
            found[target] = (path, entry)
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
    torches = sorted({e.run.origin.torch for _, e in found.values() if e.run.origin})
    if len(torches) > 1:
        notes.append(f"the shards ran on different torch versions: {', '.join(torches)}")
    return [found[t][1] for t in listed], notes


def gated_again(entries: list[ShardEntry], resolved: list[Any]) -> list[ModelRun]:
    """Each merged entry's run gated anew under what the config gives its target now
    (``resolved``: ``check.config_targets``' answer for each, a ``CheckTarget`` or the failed
    run of a target the config refuses). The verdict a line carries is never believed; a line
    made with other scan options than the config gives is refused, naming the options."""
    from .runner import gated

    given = {getattr(r, "target", None): r for r in resolved}
    differ: list[str] = []
    runs: list[ModelRun] = []
    for entry in entries:
        run, config = entry.run, given.get(entry.run.target)
        if isinstance(config, ModelRun) or config is None:  # the config refuses it: as check
            runs.append(config or run)
            continue
        changed = options_differ(entry.options, config.options) if entry.options is not None \
            else ["the shard's config refused the target"]
        if changed:
            differ.append(f"{run.target} ({'; '.join(changed)})")
            continue
        if run.error is None:
            run.exit_code = 0
        runs.append(gated(run, config.gate))
    if differ:
        raise UsageError(f"{len(differ)} result(s) made with other scan options than the "
                         f"config gives: {'; '.join(differ)} (run those shards again)")
    return runs
