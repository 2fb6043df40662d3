"""Which rule a Dynamo graph break falls under: registry id (and type text) to category.

The ids live with their rules in the registry (``rules.py``, each rule's ``matches``). A match
with a pattern wins over a plain one (``GB0059`` "Failed to trace builtin operator" is a
``print`` only when the builtin is ``print``, any other builtin is an ``unsupported_call``);
a generic id (GB0033 "data dependent operator") is narrowed by the break's source line first
(``.tolist()``, ``np.random``); a break with no registry id (older torch) is matched on its
type's text; a break nothing
matches is ``other`` and keeps Dynamo's own type and hints.
Tested in tests/unit/test_categories.py against the registry that ships with torch.
"""

from __future__ import annotations

import re

from ..rules import CATALOGUE, Rule

REGISTRY_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{id}.html"

# Every break category's title and advice live in the rule registry (rules.py).
CATEGORIES: dict[str, Rule] = {r.category: r for r in CATALOGUE if r.kind == "break"}


def categorize(gb_id: str | None, gb_type: str, explanation: str = "", context: str = "",
               code: str = "") -> str:
    """The breakscan category of one break (see the module docstring for the order); ``code``
    is the break's source line, which narrows ids Dynamo uses for many things."""
    for rule in CATALOGUE:
        for match in rule.code_matches:
            if match.gb_id == gb_id and match.pattern and re.search(match.pattern, code):
                return rule.category
    text = f"{gb_type} | {explanation} | {context}"
    for narrowed in (True, False):
        for rule in CATALOGUE:
            for match in rule.matches:
                if match.gb_id == gb_id and (match.pattern is not None) == narrowed and \
                        (match.pattern is None or re.search(match.pattern, text)):
                    return rule.category
    if gb_id is None:
        for rule in CATALOGUE:
            if rule.type_pattern and re.search(rule.type_pattern, text):
                return rule.category
    return "other"


def registry_url(gb_id: str | None) -> str | None:
    return REGISTRY_URL.format(id=gb_id.lower()) if gb_id else None
