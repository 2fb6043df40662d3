"""``breakscan trace``: the structured trace logs ``TORCH_TRACE`` writes (one file per rank), read
into the same records a scan captures, so one analysis serves both.

The format is the one tlparse reads: a glog-style prefix (``V1121 19:53:10.123456 4242
torch/_dynamo/convert_frame.py:1234] ``), a one-line JSON envelope, and, when the envelope has
``has_payload``, tab-indented payload lines after it. Files are streamed line by line (never read
whole); a truncated last record (a killed job) is dropped and counted; envelope keys this reader
does not use (a newer torch's) are counted as ``other``, never an error. Imports no torch.
"""

from __future__ import annotations

import json
import os
import re
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
    other: dict[str, int] = field(default_factory=dict)  # envelope kinds not used here
    graph_break_logs: list[str] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)  # compilation_metrics rows
    recompiles: list[tuple[str | None, list[str]]] = field(default_factory=list)
    graphs: list[TraceGraph] = field(default_factory=list)
    starts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # compile id -> stack
    strings: dict[int, str] = field(default_factory=dict)  # interned file names
    torch_version: str | None = None


def records(path: str | os.PathLike, counts: RankTrace | None = None) -> Iterator[Record]:
    """Stream the records of one trace file."""
    head: tuple[str, Any, dict[str, Any]] | None = None
    payload: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if counts is not None:
                counts.bytes += len(line)
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            if head is not None:
                yield Record(head[0], head[1], head[2], "".join(payload))
            head, payload = None, []
            match = _PREFIX.match(line)
            if not match:
                if line.strip() and counts is not None:
                    counts.truncated += 1  # a record line cut short (or not a record at all)
                continue
            try:
                envelope = json.loads(line[match.end():])
            except json.JSONDecodeError:
                if counts is not None:
                    counts.truncated += 1
                continue
            keys = [k for k in envelope if k not in _METADATA]
            kind = keys[0] if keys else "?"
            data = envelope.get(kind)
            if kind == "artifact" and isinstance(data, dict):
                kind = f"artifact:{data.get('name')}"
            head = (kind, data, envelope)
    if head is not None:
        if head[2].get("has_payload") and not payload and counts is not None:
            counts.truncated += 1  # its payload never came
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


def read_rank(path: str | os.PathLike) -> RankTrace:
    """One rank's file, read in one pass."""
    found = _RANK.search(os.path.basename(path))
    trace = RankTrace(rank=int(found.group(1)) if found else None, path=str(path))
    for record in records(path, trace):
        trace.records += 1
        kind = record.kind
        if kind == "str" and isinstance(record.data, list) and len(record.data) == 2:
            trace.strings[record.data[1]] = record.data[0]
        elif kind == "dynamo_start" and record.compile_id:
            trace.starts[record.compile_id] = (record.data or {}).get("stack", [])
        elif kind == "compilation_metrics" and isinstance(record.data, dict):
            # Only the fields the analysis reads: a row also carries tens of KB of config.
            trace.metrics.append({k: record.data.get(k) for k in METRIC_FIELDS})
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
    return trace


def trace_files(folder: str | os.PathLike) -> list[Path]:
    """The per-rank files of a TORCH_TRACE folder (or one file), ordered by rank."""
    root = Path(folder)
    if root.is_file():
        return [root]
    files = sorted(root.glob("*.log"), key=lambda p: (int(m.group(1)) if (m := _RANK.search(
        p.name)) else -1, p.name))
    return files
