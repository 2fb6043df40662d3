"""Stage 3 — analyse: reconcile explain's view with the raw records into root-cause breaks.

One break in the source can appear as several log records, several explain reasons and several
extra graphs (a break in a nested submodule cuts every enclosing frame). A *root-cause break* is
one source location; its ``records``/``explain_reasons``/``resume_functions`` say how many times
Dynamo reported or split on it. Where explain's numbers differ from breakscan's, a
:class:`Discrepancy` states both and why.
"""

from __future__ import annotations

import dataclasses
import os

from ..frames import (Frame, is_stdlib_file, is_torch_file, model_stack, source_line,
                      user_frame)
from ..messages import split_reason
from ..model.raw import RawCapture
from ..model.records import (BreakRecord, CompiledFrame, Discrepancy, ExplainCounts, GraphInfo,
                             RootBreak)
from ..model.result import Summary
from ..rules import categories
from ..rules.bs017_context_manager import RULE as CONTEXT_MANAGER
from .advice import advice
from .breaklog import parse_break_message
from .discrepancies import discrepancies
from .graphs import compiled_frames, explain_counts, graph_info
from .loops import merge_iterations
from .origins import merge_origins
from .ranking import after_causes, analysis_order, mark_caused, reorder_breaks
from .roots import (Roots, break_at, break_frame, called_from, category_at, is_with,
                    recategorise, record_location)
from .skipped import (confirm_compiled_before, fold_comprehensions, fold_follow_on_records,
                      mark_skipped, name_skipped_frames)


@dataclasses.dataclass
class Analysis:
    """What one capture comes to: the ScanResult fields this stage fills in."""

    summary: Summary
    explain: ExplainCounts
    graphs: list[GraphInfo]
    breaks: list[RootBreak]  # root causes, ranked
    frames: list[CompiledFrame]
    discrepancies: list[Discrepancy]  # where explain's numbers and breakscan's differ, and why


def analyse(raw: RawCapture, in_force: dict | None = None) -> Analysis:
    """Reconcile explain's output and the raw records of one capture into root-cause breaks;
    ``in_force``: the Dynamo settings the scanned process had changed (not advised again)."""
    explain = explain_counts(raw.explain, raw.explain_error)
    graphs = [graph_info(i, gm) for i, gm in enumerate(raw.explain.graphs if raw.explain else [])]
    records = [r for r in (parse_break_message(t) for t in raw.graph_break_logs) if r]
    roots = Roots()
    first_record = _add_records(roots, records)
    _add_explain_reasons(roots, explain)
    frames = compiled_frames(raw)
    _add_skipped_frames(roots, frames)
    name_skipped_frames(roots.items, frames)
    merge_origins(roots, first_record)
    merge_iterations(roots)
    fold_comprehensions(roots, frames)
    fold_follow_on_records(roots)
    _attach_resume_functions(roots.items, frames)
    confirm_compiled_before(roots.items, graphs)
    mark_caused(roots.items)
    for item in roots.items:
        item.user_frame = user_frame(item.call_chain) if item.owner != "user" else None
        item.suggestion = advice(item, in_force)
    found = Analysis(summary=_summary(raw, records, graphs, roots.items, frames), explain=explain,
                     graphs=graphs, breaks=roots.items, frames=frames, discrepancies=[])
    reorder_breaks(found, after_causes(sorted(roots.items, key=analysis_order)))
    found.discrepancies = discrepancies(found.summary, explain, found.breaks, graphs, frames)
    return found


def _add_records(roots: Roots, records: list[BreakRecord]) -> dict[int, BreakRecord]:
    """The graph_breaks log's records as root causes; the first record of each root (by id)."""
    first_record: dict[int, BreakRecord] = {}
    for record in records:
        chain, frame = record_location(record)
        if frame is None:
            continue
        chain, frame = _at_the_with(chain, frame)
        category = category_at(chain, record.gb_id, record.gb_type, record.explanation,
                               record.context, frame.file, frame.line, frame.code)
        item = roots.find(frame.file, frame.line, category,
                          via=called_from(chain, frame.file, frame.line))
        if item is not None and category == CONTEXT_MANAGER.category and is_with(item.code) \
                and ((item.cause_category or item.category) != category
                     or categories.FAMILY_OF.get(item.gb_id or "") !=
                     categories.FAMILY_OF.get(record.gb_id or "") == category):
            # a `with`: the manager is the construct, named by its own id (GB0142) rather than
            # the call that made it (GB0208, itself narrowed to the manager at a with line)
            roots.rename(item, record, category)
        if item is None:
            item = roots.add(chain=chain, gb_id=record.gb_id, gb_type=record.gb_type,
                             explanation=record.explanation, hints=record.hints,
                             context=record.context, source="log", file=frame.file,
                             line=frame.line, function=frame.function, code=frame.code)
            first_record[id(item)] = record
        elif not item.call_chain and chain:
            item.call_chain = chain
        item.records += 1
        if record.skip_kind:
            mark_skipped(item, record)
    return first_record


