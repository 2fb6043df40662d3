"""Which family (rule) a Dynamo graph break falls under: its registry id, narrowed where needed.

Every registry id belongs to one family (the rules' ``ids``, one module per rule in this
folder). Where Dynamo uses one id for different causes it is narrowed first, in
this order: by the break's *source line* (GB0033 "data dependent operator" is ``tolist_numpy``
for a ``.tolist()``, ``rng`` for ``np.random``), by its *call chain* (GB0033 raised inside
``torch/_library/custom_ops.py`` is a custom op's fake), by its text "gb_type | explanation |
context" (GB0059 "Failed to trace builtin operator" is a ``print`` only for ``print``).

Registry ids move between torch releases (new types get random four-digit ids, some are
renumbered or removed), so an id no family lists is matched by what the break is: its title
(Dynamo's ``Gb_type``) against every title the families had on the releases breakscan is tested
on (``family_titles.json``), then the families' text patterns. A break with no registry id
(older torch) is matched on its text the same way. What is still unmatched is ``other`` and
:func:`is_new` names it as new in this torch, with Dynamo's own text. Tested in
tests/unit/test_categories.py and test_families.py against the registry that ships with torch.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from .catalogue import CATALOGUE, Rule
from .registry import words

REGISTRY_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{id}.html"

# Every break category's title and advice live in its rule's module (catalogue.CATALOGUE).
CATEGORIES: dict[str, Rule] = {r.category: r for r in CATALOGUE if r.kind == "break"}
OTHER = "other"  # the family of a break no other family covers
# The id table: registry id -> family (a narrowed match does not own its id).
FAMILY_OF: dict[str, str] = {gb: r.category for r in CATALOGUE for gb in r.ids.split()}
FAMILY_OF.update({m.gb_id: r.category for r in CATALOGUE for m in r.matches
                  if m.pattern is None and m.gb_id not in FAMILY_OF})


# Every title (Dynamo's Gb_type) the families' ids had on torch 2.13, 2.14 and 2.15 -> family.
# Regenerated on each release breakscan adds: python -m breakscan.rules.categories
TITLES_FILE = Path(__file__).with_name("family_titles.json")


@functools.lru_cache(maxsize=1)
def family_titles() -> dict[str, str]:
    """Title -> family, as shipped (see :data:`TITLES_FILE`)."""
    try:
        data = json.loads(TITLES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items() if str(v) in CATEGORIES}


def is_known(gb_id: str | None) -> bool:
    """Whether a family lists ``gb_id`` (by id, or narrowed by a match on it)."""
    return gb_id is not None and (gb_id in FAMILY_OF or any(
        m.gb_id == gb_id for r in CATALOGUE
        for m in (*r.matches, *r.code_matches, *r.chain_matches)))


def is_new(gb_id: str | None, category: str) -> bool:
    """A registry id breakscan has no family for, neither by id nor by what the break is:
    new in this torch (reports give Dynamo's own text and hints instead of a family's)."""
    return category == OTHER and gb_id is not None and not is_known(gb_id)


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
    if gb_id in FAMILY_OF:
        return FAMILY_OF[gb_id]  # type: ignore[index]
    titled = family_titles().get(words(gb_type))  # renumbered: the same title
    if titled is not None:
        return titled
    for rule in CATALOGUE:
        if rule.type_pattern and re.search(rule.type_pattern, text):
            return rule.category
    return "other"


def registry_url(gb_id: str | None) -> str | None:
    return REGISTRY_URL.format(id=gb_id.lower()) if gb_id else None


def _merge_installed_titles() -> int:
    """Add the installed torch's titles of every id a family lists to :data:`TITLES_FILE`."""
    from . import registry

    titles = dict(family_titles())
    for gb_id, history in registry.entries().items():
        family = FAMILY_OF.get(gb_id)
        for entry in history if family else ():
            title = words(str(entry.get("Gb_type", "")))
            if title:
                titles[title] = family  # type: ignore[assignment]
    TITLES_FILE.write_text(json.dumps(dict(sorted(titles.items())), indent=0) + "\n",
                           encoding="utf-8")
    return len(titles)


if __name__ == "__main__":
    print(f"{TITLES_FILE}: {_merge_installed_titles()} titles")
