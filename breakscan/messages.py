"""Dynamo's messages read as text: the blocks of a graph-break message or error (type,
explanation, hints, GB id), one-line summaries, and the names Dynamo gives resume functions.

Below every stage (``errors.py`` puts a Dynamo error on one line with it); the records built
from these blocks are ``analysis/breaklog.py``'s.
"""

from __future__ import annotations

import re

from .rules import registry

RESUME_PREFIX = "torch_dynamo_resume_in_"  # the name of every resume function Dynamo makes
RESUME_NAME = re.compile(rf"{RESUME_PREFIX}(?P<fn>.+)_at_(?P<line>\d+)$")

_URL_ID = re.compile(r"/gb/gb(\d{4})\.html")
# Under a break inside torch.cond (or another higher-order op), between its type and explanation.
_HOP_LINE = "  Higher Order Operator:"

def resume_line(code_name: str) -> int | None:
    """The line a Dynamo resume function resumes at (``torch_dynamo_resume_in_fn_at_12``)."""
    m = RESUME_NAME.match(code_name)
    return int(m.group("line")) if m else None


def original_name(code_name: str) -> str:
    """The user's function a resume function continues (``fn``), any other name unchanged."""
    return RESUME_NAME.sub(lambda m: m.group("fn"), code_name)


def dynamo_error(text: str) -> tuple[str, str | None, str] | None:
    """One of Dynamo's errors read (an exception's text): its message, its GB id and the first
    line of its explanation; None when the text is not Dynamo's. A wrapper's headline (torch.cond's
    "… Got graph break/error:") is joined to the break it wraps: the one-line form otherwise
    loses which break it was."""
    head = text.partition("from user code:")[0]
    blocks = parse_blocks(head.splitlines())
    if not blocks:
        return None
    block = blocks[0]
    first = next(line.strip() for line in head.splitlines() if line.strip())
    message = block["gb_type"] if first == block["gb_type"] else f"{first} {block['gb_type']}"
    return (message, block["gb_id"] or gb_id_of(block["gb_type"]),
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


def split_reason(reason: str) -> dict:
    """Structure an explain ``GraphCompileReason.reason`` string (same block format)."""
    blocks = parse_blocks(["Graph Break Reason:"] + reason.splitlines()) if "Explanation:" in reason \
        else []
    if not blocks:
        return {"gb_type": reason.strip().splitlines()[0] if reason.strip() else "",
                "gb_id": None, "explanation": "", "hints": []}
    block = blocks[0]
    return {"gb_type": block["gb_type"], "gb_id": block["gb_id"] or gb_id_of(
        block["gb_type"]), "explanation": block["explanation"], "hints": block["hints"]}


def gb_id_of(gb_type: str) -> str | None:
    """The registry id of a break type named by its text (older messages carry no URL)."""
    return registry.id_of(gb_type)


def parse_blocks(lines: list[str]) -> list[dict]:
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
