"""Parse Dynamo's graph-break log messages into structured :class:`BreakRecord` s.

The layout is fixed by ``torch._dynamo.exc.format_graph_break_message`` and
``InstructionTranslator.log_graph_break``::

    Graph break in user code at FILE:LINE
    Graph Break Reason: [prefix line(s) …:]
    <gb_type>
      Explanation: …
      Hint: …                       (zero or more, continuation lines indented)
      Developer debug context: …
     For more details about this graph break, please visit: …/gb/gbNNNN.html
    [*** While handling this graph break, another graph break occurred: ***
    <wrapper gb_type> … (e.g. GB7000 "graph break in loop": the frame is skipped)]
    User code traceback:
      File "…", line N, in fn
        source

Variants handled: the short duplicate form (no traceback), and the convert_frame "skip" form
("torch.compile will skip tracing the frame …"). The *first* block is the root cause; a later
block wraps it. The blocks themselves are read by ``messages.py`` (below every stage).
"""

from __future__ import annotations

import re

from ..frames import parse_stack, provenance_frame
from ..messages import gb_id_of, parse_blocks
from ..model.records import BreakRecord

_HEADER = re.compile(
    r"Graph break (?P<dup>\(user stack suppressed due to duplicate graph break\) )?"
    r"in user code at (?P<file>.+):(?P<line>\d+)\s*$")
_GRAPH_INPUT = re.compile(r": graph input \((?P<name>L_\w+)\)")
# How Dynamo fell back to eager, from the reason's wording (symbolic_convert / convert_frame):
SKIP_KINDS = (
    # A break inside a for/while loop: the wrapping "graph break in loop" (GB7000) block.
    ("loop", "graph break in loop"),
    # The root frame could not handle the break at all (inside a try/with block, an
    # unsupported bytecode, nothing resumable before it): the whole function runs eagerly.
    ("whole_frame", "Skipping the function and falling back to eager"),
    ("whole_frame", "which results in a skip"),
    # Compiled up to the last resumable point; the rest of the function runs eagerly.
    ("rest_of_frame", "then skipping the rest of the function"),
)


def _trace_start(lines: list[str]) -> int | None:
    """The line that opens the user's traceback, if the message has one."""
    for marker in ("User code traceback:", "The graph break occurred in the following user code:"):
        for idx, line in enumerate(lines):
            if line.strip() == marker:
                return idx
    return None


def _stack_lines(tail: list[str]) -> list[str]:
    """The traceback's lines: it stops where an appended exception message begins."""
    for idx, line in enumerate(tail):
        if line and not line.startswith(" "):
            return tail[:idx]
    return tail


def parse_break_message(text: str) -> BreakRecord | None:
    """Parse one ``graph_breaks`` log message; None when it is not a break record."""
    lines = text.splitlines()
    if not lines:
        return None
    header_file = header_line = None
    duplicate = False
    m = _HEADER.search(lines[0])
    if m:
        header_file, header_line = m.group("file"), int(m.group("line"))
        duplicate = bool(m.group("dup"))
    elif not lines[0].startswith("Graph break"):
        return None

    trace_start = _trace_start(lines)
    body = lines if trace_start is None else lines[:trace_start]
    # The convert_frame "skip" form appends the exception text after the traceback.
    tail = [] if trace_start is None else lines[trace_start + 1:]
    blocks = parse_blocks(body) or parse_blocks(tail)
    user_stack = parse_stack("\n".join(_stack_lines(tail)))
    skip_kind = next((kind for kind, marker in SKIP_KINDS if marker in text), None)
    shared = {"header_file": header_file, "header_line": header_line, "user_stack": user_stack,
              "duplicate": duplicate, "raw": text}  # what every record of this message has
    if blocks:
        return _structured_record(blocks, skip_kind, shared)
    return _reason_record(body, skip_kind, shared)


def _structured_record(blocks: list[dict], skip_kind: str | None, shared: dict) -> BreakRecord:
    """The record of a message with Dynamo's blocks: the first is the root cause, a later one
    wraps it (a break in a loop)."""
    frame_skipped = skip_kind in ("loop", "whole_frame")
    root = blocks[0]
    gb_type = root["gb_type"]
    gb_id = root["gb_id"] or gb_id_of(gb_type)
    wrapper = blocks[-1] if len(blocks) > 1 else None
    if wrapper and (wrapper["gb_id"] == "GB7000" or "loop" in wrapper["gb_type"]):
        frame_skipped, skip_kind = True, "loop"
    provenance = [f for f in map(provenance_frame, root["explanation"].splitlines()) if f]
    return BreakRecord(
        gb_id=gb_id, gb_type=gb_type, explanation=root["explanation"],
        hints=root["hints"], context=root["context"], frame_skipped=frame_skipped,
        wrapper_gb_id=(wrapper["gb_id"] or gb_id_of(wrapper["gb_type"]))
        if wrapper else None,
        wrapper_gb_type=wrapper["gb_type"] if wrapper else None,
        provenance=provenance, graph_inputs=_GRAPH_INPUT.findall(root["explanation"]),
        skip_kind=skip_kind, **shared)


def _reason_record(body: list[str], skip_kind: str | None, shared: dict) -> BreakRecord:
    """No structured block (old torch, or a reason Dynamo did not format): keep the reason
    line."""
    reason = ""
    for line in body:
        if line.startswith("Graph Break Reason:"):
            reason = line.split(":", 1)[1].strip()
    return BreakRecord(gb_id=None, gb_type=reason or "unknown", explanation="", hints=[],
                       context="", frame_skipped=skip_kind in ("loop", "whole_frame"),
                       skip_kind=skip_kind, **shared)


