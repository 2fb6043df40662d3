"""The rule registry: one rule per category, every fix and lint check belongs to a rule, and
the statuses a finding can have (no torch, no process)."""

from __future__ import annotations

import pytest

from breakscan.rules.categories import CATEGORIES
from breakscan.rules.catalogue import CATALOGUE, RULES_BY_CATEGORY, find_rule, finding_status


def test_every_category_has_one_rule_and_every_rule_a_worked_example():
    assert set(CATEGORIES) <= set(RULES_BY_CATEGORY)
    assert len({r.id for r in CATALOGUE}) == len(CATALOGUE)
    for rule in CATALOGUE:
        assert rule.why and rule.suggestion and rule.title
        if rule.category != "other":
            assert rule.before and rule.after, rule.id
            for example in (rule.before, rule.after):  # real Python: a forward's body
                body = "\n".join("    " + line for line in example.splitlines())
                compile(f"def forward(self, x, h):\n{body}\n", rule.id, "exec")
    assert find_rule("bs002") is find_rule("tensor-branch") is find_rule("data_dependent_branch")
    assert RULES_BY_CATEGORY["item"].gb_ids[:1] == ["GB0124"]


def test_one_registry_every_fix_and_lint_check_belongs_to_a_rule():
    """Fixes, lint checks and the GB ids messages name all come from the rule registry."""
    from breakscan.lint import checks as lint_rules
    from breakscan.rules.catalogue import FIXES, RULES_BY_ID, fixes_for, gb

    for rule in CATALOGUE:
        for fix_id in rule.fixes:
            assert FIXES[fix_id].rule == rule.id, fix_id
    for spec in FIXES.values():
        assert spec.rule is None or spec.id in RULES_BY_ID[spec.rule].fixes, spec
        assert (spec.kind == "setting") == bool(spec.config), spec
    assert [f.id for f in fixes_for("item", "source")] == [
        "print_guard", "guard_side_effect", "torch_equivalent", "tensor_lookup",
        "escape_hatch"]  # also_for
    for category in lint_rules.CATEGORIES:
        assert category in RULES_BY_CATEGORY, category
    # at least these (a new family's check adds its own: nothing here to edit)
    assert lint_rules.BREAK_CATEGORIES >= {"item", "data_dependent_branch", "print",
                                           "tolist_numpy", "unsupported_call", "explicit_break",
                                           "disabled_call", "tensor_deepcopy", "dynamic_shape_op",
                                           "rng", "data_dependent_value", "object_identity",
                                           "context_manager", "sparse_nested_tensor", "autograd",
                                           "hook"}
    assert gb("print", "GB0291") == "GB0291"
    with pytest.raises(ValueError):
        gb("print", "GB0124")  # a message may not name another rule's id


def test_recompile_rules_are_never_called_a_waiting_break():
    for status in ("ran", "not exercised"):
        for category in ("shape_loop", "shape_branch", "global_mutation"):
            text = finding_status(status, category)
            assert text and "waiting" not in text and "without breaking" not in text
    assert "a break waiting" in finding_status("not exercised", "item")
