"""``breakscan trace``: the structured trace logs ``TORCH_TRACE`` writes (one file per rank), read
into the same records a scan captures, so one analysis serves both.

The format is the one tlparse reads: a glog-style prefix (``V1121 19:53:10.123456 4242
torch/_dynamo/convert_frame.py:1234] ``), a one-line JSON envelope, and, when the envelope has
``has_payload``, tab-indented payload lines after it. Files are streamed line by line (never read
whole); a truncated last record (a killed job) is dropped and counted; envelope keys this reader
does not use (a newer torch's) are counted as ``other``, never an error. Imports no torch.

A trace folder is untrusted (copied from a cluster, written by someone else's job): only
regular files are read (a FIFO, a device, a directory or a broken link named ``*.log`` is
skipped and said so), a line or record longer than :data:`MAX_RECORD_BYTES` is dropped, and
every record that is not what this reader expects (an envelope that is not an object, a field of
the wrong type, a 5,000-digit number) is counted as unreadable and skipped.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

_PREFIX = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] ")
_RANK = re.compile(r"rank_(\d+)")
_GRAPH_SOURCE = re.compile(r"# File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>\S+), code: ")
_GRAPH_OP = re.compile(r'^\s+\w+: "[^"]*" = (?P<target>[\w.]+)\(')
_METADATA = {"frame_id", "frame_compile_id", "attempt", "has_payload", "rank",
             "compiled_autograd_id", "pathname", "lineno"}
METRIC_FIELDS = ("compile_id", "co_name", "co_filename", "co_firstlineno", "graph_op_count",
                 "fail_type", "fail_reason", "fail_user_frame_filename",
                 "fail_user_frame_lineno", "entire_frame_compile_time_s")
USED = {"dynamo_start", "compilation_metrics", "dynamo_output_graph", "str", "artifact"}
MAX_RECORD_BYTES = 64 * 1024 * 1024  # a record (envelope and payload) larger than this is dropped
_METRIC_TYPES = {"graph_op_count": int, "co_firstlineno": int, "fail_user_frame_lineno": int,
                 "entire_frame_compile_time_s": (int, float), "co_name": str,
                 "co_filename": str, "fail_type": str, "fail_reason": str,
                 "fail_user_frame_filename": str, "compile_id": str}


@dataclass
class Record:
    """One envelope and its payload (``""`` when it has none)."""

    kind: str  # the envelope's main key ("artifact:<name>" for artifacts)
    data: Any  # the value under that key
    envelope: dict[str, Any]
    payload: str

    @property
    def compile_id(self) -> str | None:
        frame, attempt = self.envelope.get("frame_id"), self.envelope.get("frame_compile_id")
        return None if frame is None else f"{frame}/{attempt}"


@dataclass
class TraceGraph:
    """A graph Dynamo produced (``dynamo_output_graph``), as its readable code shows it."""

    compile_id: str | None
    ops: list[str]
    source_lines: list[str]
    input_shapes: list[list[int | str] | None]


@dataclass
class RankTrace:
    """What one rank's trace file holds, in the shape the analysis takes."""

    rank: int | None
    path: str
    bytes: int = 0
    records: int = 0
    truncated: int = 0  # records cut short (a killed job's last line) or unreadable
    oversized: int = 0  # of those, lines longer than MAX_RECORD_BYTES
    error: str | None = None  # the file could not be read at all
    other: dict[str, int] = field(default_factory=dict)  # envelope kinds not used here
    graph_break_logs: list[str] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)  # compilation_metrics rows
    recompiles: list[tuple[str | None, list[str]]] = field(default_factory=list)
    graphs: list[TraceGraph] = field(default_factory=list)
    starts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # compile id -> stack
    strings: dict[int, str] = field(default_factory=dict)  # interned file names
    torch_version: str | None = None


