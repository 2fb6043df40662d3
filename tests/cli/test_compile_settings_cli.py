"""The user's own torch.compile settings through the real CLI: the gate checks the --dynamic
setting the user ships (compare runs both models with the same settings:
tests/cli/test_compare.py)."""

from __future__ import annotations

import json

from conftest import SAMPLES, run_cli

NO_BRANCH = f"{SAMPLES / 'shape_branch.py'}:NoShapeBranch"


def test_the_gate_checks_the_dynamic_setting_the_user_ships():
    """Without dynamic=True the batch sizes recompile once (automatic dynamic shapes); compiled
    with dynamic=True they do not: --max-recompiles 0 fails, then passes."""
    args = (NO_BRANCH, "-s", "8,16", "--vary-batch", "2,4,16", "--max-recompiles", "0")
    plain = run_cli(*args, "-f", "json")
    assert plain.returncode == 1, plain.stderr
    doc = json.loads(plain.stdout)
    assert doc["summary"]["recompile_count"] == 1
    assert doc["compile_settings"]["dynamic"] is None
    dynamic = run_cli(*args, "--dynamic", "true", "-f", "json")
    assert dynamic.returncode == 0, dynamic.stderr
    doc = json.loads(dynamic.stdout)
    assert doc["summary"]["recompile_count"] == 0 and doc["gate"]["passed"]
    assert doc["compile_settings"] == {"backend": None, "mode": None, "dynamic": True,
                                       "options": {}, "nested_graph_breaks": False}
    assert doc["recompiles"]["dynamic_recompile_count"] is None  # nothing left to replay
    terminal = run_cli(*args, "--dynamic", "true")
    assert "torch.compile settings: dynamic=True for the capture, run-time counts, recompiles" \
        in " ".join(terminal.stdout.split())
