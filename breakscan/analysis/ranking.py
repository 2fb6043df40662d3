"""The order of the breaks, and the one place that changes it.

Compiled frames name the break they resume after by its index in the breaks
(``CompiledFrame.break_index``), so whoever re-orders, merges or drops breaks goes through
:func:`reorder_breaks`, which moves those indexes with them. The orders themselves: after
analysis the user's own breaks first, then skipped frames, then the most graph splits
(:func:`analysis_order`); once run-time counts or costs are known, by impact within each owner
(:func:`rank`).
"""

from __future__ import annotations

from typing import Callable, Protocol

from ..records import CompiledFrame, RootBreak

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
    """What ranks a break: its measured cost when timed, else fires per call × graph splits."""
    if brk.cost_s_per_call is not None:
        return brk.cost_s_per_call
    fires = 1.0 if brk.fires_per_call is None else brk.fires_per_call
    return fires * brk.graph_splits


def rank(found: HasBreaks) -> None:
    """Order the breaks by impact within each owner (the user's own first); a tie keeps the
    analysis order. Frames keep pointing at the same breaks."""
    reorder_breaks(found, sorted(found.breaks,
                                 key=lambda b: (OWNER_RANK.get(b.owner, 3), -impact(b))))
