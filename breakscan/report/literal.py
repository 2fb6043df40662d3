"""Model-made text shown as it is: control characters as ``\\xNN``, never markup.

A reason, a source line, a target or a model's output can hold a terminal escape or text such as
``[bold]``; every reporter passes it through :func:`printable` (or a :func:`scrubbed` copy of
the whole result), and the terminal's tables go through :class:`LiteralTable`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from rich.table import Table
from rich.text import Text

# C0 and C1 controls, lone surrogates, and the bidirectional-text controls that make a line
# read differently from what it holds (U+202E "right-to-left override", "Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff"
                      "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """Control characters (a terminal escape, a bidi override in a reason or a source line)
    shown as \\xNN or \\uNNNN; the same object when there are none."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


OUTPUT_TAIL_LINES = 200  # what a report shows of a model's output: its last lines
OUTPUT_TAIL_CHARS = 64 * 1024


def output_tail(text: str) -> str:
    """The end of what a model printed, bounded (a model printing megabytes would take minutes
    to lay out, and its last lines are the ones that say how it ended), with a first line saying
    what was left out."""
    text = text.rstrip()
    tail = text[-OUTPUT_TAIL_CHARS:]
    lines = tail.split("\n")
    if len(tail) < len(text):
        lines = lines[1:]  # a line cut part-way
    lines = lines[-OUTPUT_TAIL_LINES:]
    shown = "\n".join(lines)
    if len(shown) == len(text):
        return text
    left = text.count("\n") + 1 - len(lines)
    return f"[the first {left:,} line(s) left out; the last {len(lines)} follow]\n{shown}"


SHOWN_LATER = ("sources",)  # fields each reporter makes printable where it shows them


def scrubbed(value: Any) -> Any:
    """A copy of a result with every string made printable: reporters show model-made text.
    The carried source lines are left as they are: the excerpt a report shows is made printable
    there (a result carries whole files it shows a few lines of). A part with nothing to change
    is returned as it is, not copied (a zoo's page scrubs 500 results)."""
    kind = type(value)
    if kind is str:
        return printable(value)
    if kind in _UNCHANGED:
        return value
    if kind is list:
        items = [scrubbed(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    if kind is dict:
        pairs = {k: scrubbed(v) for k, v in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for name in _init_fields(kind):
            if name in SHOWN_LATER:
                continue
            old = getattr(value, name)
            new = scrubbed(old)
            if new is not old:
                changed[name] = new
        return dataclasses.replace(value, **changed) if changed else value
    return value


_UNCHANGED = (int, float, bool, type(None))


@functools.lru_cache(maxsize=None)
def _init_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


class LiteralTable(Table):
    """A table whose text cells are literal (a cell such as ``pos = h[h > 0]`` is not markup)."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*(Text(printable(r)) if isinstance(r, str) else r
                          for r in renderables), **kwargs)
