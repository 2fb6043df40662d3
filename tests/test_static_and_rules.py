"""The static section of a scan, `breakscan lint` and `breakscan rules` through the real CLI."""

from __future__ import annotations

import json

import pytest

from breakscan import scan
from breakscan.analysis.categories import CATEGORIES
from breakscan.rules import CATALOGUE, RULES_BY_CATEGORY, find_rule

from conftest import SAMPLES, locate, run_cli

RARE = f"{SAMPLES}/rare_path.py:RarePathPrint"


@pytest.mark.parametrize("shape, status, graphs", [("8,16", "not exercised", 1),
                                                     ("128,16", "break", 2)])
def test_a_break_on_a_path_not_taken_is_not_exercised_until_it_is(shape, status, graphs):
    doc = scan(RARE, input_shapes=[shape]).to_dict()  # stage logic: in this process
    assert doc["summary"]["graph_count"] == graphs
    _, line = locate('print("large batch", x.shape)', SAMPLES / "rare_path.py")
    (finding,) = [f for f in doc["static"] if f["category"] == "print"]
    assert (finding["rule"], finding["line"], finding["status"]) == ("BS003", line, status)


def test_static_findings_confirmed_by_the_run_are_marked_break():
    doc = scan(f"{SAMPLES}/tensor_branch.py:TensorIf", input_shapes=["8,16"]).to_dict()
    (finding,) = doc["static"]
    assert (finding["category"], finding["status"]) == ("data_dependent_branch", "break")
    assert finding["line"] == doc["breaks"][0]["line"]


def test_terminal_shows_the_unexercised_break():
    proc = run_cli(RARE, "-s", "8,16")
    assert "not exercised by these inputs: a break waiting for other data" in proc.stdout


def test_lint_cli_exit_codes_and_json(tmp_path):
    proc = run_cli("lint", str(SAMPLES / "tensor_branch.py"), "-f", "json")
    assert proc.returncode == 1  # a pattern that breaks
    (finding,) = json.loads(proc.stdout)
    assert (finding["rule"], finding["function"], finding["status"]) == (
        "BS002", "TensorIf.forward", "static")
    clean = run_cli("lint", str(SAMPLES / "shape_branch.py"), "--only", "NoShapeBranch")
    assert clean.returncode == 0 and "0 finding(s) in 1 file(s)" in clean.stdout
    folder = run_cli("lint", str(SAMPLES))
    assert folder.returncode == 1 and "rare_path.py:29" in folder.stdout
    missing = run_cli("lint", str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and missing.stderr.startswith("breakscan: error: ")


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
    from breakscan.rules import FIXES, RULES_BY_ID, fixes_for, gb

    for rule in CATALOGUE:
        for fix_id in rule.fixes:
            assert FIXES[fix_id].rule == rule.id, fix_id
    for spec in FIXES.values():
        assert spec.rule is None or spec.id in RULES_BY_ID[spec.rule].fixes, spec
        assert (spec.kind == "setting") == bool(spec.config), spec
    assert [f.id for f in fixes_for("item", "source")] == ["print_guard"]  # also_for
    for category in lint_rules.CATEGORIES:
        assert category in RULES_BY_CATEGORY, category
    assert lint_rules.BREAK_CATEGORIES == {"item", "data_dependent_branch", "print",
                                           "tolist_numpy", "unsupported_call", "explicit_break",
                                           "disabled_call", "tensor_deepcopy", "dynamic_shape_op"}
    assert gb("print", "GB0291") == "GB0291"
    with pytest.raises(ValueError):
        gb("print", "GB0124")  # a message may not name another rule's id


def test_rules_cli():
    listing = run_cli("rules")
    assert listing.returncode == 0
    assert all(rule.id in listing.stdout for rule in CATALOGUE)
    one = run_cli("rules", "BS003")
    assert one.returncode == 0
    assert "is_compiling" in one.stdout and "GB0059" in one.stdout and "print_guard" in one.stdout
    unknown = run_cli("rules", "BS999")
    assert unknown.returncode == 2 and "no rule 'BS999'" in unknown.stderr
