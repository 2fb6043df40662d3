"""The registry-id -> category table on its own (tests/scan/test_categories_scan.py checks it
against the registry torch ships)."""

from __future__ import annotations

from breakscan.rules.categories import CATEGORIES, categorize, registry_url


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
