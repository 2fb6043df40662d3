"""Root-cause breaks keyed by source location: the collection every analysis step adds to.

One break in the source can reach breakscan as several log records, explain reasons and
metrics rows; :class:`Roots` keeps one :class:`RootBreak` per location (and per category on one
line), and :func:`break_at` says which break a line belongs to.
"""

from __future__ import annotations

from . import categories
from ..frames import Frame, acting_frame, model_stack, owner_of, source_line
from ..records import BreakRecord, RootBreak


def source_text(file: str, line: int, fallback: str = "") -> str:
    """The stripped text of ``file:line``, or ``fallback`` when it cannot be read."""
    text = source_line(file, line).strip()
    return text or fallback


class Roots:
    """Root-cause breaks keyed by source location, in first-seen order."""

    def __init__(self) -> None:
        self.items: list[RootBreak] = []

    def find(self, file: str, line: int, category: str | None = None) -> RootBreak | None:
        """The root at ``file:line``; given a record's ``category``, another category on the
        same line is a different break (``.item()`` and ``.tolist()`` in one expression)."""
        for item in self.items:
            if item.file == file and item.line == line and (
                    category in (None, "other") or
                    (item.cause_category or item.category) in (category, "other")):
                return item
        if any(item.file == file and item.line == line for item in self.items):
            return None
        for item in self.items:  # a frame further up the chain (duplicate/short records)
            if any(f.file == file and f.line == line for f in item.call_chain):
                return item
        return None

    def add(self, *, chain: list[Frame], gb_id: str | None, gb_type: str, explanation: str,
            hints: list[str], context: str, source: str, file: str, line: int,
            function: str, code: str) -> RootBreak:
        category = categories.categorize(gb_id, gb_type, explanation, context,
                                         source_text(file, line, code))
        owner = owner_of(file)
        item = RootBreak(
            owner=owner, category=category, gb_id=gb_id, gb_type=gb_type,
            file=file, line=line, code=source_text(file, line, code), function=function,
            call_chain=chain, explanation=explanation, hints=list(hints),
            suggestion=categories.CATEGORIES[category].suggestion,
            doc_url=categories.registry_url(gb_id), records=0, explain_reasons=0,
            resume_functions=[], sources=[source])
        self.items.append(item)
        return item


def record_location(record: BreakRecord) -> tuple[list[Frame], Frame | None]:
    """A log record's call chain in the model and the frame to act on (its header's line when
    the stack names none)."""
    chain = model_stack(record.user_stack)
    root = acting_frame(chain)
    if root is None and record.header_file and record.header_line:
        root = Frame(record.header_file, record.header_line, "", "")
    return chain, root


def break_at(breaks: list[RootBreak], file: str | None, line: int | None) -> int | None:
    """The index of the break at ``file:line``: the line is the break's, a site's, or a call on
    its chain (a nested break cuts every enclosing frame). A resume function at that line
    resumes after it; a frame whose compilation failed there was skipped because of it."""
    if not file or not line:
        return None
    # A break's own line first: another break's chain may pass through it (a hook called from
    # the line of a `loss.backward()` that breaks itself).
    for where in (lambda b: [Frame(b.file, b.line, "")], lambda b: b.sites,
                  lambda b: b.follow_on, lambda b: b.call_chain):
        for idx, item in enumerate(breaks):
            if any(f.file == file and f.line == line for f in where(item)):
                return idx
    return None
