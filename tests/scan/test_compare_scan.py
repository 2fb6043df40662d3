"""`breakscan compare`: every sample pair, the fixed twin measurably better, outputs checked.

The pairs are compared in this process (the same scans and the same output check the CLI runs
in child processes); the CLI's own contract, child processes included, is tested on one pair in
tests/cli/test_compare.py (with the same `assert_the_twin_wins`), and that every break category
has a pair in tests/unit/test_compare_unit.py.
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from breakscan import ScanOptions, TimingOptions, scan
from breakscan.pipeline.compare import outputs_of_both

from conftest import assert_the_twin_wins, sample_expectations

# A broken twin that does not break on the installed torch (SignatureProbe on 2.14) has
# nothing for its fixed twin to win.
BREAKS = {e.name: e.facts.get("breaks") for e in sample_expectations()}
PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts and BREAKS.get(good.facts["twin_of"]) != "0"]
VARY = {"ShapeBranch": "2,4,16"}


def _compare_in_process(a: str, b: str, vary_batch: str | None) -> dict:
    """compare's document, made in this process: both scans, then A's weights into B."""
    options = ScanOptions(input_shapes=["8,16"], vary_batch=vary_batch,
                          timing=TimingOptions(backend="eager", max_run_time=0.1))
    shared, outputs, _, ab = outputs_of_both({"a": a, "b": b, "options": options.to_dict()},
                                             lambda *_: None)
    return {"a": {"result": scan(a, options).to_dict()}, "b": {"result": scan(b, options).to_dict()},
            "weights_shared": shared, "outputs": asdict(outputs),
            "ab": asdict(ab) if ab else None}





@pytest.mark.parametrize("good, bad", PAIRS, ids=[f"{b}-{g.name}" for g, b in PAIRS])
def test_the_fixed_twin_wins(good, bad):
    assert_the_twin_wins(_compare_in_process(f"{good.file}:{bad}", good.target,
                                              VARY.get(bad)), good)


