"""Which family (rule) a Dynamo graph break falls under: its registry id, narrowed where needed.

Every registry id belongs to one family (the rules' ``ids``, one module per rule in this
folder). Where Dynamo uses one id for different causes it is narrowed first, in
this order: by the break's *source line* (GB0033 "data dependent operator" is ``tolist_numpy``
for a ``.tolist()``, ``rng`` for ``np.random``), by its *call chain* (GB0033 raised inside
``torch/_library/custom_ops.py`` is a custom op's fake), by its text "gb_type | explanation |
context" (GB0059 "Failed to trace builtin operator" is a ``print`` only for ``print``). A break
with no registry id (older torch) is matched on its type's text; an id the registry does not
have is ``other``. Tested in tests/unit/test_categories.py and test_families.py against the
registry that ships with torch.
"""

from __future__ import annotations

import re

from .catalogue import CATALOGUE, Rule

REGISTRY_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{id}.html"

# Every break category's title and advice live in its rule's module (catalogue.CATALOGUE).
CATEGORIES: dict[str, Rule] = {r.category: r for r in CATALOGUE if r.kind == "break"}
# The id table: registry id -> family (a narrowed match does not own its id).
FAMILY_OF: dict[str, str] = {gb: r.category for r in CATALOGUE for gb in r.ids.split()}
FAMILY_OF.update({m.gb_id: r.category for r in CATALOGUE for m in r.matches
                  if m.pattern is None and m.gb_id not in FAMILY_OF})


def categorize(gb_id: str | None, gb_type: str, explanation: str = "", context: str = "",
               code: str = "", chain: str = "") -> str:
    """The breakscan category of one break (see the module docstring for the order); ``code``
    is the break's source line, ``chain`` its frames as ``file:function`` lines."""
    text = f"{gb_type} | {explanation} | {context}"
    for field, subject in (("code_matches", code), ("chain_matches", chain),
                           ("matches", text)):
        for rule in CATALOGUE:
            for match in getattr(rule, field):
                if match.gb_id == gb_id and match.pattern and re.search(match.pattern,
                                                                        subject, re.M):
                    return rule.category
    if gb_id is not None:
        return FAMILY_OF.get(gb_id, "other")
    for rule in CATALOGUE:
        if rule.type_pattern and re.search(rule.type_pattern, text):
            return rule.category
    return "other"


def registry_url(gb_id: str | None) -> str | None:
    return REGISTRY_URL.format(id=gb_id.lower()) if gb_id else None
