"""The user's own torch.compile settings (--dynamic, --compile-option, --backend, --mode) reach
the capture, the run-time counts, the recompile check, the timings and the gate."""

from __future__ import annotations

import json

import pytest

from breakscan import scan
from breakscan.config import from_config
from breakscan.options import ScanOptions, TimingOptions

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


def test_dynamic_false_keeps_every_size_static():
    result = scan(NO_BRANCH, input_shapes=["8,16"], vary_batch="2,4,16", dynamic=False)
    assert result.summary.recompile_count == 2  # each new batch size compiles again
    assert result.compile_settings["dynamic"] is False


def test_compile_options_reach_torch_compile_in_the_timings():
    """An option torch.compile does not know fails the compile: proof the options got there."""
    result = scan(NO_BRANCH, input_shapes=["8,16"], compile_options=["no_such_option=1"],
                  timing=TimingOptions(max_run_time=0.05, fullgraph=False))
    assert result.compile_settings["options"] == {"no_such_option": 1}
    assert "no_such_option" in (result.timings.compile_error or "")


def test_the_settings_parse_from_the_cli_the_config_and_python():
    assert ScanOptions(dynamic="true").dynamic is True
    assert ScanOptions(compile_options=["b=True", "a=3", "c=fast"]).compile_options == (
        ("a", 3), ("b", True), ("c", "fast"))
    assert ScanOptions(compile_options={"a": 1}).compile_options == (("a", 1),)
    options = ScanOptions(dynamic=True, compile_options=["a=1"])
    assert ScanOptions.from_dict(json.loads(json.dumps(options.to_dict()))) == options
    scan_options, _, _ = from_config({"dynamic": True, "compile-option": ["max_autotune=False"]},
                                     target="m.py:Net", where="pyproject.toml")
    assert (scan_options.dynamic, scan_options.compile_options) == (
        True, (("max_autotune", False),))


def test_the_pytest_helpers_take_dynamic():
    import sys

    import torch

    sys.path.insert(0, str(SAMPLES))
    try:
        from shape_branch import NoShapeBranch
    finally:
        sys.path.remove(str(SAMPLES))
    from breakscan import assert_max_graph_breaks

    result = assert_max_graph_breaks(NoShapeBranch(), torch.randn(8, 16), dynamic=True)
    assert result.compile_settings["dynamic"] is True
    with pytest.raises(Exception, match="--dynamic takes true or false"):
        assert_max_graph_breaks(NoShapeBranch(), torch.randn(8, 16), dynamic="sometimes")


def test_compare_runs_both_models_with_the_same_settings():
    proc = run_cli("compare", NO_BRANCH, NO_BRANCH, "-s", "8,16", "--dynamic", "true",
                   "--backend", "eager", "--max-run-time", "0.05", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for side in ("a", "b"):
        assert doc[side]["result"]["compile_settings"]["dynamic"] is True
    assert doc["ab"]["verdict"] in ("faster", "slower", "no measurable difference")
