"""Where explain's numbers and breakscan's differ, both numbers and the facts behind the gap;
and the counts that name the breaks, redone after breaks were merged or dropped.

explain counts graph boundaries and call_function nodes; breakscan counts root-cause breaks
(source locations) and every op. Each :class:`Discrepancy` says which break made the gap.
"""

from __future__ import annotations

import os
from typing import Any

from ..model.records import CompiledFrame, Discrepancy, ExplainCounts, GraphInfo, RootBreak
from ..model.result import Summary
from .skipped import skipped_code


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def discrepancies(summary: Summary, explain: ExplainCounts, breaks: list[RootBreak],
                  graphs: list[GraphInfo], frames: list[CompiledFrame]) -> list[Discrepancy]:
    """Where explain and breakscan disagree, both numbers and the facts that explain the gap."""
    if not explain.available:
        return [Discrepancy("explain", None, summary.graph_break_count,
                            f"torch._dynamo.explain failed ({explain.error}); all numbers come "
                            "from breakscan's own capture")]
    out: list[Discrepancy] = []
    if explain.graph_break_count != summary.graph_break_count:
        out.append(Discrepancy("graph_break_count", explain.graph_break_count,
                               summary.graph_break_count,
                               "; ".join(_break_count_gap(summary, explain, breaks, frames))))
    if len(explain.break_reasons) != summary.break_records:
        out.append(Discrepancy(
            "break_reasons", len(explain.break_reasons), summary.break_records,
            "explain lists a reason only for breaks that ended a graph it kept; the graph_breaks "
            "log also records leading breaks, skipped frames and each nested frame's split"))
    if explain.op_count != summary.op_count:
        methods = sum(g.op_count - g.call_function_count for g in graphs)
        names = sorted({op for g in graphs for op in g.ops if op.startswith(".")})
        examples = ", ".join(f"{n}()" for n in names[:4])  # the method, no guessed receiver
        out.append(Discrepancy(
            "op_count", explain.op_count, summary.op_count,
            f"explain counts only call_function nodes; breakscan also counts "
            f"{_plural(methods, 'call_method/call_module node')}"
            + (f" (here: {examples})" if examples else "")))
    return out


def _break_count_gap(summary: Summary, explain: ExplainCounts, breaks: list[RootBreak],
                     frames: list[CompiledFrame]) -> list[str]:
    """Why explain's graph_break_count differs: what it counts, then each break's part."""
    why = [f"explain's graph_break_count is graph_count - 1 = {explain.graph_count} - 1 "
           f"(graph boundaries, not break sites); breakscan counts "
           f"{_plural(summary.graph_break_count, 'root-cause break')} (unique source "
           f"locations) from {_plural(summary.break_records, 'break record')}"]
    for b in breaks:
        loc = f"{os.path.basename(b.file)}:{b.line}"
        if b.frame_skipped:
            skipped = {(f.name, f.file) for f in frames if f.skipped and
                       (f.fail_file, f.fail_line) == (b.file, b.line)} or {(b.function, b.file)}
            what = ", ".join(sorted({skipped_code(name, file) for name, file in skipped}))
            why.append(f"{loc} made Dynamo skip {what} (it ran eagerly), so explain sees no "
                       "graph for it")
        elif b.follow_on_records:
            why.append(f"{loc} has {_plural(b.records, 'record')}: its own and Dynamo's "
                       + ", ".join(f"'{r}'" for r in b.follow_on_records) + ", which Dynamo "
                       "says follows from it (one construct, one root cause)")
        elif b.explain_reasons == 0:
            why.append(f"{loc} is invisible to explain (a break before the first tensor op "
                       "leaves no graph to end)")
        elif b.explain_reasons > 1 or b.records > 1:
            chain = " -> ".join(f"{f.function}() at {os.path.basename(f.file)}:{f.line}"
                                for f in b.call_chain) or b.function
            why.append(f"{loc} cuts {_plural(max(b.records, b.explain_reasons), 'frame')} "
                       f"({chain}): each enclosing frame adds graphs")
        elif not b.resume_functions:
            why.append(f"{loc} is a trailing break: the rest of the frame runs eagerly, so "
                       "no graph follows it")
    return why


def recount(result: Any) -> None:
    """After root causes were merged or dropped: the counts and explanations that name them."""
    breaks = result.breaks
    s = result.summary
    s.graph_break_count = sum(b.calls != "later_only" for b in breaks)
    if result.later_call is not None:
        result.later_call.graph_break_count = sum(b.calls != "first_only" for b in breaks)
    result.discrepancies = discrepancies(s, result.explain, [b for b in breaks
                                                             if b.calls != "later_only"],
                                         result.graphs, result.frames)
