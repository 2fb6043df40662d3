"""The order of the breaks, and the one place that changes it.

Compiled frames name the break they resume after by its index in the breaks
(``CompiledFrame.break_index``), so whoever re-orders, merges or drops breaks goes through
:func:`reorder_breaks`, which moves those indexes with them. The orders themselves: after
analysis the user's own breaks first, then skipped frames, then the most graph splits
(:func:`analysis_order`); once run-time counts are known, by impact within each owner
(:func:`rank`): counted, never timed, so one model has one numbering.
"""

from __future__ import annotations

import re
from typing import Callable, Protocol

from ..model.records import CompiledFrame, RootBreak
from ..rules.catalogue import rule_for
from ..rules.registry import EARLIER_BREAK

OWNER_RANK = {"user": 0, "third_party": 1, "torch": 2}  # the user's own breaks first


class HasBreaks(Protocol):
    """A result (or an analysis) whose frames point at its breaks by index."""

    breaks: list[RootBreak]
    frames: list[CompiledFrame]


def _same_break(breaks: list[RootBreak], old: RootBreak) -> int | None:
    """Where ``old`` itself is in ``breaks`` (None: dropped)."""
    return next((i for i, b in enumerate(breaks) if b is old), None)


def reorder_breaks(found: HasBreaks, breaks: list[RootBreak], *,
                   locate: Callable[[list[RootBreak], RootBreak], int | None] = _same_break
                   ) -> None:
    """Make ``breaks`` the breaks of ``found`` and keep each frame pointing at its break.

    ``breaks`` holds the same breaks re-ordered, some dropped (a frame then points at none);
    where breaks were merged into new ones, ``locate`` finds where a frame's old break went.
    """
    before = found.breaks
    found.breaks = breaks
    for frame in found.frames:
        if frame.break_index is not None:
            frame.break_index = locate(breaks, before[frame.break_index])


def analysis_order(brk: RootBreak) -> tuple:
    """Before anything ran: the user's own first, skipped frames first, most graph splits."""
    return (OWNER_RANK.get(brk.owner, 3), not brk.frame_skipped, -brk.graph_splits, brk.file,
            brk.line)


def impact(brk: RootBreak) -> float:
    """What ranks a break: fires per call × graph splits, counted, so a model's root causes
    are numbered the same with or without timing (a scan and its ``--fix`` run)."""
    fires = 1.0 if brk.fires_per_call is None else brk.fires_per_call
    return fires * brk.graph_splits


def rank(found: HasBreaks) -> None:
    """Order the breaks by impact within each owner (the user's own first); a tie goes to the
    larger measured cost, then keeps the analysis order; a break caused by an earlier one right
    after it. Frames keep pointing at the same breaks."""
    reorder_breaks(found, after_causes(sorted(
        found.breaks, key=lambda b: (OWNER_RANK.get(b.owner, 3), -impact(b),
                                     -(b.cost_s_per_call or 0.0)))))


def mark_caused(breaks: list[RootBreak]) -> None:
    """A break whose hints say an earlier break may cause it (Dynamo's hint class
    CAUSED_BY_EARLIER_GRAPH_BREAK) points at the break Dynamo met before it (``breaks`` in the
    order Dynamo reported them); only one in the same file, at or above its line."""
    for at, brk in enumerate(breaks):
        if EARLIER_BREAK not in brk.hint_classes or brk.caused_by is not None:
            continue
        earlier = [b for b in breaks[:at] if b.file == brk.file and b.line <= brk.line]
        if earlier:  # the last break before it in its own file
            brk.caused_by = earlier[-1].location()
    for brk in breaks:  # an object an earlier break created, used where this one breaks
        maker = next((b for b in breaks if b is not brk and
                      rule_for(b.root_category).makes_object and b.file == brk.file and
                      b.function == brk.function and b.line < brk.line
                      and _uses(brk.code, _bound(b.code))), None)
        if maker is not None and brk.caused_by is None:
            brk.caused_by = maker.location()


_NAME = re.compile(r"[A-Za-z_]\w*")


def _bound(code: str) -> set[str]:
    """The plain names a one-line assignment binds (``g = ...``, ``a, b = ...``)."""
    target, sep, _ = code.partition("=")
    if not sep or code.lstrip().startswith(("if ", "while ", "return ")) or "==" in code:
        return set()
    return set(_NAME.findall(target)) - {"self"}


def _uses(code: str, names: set[str]) -> bool:
    return bool(names) and bool(names & set(_NAME.findall(code.partition("=")[2] or code)))


def after_causes(breaks: list[RootBreak]) -> list[RootBreak]:
    """``breaks`` with each caused break moved right after the break that causes it."""
    order = [b for b in breaks if b.caused_by is None or
             not any(c.location() == b.caused_by for c in breaks if c is not b)]
    for brk in breaks:
        if brk not in order:
            cause = next(i for i, c in enumerate(order) if c.location() == brk.caused_by)
            order.insert(cause + 1, brk)
    return order
