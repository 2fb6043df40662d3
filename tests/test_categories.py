"""The registry-id -> category table, checked against the registry torch ships."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from breakscan.analysis.categories import CATEGORIES, categorize, registry_url
from breakscan.rules import CATALOGUE


@pytest.fixture(scope="module")
def registry() -> dict:
    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    if not path.exists():
        pytest.skip("this torch ships no graph_break_registry.json")
    return json.loads(path.read_text())


def test_every_rule_names_a_real_registry_id_and_category(registry):
    matched = [rule for rule in CATALOGUE if rule.matches]
    assert len(matched) == 10
    for rule in matched:
        assert rule.category in CATEGORIES, rule
        for match in rule.matches + rule.code_matches:
            assert match.gb_id in registry, (rule.id, match)


@pytest.mark.parametrize("gb_id, category", [
    ("GB0124", "item"), ("GB0170", "data_dependent_branch"), ("GB0291", "print"),
    ("GB0109", "tolist_numpy"), ("GB0036", "dynamic_shape_op"), ("GB0007", "unsupported_call"),
    ("GB0025", "explicit_break"), ("GB7000", "frame_skipped"), ("GB4297", "frame_skipped"),
])
def test_registry_type_maps_to_category(registry, gb_id, category):
    entry = registry[gb_id][0]
    assert categorize(gb_id, entry["Gb_type"], entry["Explanation"], entry["Context"]) == category


def test_builtin_operator_is_print_only_for_print():
    gb_type = "Failed to trace builtin operator"
    assert categorize("GB0059", gb_type, "builtin operator `print` with argument types") == "print"
    assert categorize("GB0059", gb_type, "builtin operator `setattr`") == "unsupported_call"


def test_unknown_id_is_other_and_keeps_a_registry_link():
    assert categorize("GB9999", "some new break") == "other"
    assert registry_url("GB0124").endswith("/gb/gb0124.html")
    assert registry_url(None) is None


def test_fallback_on_type_text_when_no_id():
    assert categorize(None, "Unsupported Tensor.item() call") == "item"
    assert categorize(None, "generic_jump TensorVariable()") == "data_dependent_branch"
    assert categorize(None, "something else") == "other"


def test_every_category_has_a_suggestion():
    for category in CATEGORIES.values():
        assert len(category.suggestion) > 30