def _at_the_with(chain: list[Frame], frame: Frame) -> tuple[list[Frame], Frame]:
    """A record inside the standard library's ``contextlib`` (torch 2.14 places entering a
    generator-based manager at ``return next(self.gen)``) belongs to the user's ``with`` line
    that entered it: one construct, one root cause."""
    if not is_stdlib_file(frame.file) or os.path.basename(frame.file) != "contextlib.py":
        return chain, frame
    for at in range(len(chain) - 1, -1, -1):
        if is_with(chain[at].code or source_line(chain[at].file, chain[at].line)):
            return chain[:at + 1], chain[at]
    return chain, frame


def _add_explain_reasons(roots: Roots, explain: ExplainCounts) -> None:
    """explain's break reasons: counted on the root they name, or a root of their own."""
    for reason in explain.break_reasons:
        parts = split_reason(reason["reason"])
        chain, frame = break_frame(model_stack(reason["user_stack"]), parts["explanation"])
        if frame is None:
            continue
        item = roots.find(frame.file, frame.line, category_at(
            chain, parts["gb_id"], parts["gb_type"], parts["explanation"], "", frame.file,
            frame.line, frame.code) if parts["gb_id"] else None, parts["gb_id"])
        if item is None:
            item = roots.add(chain=chain, gb_id=parts["gb_id"], gb_type=parts["gb_type"],
                             explanation=parts["explanation"], hints=parts["hints"], context="",
                             source="explain", file=frame.file, line=frame.line,
                             function=frame.function, code=frame.code)
        else:
            if "explain" not in item.sources:
                item.sources.append("explain")
            if len(chain) > len(item.call_chain):  # a submodule's log record omits outer frames
                item.call_chain = chain
        item.explain_reasons += 1


def _add_skipped_frames(roots: Roots, frames: list[CompiledFrame]) -> None:
    """The frames the compilation metrics say Dynamo skipped, at the line that failed."""
    for frame in frames:
        if frame.skipped and frame.fail_file and frame.fail_line:
            item = roots.find(frame.fail_file, frame.fail_line)
            if item is None and frame.fail_file != frame.file and (
                    os.path.basename(frame.fail_file) == "contextlib.py" and
                    is_stdlib_file(frame.fail_file) or is_torch_file(frame.fail_file)):
                # entering a `with` of the skipped frame (contextlib, or torch's generator
                # such as fork_rng): the `with` line's root, when the frame has one
                item = next((r for r in roots.items if r.file == frame.file and is_with(r.code)),
                            None)
                if item is not None and item.category != CONTEXT_MANAGER.category:
                    # the manager is the construct (torch 2.14 names only the call, GB0208)
                    recategorise(item, CONTEXT_MANAGER.category)
            if item is None:
                reason = frame.fail_reason or frame.fail_type or "frame skipped"
                item = roots.add(chain=[Frame(frame.fail_file, frame.fail_line, frame.name)],
                                 gb_id=None, gb_type=reason, explanation=reason, hints=[],
                                 context="", source="metrics", file=frame.fail_file,
                                 line=frame.fail_line, function=frame.name, code="")
            elif "metrics" not in item.sources:
                item.sources.append("metrics")
            if not item.frame_skipped:
                mark_skipped(item, None, metric=frame)


def _attach_resume_functions(items: list[RootBreak], frames: list[CompiledFrame]) -> None:
    """Each resume function on the break it resumes after; the frame points at that break."""
    for frame in frames:
        if frame.is_resume and frame.resume_line is not None:
            idx = break_at(items, frame.file, frame.resume_line)
            if idx is not None:
                items[idx].resume_functions.append(frame.name)
                frame.break_index = idx


def _summary(raw: RawCapture, records: list[BreakRecord], graphs: list[GraphInfo],
             breaks: list[RootBreak], frames: list[CompiledFrame]) -> Summary:
    """The capture's counts: graphs, root-cause breaks, break records, ops, frames skipped."""
    skipped = sum(1 for f in frames if f.skipped)
    if not raw.metrics:
        skipped = sum(1 for b in breaks if b.frame_skipped)
    return Summary(graph_count=len(graphs), graph_break_count=len(breaks),
                   break_records=len(records) if raw.graph_break_logs or records
                   else sum(b.explain_reasons for b in breaks),
                   op_count=sum(g.op_count for g in graphs), frames_skipped=skipped)

