"""The static section of a scan, `breakscan lint` and `breakscan rules` through the real CLI."""

from __future__ import annotations

import json

from breakscan.rules.catalogue import CATALOGUE

from conftest import SAMPLES, run_cli

RARE = f"{SAMPLES}/rare_path.py:RarePathPrint"


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


def test_rules_cli():
    listing = run_cli("rules")
    assert listing.returncode == 0
    assert all(rule.id in listing.stdout for rule in CATALOGUE)
    one = run_cli("rules", "BS003")
    assert one.returncode == 0
    assert "is_compiling" in one.stdout and "GB0059" in one.stdout and "print_guard" in one.stdout
    unknown = run_cli("rules", "BS999")
    assert unknown.returncode == 2 and "no rule 'BS999'" in unknown.stderr
