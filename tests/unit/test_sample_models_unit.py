"""The sample models' docstrings cover every category and pair each broken model with a fixed
twin (read from the source: no torch, no scan)."""

from __future__ import annotations

from conftest import sample_expectations

EXPECTATIONS = sample_expectations()


# Families no single-process CPU scan shows as a break (sample_models/README.md says why).
NO_SAMPLE = {"dynamic_shape", "higher_order_op", "recompile_limit", "backend_error", "other"}


def test_every_family_has_its_bad_and_good_pair():
    """One rule, one fixture pair: every break family of the catalogue has a broken sample whose
    root cause is that family (directly or as the cause of a skipped frame) in a file with a
    fixed twin; the exemptions are exactly the documented ones."""
    from breakscan.rules.catalogue import CATALOGUE

    found = {e.facts.get("category") for e in EXPECTATIONS} | {
        e.facts.get("cause") for e in EXPECTATIONS}
    families = {r.category for r in CATALOGUE if r.kind == "break"}
    assert families - found == NO_SAMPLE
    readme = (EXPECTATIONS[0].file.parent / "README.md").read_text()
    for family in NO_SAMPLE - {"other"}:
        assert f"`{family}`" in readme


def test_every_sample_has_a_fixed_twin():
    per_file: dict = {}
    for e in EXPECTATIONS:
        per_file.setdefault(e.file.name, []).append(e.facts["breaks"])
    for name, breaks in per_file.items():
        assert "0" in breaks, f"{name} has no twin without breaks"
