"""`breakscan compare`: every sample pair, the fixed twin measurably better, outputs checked."""

from __future__ import annotations

import json

import pytest

from conftest import sample_expectations, run_cli

PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts]
VARY = {"ShapeBranch": ["--vary-batch", "2,4,16"]}


def test_every_break_category_has_a_pair():
    assert len(PAIRS) >= 10


@pytest.mark.parametrize("good, bad", PAIRS, ids=[f"{b}-{g.name}" for g, b in PAIRS])
def test_the_fixed_twin_wins(good, bad):
    proc = run_cli("compare", f"{good.file}:{bad}", good.target, "-s", "8,16",
                   "--backend", "eager", *VARY.get(bad, []), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    a, b = doc["a"]["result"]["summary"], doc["b"]["result"]["summary"]
    assert (b["graph_break_count"] < a["graph_break_count"]
            or b["recompile_count"] < a["recompile_count"]
            or b["op_count"] < a["op_count"]), (a, b)  # breaks, recompiles, or unrolled ops
    assert b["graph_break_count"] == 0
    assert doc["weights_shared"]
    assert doc["outputs"]["match"] is (good.facts.get("same_outputs") != "no")
    for side in ("a", "b"):
        timings = doc[side]["result"]["timings"]
        assert timings["eager"]["median_s"] > 0 and timings["compiled"]["median_s"] > 0


def test_compare_terminal_table():
    proc = run_cli("compare", "sample_models/tensor_branch.py:TensorIf",
                   "sample_models/tensor_branch.py:TensorWhere", "-s", "8,16",
                   "--backend", "eager")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["A = sample_models/tensor_branch.py:TensorIf",
                         "B = sample_models/tensor_branch.py:TensorWhere"]
    assert any(line.startswith("│ graphs ") and "2 │" in line and "1 │" in line for line in lines)
    assert "outputs: B matches A (max abs error 0.00e+00, same weights)" in proc.stdout
