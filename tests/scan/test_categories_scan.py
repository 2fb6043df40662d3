"""The registry-id -> category table, checked against the registry torch ships (found through
torch's own package, so these need torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from breakscan.rules.categories import CATEGORIES, categorize
from breakscan.rules.catalogue import CATALOGUE

from conftest import TORCH_213_IDS, TORCH_214_IDS, TORCH_215_IDS

@pytest.fixture(scope="module")
def registry() -> dict:
    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    if not path.exists():
        pytest.skip("this torch ships no graph_break_registry.json")
    return json.loads(path.read_text())


def test_every_rule_names_a_real_registry_id_and_category(registry):
    matched = [rule for rule in CATALOGUE if rule.gb_ids]
    assert len(matched) == 34  # every break family (not other, not tensor_constant)
    for rule in matched:
        assert rule.category in CATEGORIES, rule
        for gb_id in rule.gb_ids:  # or an id of torch 2.13.0's, 2.14.1's or 2.15.0's registry
            assert gb_id in registry or gb_id in TORCH_213_IDS | TORCH_214_IDS | TORCH_215_IDS, \
                (rule.id, gb_id)


@pytest.mark.parametrize("gb_id, category", [
    ("GB0124", "item"), ("GB0170", "data_dependent_branch"), ("GB0291", "print"),
    ("GB0109", "tolist_numpy"), ("GB0036", "dynamic_shape_op"), ("GB0007", "unsupported_call"),
    ("GB0025", "explicit_break"), ("GB7000", "frame_skipped"), ("GB4297", "frame_skipped"),
])
def test_registry_type_maps_to_category(registry, gb_id, category):
    entry = registry[gb_id][0]
    assert categorize(gb_id, entry["Gb_type"], entry["Explanation"], entry["Context"]) == category
