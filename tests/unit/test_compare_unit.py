"""`breakscan compare`'s sample pairs: every break category has a model and its fixed twin
(read from the sample models' docstrings; no model is run)."""

from __future__ import annotations

from conftest import sample_expectations

PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts]


def test_every_break_category_has_a_pair():
    assert len(PAIRS) >= 10
