"""Stage 3 for ``breakscan trace``: each rank's trace analysed like a scan, then one report
across the ranks.

A rank's records (``trace.read_rank``) go through the same ``analyse`` as a scan's capture (the
``dynamo_graph_break_reason`` payloads are the graph_breaks log's messages, the
``compilation_metrics`` rows the same metrics), its graphs come from ``dynamo_output_graph`` and
its recompiles from ``recompile_reasons`` with the ``dynamo_start`` stack of the call that
recompiled. The report across ranks keeps every root-cause break once with the ranks it
appears on, every recompile with its rank, a summary per rank, and, first, what differs between
ranks (a rank that recompiles because its batch differs is the classic distributed surprise).
Imports no torch.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..analysis.analyse import analyse
from ..analysis.ranking import rank
from ..analysis.recompiles import program_recompiles
from ..errors import UsageError
from ..frames import display_path, sources_within
from ..model.raw import RawCapture
from ..model.records import FrameMetric, GraphInfo
from ..model.result import RankSummary, ScanResult
from .reader import MAX_RECORD_BYTES, RankTrace, read_rank, trace_files


def _metric(row: dict) -> FrameMetric:
    return FrameMetric(compile_id=row.get("compile_id"), name=row.get("co_name"),
                       file=row.get("co_filename"), first_line=row.get("co_firstlineno"),
                       graph_op_count=row.get("graph_op_count"), fail_type=row.get("fail_type"),
                       fail_reason=row.get("fail_reason"),
                       fail_file=row.get("fail_user_frame_filename"),
                       fail_line=row.get("fail_user_frame_lineno"),
                       compile_s=row.get("entire_frame_compile_time_s"))


def rank_result(trace: RankTrace) -> ScanResult:
    """One rank's trace as a scan result."""
    metrics = [_metric(row) for row in trace.metrics]
    raw = RawCapture(explain=None, explain_error=None, graph_break_logs=trace.graph_break_logs,
                     recompile_logs=[], code_events=[], metrics=metrics, dynamo_log=[],
                     model_output="", seconds=0.0, notes=[])
    found = analyse(raw)
    graphs = [GraphInfo(index=i, compile_id=g.compile_id, op_count=len(g.ops),
                        call_function_count=len(g.ops), ops=g.ops, source_lines=g.source_lines,
                        input_shapes=g.input_shapes, break_reason=None)
              for i, g in enumerate(trace.graphs)]
    found.summary.graph_count = len(graphs)
    found.summary.op_count = sum(g.op_count for g in graphs)
    by_id = {m.compile_id: m for m in metrics}
    texts, stacks = [], []
    for compile_id, reasons in trace.recompiles:
        frame = by_id.get(compile_id)
        name, file, line = (frame.name, frame.file, frame.first_line) if frame else ("?", "?", 0)
        texts.append(f"Recompiling function {name} in {file}:{line} triggered by the following "
                     "guard failure(s):\n" + "".join(f"    - {r}\n" for r in reasons))
        stacks.append([(trace.strings.get(f.get("filename"), "?"), f.get("line") or 0,
                        f.get("name") or "?") for f in trace.starts.get(compile_id or "", [])])
    recompiles = program_recompiles(texts, stacks, metrics, len(graphs), None)
    for rec in recompiles.recompiles:
        rec.rank = trace.rank
    found.summary.recompile_count = len(recompiles.recompiles)
    label = f"rank {trace.rank}" if trace.rank is not None else os.path.basename(trace.path)
    result = ScanResult.start(
        label, dataclasses.replace(found, graphs=graphs, discrepancies=[]),
        torch_version=trace.torch_version or "unknown",
        captured_call="every compile the job's trace recorded", capture_seconds=0.0,
        recompiles=recompiles)
    for brk in result.breaks:
        brk.ranks = [trace.rank] if trace.rank is not None else []
    rank(result)
    return result


def _summary(trace: RankTrace, result: ScanResult) -> RankSummary:
    s = result.summary
    return RankSummary(rank=trace.rank, file=trace.path, graphs=s.graph_count,
                       breaks=s.graph_break_count, break_records=s.break_records,
                       frames_skipped=s.frames_skipped, recompiles=s.recompile_count,
                       compile_s=round(sum(f.get("entire_frame_compile_time_s") or 0.0
                                           for f in trace.metrics), 3),
                       records=trace.records, truncated=trace.truncated, other=dict(trace.other))