def _lines(handle: Any, counts: RankTrace | None) -> Iterator[str]:
    """A file's lines, each at most MAX_RECORD_BYTES (a longer one is skipped and counted)."""
    while True:
        line = handle.readline(MAX_RECORD_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_RECORD_BYTES and not line.endswith("\n"):
            while line and not line.endswith("\n"):  # skip the rest of the line
                line = handle.readline(MAX_RECORD_BYTES)
            if counts is not None:
                counts.truncated += 1
                counts.oversized += 1
            continue
        if counts is not None:
            counts.bytes += len(line)
        yield line


def records(path: str | os.PathLike, counts: RankTrace | None = None) -> Iterator[Record]:
    """Stream the records of one trace file."""
    head: tuple[str, Any, dict[str, Any]] | None = None
    payload: list[str] = []
    size = 0

    def unreadable() -> None:
        if counts is not None:
            counts.truncated += 1

    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in _lines(handle, counts):
            if line.startswith("\t"):
                size += len(line)
                if head is not None and size > MAX_RECORD_BYTES:
                    head, payload = None, []  # a payload beyond any real record's
                    unreadable()
                elif head is not None:
                    payload.append(line[1:])
                continue
            if head is not None:
                yield Record(head[0], head[1], head[2], "".join(payload))
            head, payload, size = None, [], len(line)
            match = _PREFIX.match(line)
            if not match:
                if line.strip():
                    unreadable()  # a record line cut short (or not a record at all)
                continue
            try:
                envelope = json.loads(line[match.end():])
            except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, too deep
                unreadable()
                continue
            if not isinstance(envelope, dict):
                unreadable()
                continue
            keys = [k for k in envelope if k not in _METADATA]
            kind = keys[0] if keys else "?"
            data = envelope.get(kind)
            if kind == "artifact" and isinstance(data, dict):
                kind = f"artifact:{data.get('name')}"
            head = (kind, data, envelope)
    if head is not None:
        if head[2].get("has_payload") and not payload:
            unreadable()  # its payload never came
        else:
            yield Record(head[0], head[1], head[2], "".join(payload))


def _graph(record: Record) -> TraceGraph:
    ops, sources = [], []
    for line in record.payload.splitlines():
        source = _GRAPH_SOURCE.search(line)
        if source:
            loc = f"{source.group('file')}:{source.group('line')}"
            if loc not in sources:
                sources.append(loc)
            continue
        op = _GRAPH_OP.match(line)
        if op:
            ops.append(op.group("target"))
    sizes = (record.data or {}).get("sizes", {}) if isinstance(record.data, dict) else {}
    inputs = [list(shape) for name, shape in sizes.items() if name.startswith("l_")]
    return TraceGraph(record.compile_id, ops, sources, inputs)


def _metric_row(data: dict[str, Any]) -> dict[str, Any]:
    """The fields the analysis reads, each of its type or None (a mistyped field is dropped)."""
    return {k: (data.get(k) if isinstance(data.get(k), _METRIC_TYPES.get(k, object)) and
                not isinstance(data.get(k), bool) else None) for k in METRIC_FIELDS}


def read_rank(path: str | os.PathLike) -> RankTrace:
    """One rank's file, read in one pass; a record of the wrong shape is counted, skipped."""
    found = _RANK.search(os.path.basename(path))
    trace = RankTrace(rank=int(found.group(1)) if found else None, path=str(path))
    try:
        for record in records(path, trace):
            trace.records += 1
            try:
                _read_record(trace, record)
            except (TypeError, ValueError, AttributeError, KeyError, RecursionError):
                trace.truncated += 1  # a record of the right kind but the wrong shape
    except OSError as exc:
        trace.error = exc.strerror or str(exc)
    return trace


def _read_record(trace: RankTrace, record: Record) -> None:
    if record.compile_id is not None and not all(
            isinstance(record.envelope.get(k), int) for k in ("frame_id", "frame_compile_id")):
        raise TypeError("compile id fields are not integers")
    kind = record.kind
    if kind == "str" and isinstance(record.data, list) and len(record.data) == 2:
        name, index = record.data
        if isinstance(name, str) and isinstance(index, int):
            trace.strings[index] = name
    elif kind == "dynamo_start" and record.compile_id:
        stack = (record.data or {}).get("stack", []) if isinstance(record.data, dict) else []
        trace.starts[record.compile_id] = [
            f for f in stack if isinstance(f, dict) and isinstance(f.get("filename"), (int, str))
            and isinstance(f.get("line", 0), int) and isinstance(f.get("name", ""), str)
        ] if isinstance(stack, list) else []
    elif kind == "compilation_metrics" and isinstance(record.data, dict):
        # Only the fields the analysis reads: a row also carries tens of KB of config.
        trace.metrics.append(_metric_row(record.data))
    elif kind == "dynamo_output_graph":
        trace.graphs.append(_graph(record))
    elif kind == "artifact:dynamo_graph_break_reason":
        # The message the graph_breaks log prints, then Dynamo's own traceback: keep the
        # message (the user's stack is in it).
        trace.graph_break_logs.append(
            record.payload.split("\nTraceback (most recent call last):")[0])
    elif kind == "artifact:torch_version":
        try:
            trace.torch_version = json.loads(record.payload).get("pytorch_version")
        except (json.JSONDecodeError, AttributeError):
            pass
    elif kind == "artifact:recompile_reasons":
        try:
            reasons = json.loads(record.payload) if record.payload.lstrip().startswith(
                "[") else record.payload.splitlines()
        except json.JSONDecodeError:
            reasons = record.payload.splitlines()
        trace.recompiles.append((record.compile_id, [str(r) for r in reasons]))
    elif kind not in USED and not kind.startswith("artifact:"):
        trace.other[kind] = trace.other.get(kind, 0) + 1


def _kind_of(path: Path) -> str | None:
    """None for a regular file; else what it is (a trace folder may hold anything)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "a broken link" if path.is_symlink() else "unreadable"
    if stat.S_ISREG(mode):
        return None
    return {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFCHR: "a device",
            stat.S_IFBLK: "a device", stat.S_IFSOCK: "a socket"}.get(stat.S_IFMT(mode),
                                                                   "not a regular file")


def trace_files(folder: str | os.PathLike) -> tuple[list[Path], list[str]]:
    """The per-rank files of a TORCH_TRACE folder (or one file), ordered by rank, and what was
    skipped ("x.log (a FIFO)"): only regular files are read."""
    root = Path(folder)
    candidates = [root] if not root.is_dir() else sorted(
        root.glob("*.log"), key=lambda p: (int(m.group(1)) if (m := _RANK.search(p.name))
                                           else -1, p.name))
    files, skipped = [], []
    for path in candidates:
        kind = _kind_of(path)
        if kind is None:
            files.append(path)
        else:
            skipped.append(f"{path.name} ({kind})")
    return files, skipped
