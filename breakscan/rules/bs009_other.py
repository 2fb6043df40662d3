"""BS009 other: Other graph break.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS009", "other", "other-break", "Other graph break",
    why="Dynamo could not trace this construct; see its explanation, hints and registry page.",
    suggestion="See Dynamo's explanation and hints below and the registry page for this id.",
    before="", after="",
    smallest_region=True, no_automatic_fix=True)
