"""Impact through the real CLI: the per-call counts in the JSON, the gate and the terminal."""

from __future__ import annotations

import json

from conftest import SAMPLES, run_cli

PER_LAYER = f"{SAMPLES / 'per_layer_branch.py'}:PerLayerBranch"


def test_json_gate_and_terminal_carry_the_per_call_counts():
    proc = run_cli(PER_LAYER, "-s", "8,16", "--max-graph-calls", "47", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] == "1.25"
    assert doc["summary"]["graph_calls_per_call"] == 48
    assert doc["summary"]["eager_gaps_per_call"] == 24
    assert doc["breaks"][0]["fires_per_call"] == 24
    (check,) = doc["gate"]["checks"]
    assert (check["name"], check["limit"], check["actual"], check["passed"]) == \
        ("max_graph_calls", 47, 48, False)
    proc = run_cli(PER_LAYER, "-s", "8,16", "--max-graph-calls", "48")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())  # as wrapped at 80 columns
    assert "per call: graph calls 48 · returns to Python 24 · frames run eagerly 1" in proc.stdout
    assert "at run time, per call (3 calls after warm-up, eager backend): 48 graph calls, " \
        "24 returns to Python at a break" in text
