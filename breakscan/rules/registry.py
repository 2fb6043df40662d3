"""Dynamo's own catalogue of graph breaks, read from the installed torch without importing it.

``torch/_dynamo/graph_break_registry.json`` names every kind of break (``GBnnnn`` → its history,
newest entry first: title, explanation, hints); ``torch/_dynamo/graph_break_hints.py`` holds the
hint classes (``USER_ERROR``, ``FUNDAMENTAL``, ``CAUSED_BY_EARLIER_GRAPH_BREAK``…), each a list of
one string that Dynamo appends verbatim to a break's hints. Both are data to breakscan: the JSON is
parsed, the Python file is read with ``ast`` (never executed). A torch without them (older
releases) gives empty results, and breakscan falls back to the break's own text.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
from dataclasses import dataclass

# Hint classes whose text is addressed to Dynamo's developers or says nothing about the cause:
# never passed on as advice.
UNHELPFUL_CLASSES = frozenset({"DYNAMO_BUG", "DIFFICULT", "SUPPORTABLE", "FUNDAMENTAL",
                               "USER_ERROR", "CAUSED_BY_EARLIER_GRAPH_BREAK"})
EARLIER_BREAK = "CAUSED_BY_EARLIER_GRAPH_BREAK"


@dataclass(frozen=True)
class Entry:
    """The newest registry entry of one GB id."""

    gb_id: str
    title: str  # Dynamo's Gb_type: the headline it prints
    hints: tuple[str, ...]
    hint_classes: tuple[str, ...]


def _dynamo_dir() -> str | None:
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    roots = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(roots[0], "_dynamo") if roots else None


def words(text: str) -> str:
    """Whitespace normalised: Dynamo wraps titles and hints differently by release."""
    return " ".join(text.split())


@functools.lru_cache(maxsize=1)
def hint_classes() -> dict[str, str]:
    """Each hint class's text (whitespace normalised) → its name, from graph_break_hints.py."""
    folder = _dynamo_dir()
    try:
        with open(os.path.join(folder or "", "graph_break_hints.py"), encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper() and \
                isinstance(node.value, ast.List):
            for item in node.value.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found[words(item.value)] = node.targets[0].id
    return found


@functools.lru_cache(maxsize=1)
def entries() -> dict[str, tuple[dict, ...]]:
    """Every GB id of the installed registry → its entries, newest first ({} when absent)."""
    folder = _dynamo_dir()
    try:
        with open(os.path.join(folder or "", "graph_break_registry.json"), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): tuple(e for e in v if isinstance(e, dict))
            for k, v in data.items() if isinstance(v, list)}


@functools.lru_cache(maxsize=1)
def _ids_by_title() -> dict[str, str]:
    return {str(e.get("Gb_type")): gb_id for gb_id, history in entries().items()
            for e in history}


def id_of(title: str) -> str | None:
    """The GB id whose title (any entry of its history) is ``title``: Dynamo prints an id only
    for some breaks, and compilation metrics give only the title."""
    return _ids_by_title().get(title)


def classes_of(hints: list[str] | tuple[str, ...]) -> list[str]:
    """The hint classes among ``hints`` (exact text, whitespace normalised), in order."""
    known = hint_classes()
    return list(dict.fromkeys(known[w] for w in map(words, hints) if w in known))


def entry(gb_id: str | None) -> Entry | None:
    """The newest registry entry of ``gb_id``, or None when the installed torch lacks it."""
    history = entries().get(gb_id or "")
    if not history:
        return None
    newest = history[0]
    hints = tuple(str(h) for h in newest.get("Hints", []) if isinstance(h, str))
    return Entry(gb_id or "", str(newest.get("Gb_type", "")), hints, tuple(classes_of(hints)))


def is_class_hint(hint: str) -> bool:
    """Whether ``hint`` is one of Dynamo's hint-class texts rather than advice for this break."""
    return words(hint) in hint_classes()
