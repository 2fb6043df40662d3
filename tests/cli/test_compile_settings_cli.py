"""The user's own torch.compile settings through the real CLI: the gate checks the --dynamic
setting the user ships, and compare runs both models with the same settings."""

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
                                       "options": {}}
    assert doc["recompiles"]["dynamic_recompile_count"] is None  # nothing left to replay
    terminal = run_cli(*args, "--dynamic", "true")
    assert "torch.compile settings: dynamic=True for the capture, run-time counts, recompiles" \
        in " ".join(terminal.stdout.split())


def test_compare_runs_both_models_with_the_same_settings():
    proc = run_cli("compare", NO_BRANCH, NO_BRANCH, "-s", "8,16", "--dynamic", "true",
                   "--backend", "eager", "--max-run-time", "0.05", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for side in ("a", "b"):
        assert doc[side]["result"]["compile_settings"]["dynamic"] is True
    assert doc["ab"]["verdict"] in ("faster", "slower", "no measurable difference")
