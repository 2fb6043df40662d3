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
block wraps it. The names Dynamo gives its resume functions
(``torch_dynamo_resume_in_<fn>_at_<line>``) are read here too.
"""

from __future__ import annotations

import re

from . import registry
from ..frames import parse_stack, provenance_frame
from ..records import BreakRecord

RESUME_PREFIX = "torch_dynamo_resume_in_"  # the name of every resume function Dynamo makes
RESUME_NAME = re.compile(rf"{RESUME_PREFIX}(?P<fn>.+)_at_(?P<line>\d+)$")

_HEADER = re.compile(
    r"Graph break (?P<dup>\(user stack suppressed due to duplicate graph break\) )?"
    r"in user code at (?P<file>.+):(?P<line>\d+)\s*$")
_URL_ID = re.compile(r"/gb/gb(\d{4})\.html")
# Under a break inside torch.cond (or another higher-order op), between its type and explanation.
_HOP_LINE = "  Higher Order Operator:"
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


def resume_line(code_name: str) -> int | None:
    """The line a Dynamo resume function resumes at (``torch_dynamo_resume_in_fn_at_12``)."""
    m = RESUME_NAME.match(code_name)
    return int(m.group("line")) if m else None


def dynamo_error(text: str) -> tuple[str, str | None, str] | None:
    """One of Dynamo's errors read (an exception's text): its message, its GB id and the first
    line of its explanation; None when the text is not Dynamo's. A wrapper's headline (torch.cond's
    "… Got graph break/error:") is joined to the break it wraps: the one-line form otherwise
    loses which break it was."""
    head = text.partition("from user code:")[0]
    blocks = _parse_blocks(head.splitlines())
    if not blocks:
        return None
    block = blocks[0]
    first = next(line.strip() for line in head.splitlines() if line.strip())
    message = block["gb_type"] if first == block["gb_type"] else f"{first} {block['gb_type']}"
    return (message, block["gb_id"] or _gb_id_from_registry(block["gb_type"]),
            block["explanation"].partition("\n")[0])


def dynamo_summary(text: str) -> str | None:
    """A Dynamo error on one line, its GB id before the explanation so a cut line keeps it:
    ``Failed to trace builtin operator [GB0059]: Dynamo does not know …``; None when the
    text is not Dynamo's."""
    parts = dynamo_error(text)
    if parts is None:
        return None
    message, gb_id, explanation = parts
    return message + (f" [{gb_id}]" if gb_id else "") + (f": {explanation}" if explanation
                                                          else "")


def original_name(code_name: str) -> str:
    """The user's function a resume function continues (``fn``), any other name unchanged."""
    return RESUME_NAME.sub(lambda m: m.group("fn"), code_name)


def _gb_id_from_registry(gb_type: str) -> str | None:
    return registry.id_of(gb_type)


def _parse_blocks(lines: list[str]) -> list[dict]:
    """Split the reason part into blocks anchored on their ``  Explanation:`` line."""
    blocks: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("  Explanation:") and i > 0:
            above = i - 1
            while above > 0 and lines[above].startswith(_HOP_LINE):
                above -= 1
            gb_type = lines[above].strip()
            if gb_type.startswith("Graph Break Reason:"):
                gb_type = gb_type.split(":", 1)[1].strip()
            block = {"gb_type": gb_type, "explanation": [line.split(":", 1)[1].strip()],
                     "hints": [], "context": "", "gb_id": None}
            i += 1
            current = "explanation"
            while i < len(lines):
                line = lines[i]
                if line.startswith("  Hint:"):
                    block["hints"].append(line.split(":", 1)[1].strip())
                    current = "hint"
                elif line.startswith("  Developer debug context:"):
                    block["context"] = line.split(":", 1)[1].strip()
                    current = "context"
                elif (m := _URL_ID.search(line)):
                    block["gb_id"] = f"GB{m.group(1)}"
                    i += 1
                    break
                elif line.startswith("    ") and current == "explanation":
                    block["explanation"].append(line.strip())
                elif line.startswith("    ") and current == "hint" and block["hints"]:
                    block["hints"][-1] += " " + line.strip()
                elif line.startswith("    ") and current == "context":
                    block["context"] += " " + line.strip()
                elif line.strip() == "" or line.startswith("  "):
                    pass
                else:
                    break  # a new top-level line: the block ended without a URL
                i += 1
            block["explanation"] = "\n".join(block["explanation"])
            blocks.append(block)
            continue
        i += 1
    return blocks


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
    blocks = _parse_blocks(body) or _parse_blocks(tail)
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
    gb_id = root["gb_id"] or _gb_id_from_registry(gb_type)
    wrapper = blocks[-1] if len(blocks) > 1 else None
    if wrapper and (wrapper["gb_id"] == "GB7000" or "loop" in wrapper["gb_type"]):
        frame_skipped, skip_kind = True, "loop"
    provenance = [f for f in map(provenance_frame, root["explanation"].splitlines()) if f]
    return BreakRecord(
        gb_id=gb_id, gb_type=gb_type, explanation=root["explanation"],
        hints=root["hints"], context=root["context"], frame_skipped=frame_skipped,
        wrapper_gb_id=(wrapper["gb_id"] or _gb_id_from_registry(wrapper["gb_type"]))
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


def split_reason(reason: str) -> dict:
    """Structure an explain ``GraphCompileReason.reason`` string (same block format)."""
    blocks = _parse_blocks(["Graph Break Reason:"] + reason.splitlines()) if "Explanation:" in reason \
        else []
    if not blocks:
        return {"gb_type": reason.strip().splitlines()[0] if reason.strip() else "",
                "gb_id": None, "explanation": "", "hints": []}
    block = blocks[0]
    return {"gb_type": block["gb_type"], "gb_id": block["gb_id"] or _gb_id_from_registry(
        block["gb_type"]), "explanation": block["explanation"], "hints": block["hints"]}
