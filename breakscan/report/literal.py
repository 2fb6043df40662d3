"""Model-made text shown as it is: control characters as ``\\xNN``, never markup.

A reason, a source line, a target or a model's output can hold a terminal escape or text such as
``[bold]``; every reporter passes it through :func:`printable` (or a :func:`scrubbed` copy of
the whole result), and the terminal's tables go through :class:`LiteralTable`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from rich.table import Table
from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")  # and lone surrogates


def printable(text: str) -> str:
    """Control characters (a terminal escape in a reason or a source line) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def scrubbed(value: Any) -> Any:
    """A copy of a result with every string made printable: reporters show model-made text."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {k: scrubbed(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: scrubbed(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    return value


class LiteralTable(Table):
    """A table whose text cells are literal (a cell such as ``pos = h[h > 0]`` is not markup)."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*(Text(printable(r)) if isinstance(r, str) else r
                          for r in renderables), **kwargs)