def trace_report(folder: str | os.PathLike,
                 source_roots: list[str] | None = None) -> ScanResult:
    """The report of a TORCH_TRACE folder (or one file): every rank's breaks, graphs and
    recompiles, what differs between ranks, and a summary per rank.

    The files a trace names are someone else's: source is read (and shown) only for Python
    files under ``source_roots`` (default: the working directory)."""
    if not Path(folder).exists() and not Path(folder).is_symlink():
        raise UsageError(f"{folder}: no such file or folder")
    files, skipped = trace_files(folder)
    if not files:
        what = f" (skipped: {', '.join(skipped)})" if skipped else ""
        raise UsageError(f"{folder} holds no trace file (*.log){what}: run the job with "
                         "TORCH_TRACE=<folder> first")
    roots = [os.path.abspath(r) for r in (source_roots or [os.getcwd()])]
    traces = [read_rank(path) for path in files]
    if not any(t.records for t in traces):
        raise UsageError(f"no TORCH_TRACE records in {folder}")
    with sources_within(roots):
        results = [rank_result(trace) for trace in traces]
    merged = results[0]
    merged.target = f"trace {folder} ({len(traces)} rank{'' if len(traces) == 1 else 's'})"
    breaks = {(b.category, b.file, b.line): b for b in merged.breaks}
    for result in results[1:]:
        for brk in result.breaks:
            key = (brk.category, brk.file, brk.line)
            if key in breaks:
                breaks[key].ranks = sorted(set(breaks[key].ranks) | set(brk.ranks))
            else:
                breaks[key] = brk
                merged.breaks.append(brk)
        merged.recompiles.recompiles += result.recompiles.recompiles
        merged.recompiles.limit_hits += result.recompiles.limit_hits
    merged.ranks = [_summary(t, r) for t, r in zip(traces, results)]
    s = merged.summary
    s.graph_count = max(r.summary.graph_count for r in results)
    s.graph_break_count = len(merged.breaks)
    s.break_records = max(r.summary.break_records for r in results)
    s.frames_skipped = max(r.summary.frames_skipped for r in results)
    s.recompile_count = len(merged.recompiles.recompiles)
    merged.rank_differences = differences(merged, [t.rank for t in traces])
    for trace in traces:
        who = f"rank {trace.rank}" if trace.rank is not None else os.path.basename(trace.path)
        if trace.error:
            merged.notes.append(f"{who}: not read ({trace.error})")
        if trace.truncated:
            merged.notes.append(f"{who}: {trace.truncated} record(s) cut short or unreadable "
                                "(the job was killed while writing? a malformed record?): "
                                "skipped" + (f", {trace.oversized} of them over "
                                             f"{MAX_RECORD_BYTES // 2**20} MB"
                                             if trace.oversized else ""))
    if skipped:
        merged.notes.append(f"skipped (not regular files): {', '.join(skipped)}")
    merged.notes.append("source is shown only for Python files under "
                        + ", ".join(display_path(r) or "." for r in roots)
                        + " (--source-root)")
    merged.source_roots = roots
    rank(merged)
    return merged


def differences(merged: ScanResult, ranks: list[int | None]) -> list[str]:
    """What differs between ranks, one line each: the first thing to read."""
    out: list[str] = []
    everywhere = set(r for r in ranks if r is not None)
    for brk in merged.breaks:
        if set(brk.ranks) != everywhere:
            out.append(f"the break at {os.path.basename(brk.file)}:{brk.line} ({brk.category}) "
                       f"appears on rank(s) {', '.join(map(str, brk.ranks))} only")
    for topic, key in (("graphs", "graphs"), ("root-cause breaks", "breaks"),
                       ("recompiles", "recompiles")):
        values = {r.rank: getattr(r, key) for r in merged.ranks}
        if len(set(values.values())) > 1:
            out.append(f"{topic} differ: " + ", ".join(f"rank {k}: {v}"
                                                      for k, v in values.items()))
    recompiled = {r.rank for r in merged.recompiles.recompiles}
    if recompiled and len(recompiled) < len(everywhere):  # some ranks recompiled, others not
        out += [f"rank {rec.rank} recompiled {rec.function}() "
                f"({os.path.basename(rec.file)}:{rec.line}): {'; '.join(rec.reasons)}"
                for rec in merged.recompiles.recompiles]
    return out


__all__ = ["trace_report", "rank_result"]
