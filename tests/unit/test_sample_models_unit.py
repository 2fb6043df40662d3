"""The sample models' docstrings cover every category and pair each broken model with a fixed
twin (read from the source: no torch, no scan)."""

from __future__ import annotations

from conftest import sample_expectations

EXPECTATIONS = sample_expectations()


def test_every_category_has_a_broken_sample():
    categories = {e.facts.get("category") for e in EXPECTATIONS}
    for needed in ("item", "data_dependent_branch", "print", "tolist_numpy", "dynamic_shape_op",
                   "unsupported_call", "explicit_break", "frame_skipped", "disabled_call",
                   "tensor_deepcopy", "tensor_constant"):
        assert needed in categories, needed


def test_every_sample_has_a_fixed_twin():
    per_file: dict = {}
    for e in EXPECTATIONS:
        per_file.setdefault(e.file.name, []).append(e.facts["breaks"])
    for name, breaks in per_file.items():
        assert "0" in breaks, f"{name} has no twin without breaks"
