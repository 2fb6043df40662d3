"""Bad options answered from the options alone, before any scan process starts: the same
one-line usage errors as the bad-input matrix (tests/cli/test_cli.py), with no model, no child
and no torch; and the gate's --fail-on categories.
"""

from __future__ import annotations

import re

import pytest

from breakscan.errors import UsageError
from breakscan.options import GateOptions

from conftest import ROOT

ITEM = "sample_models/item_logging.py:LogInsideForward"


@pytest.mark.parametrize("target, options, text", [
    ("nope/missing.py:Net", {"input_shapes": ["2,16"]}, "target file not found: nope/missing.py"),
    ("sample_models/item_logging.py", {"input_shapes": ["8,16"]}, "has no ':NAME'"),
    (ITEM, {"input_shapes": ["8,,16"]}, "bad --input-shape '8,,16'"),
    (ITEM, {}, "no inputs given"),
    (ITEM, {"input_shapes": ["8,16"], "init_args": "{width: 3}"}, "--init-args is not valid JSON"),
    (ITEM, {"input_shapes": ["8,16"], "vary_batch": "2,x"}, "bad --vary-batch"),
])
def test_errors_that_need_no_model_are_found_before_a_scan_process_starts(target, options, text):
    """The same one-line errors as the matrix, from the options alone (no torch, no child):
    the CLI checks them first, so a typo is answered at once."""
    from breakscan.errors import UsageError
    from breakscan.options import ScanOptions

    with pytest.raises(UsageError, match=re.escape(text)):
        ScanOptions(**options).check(target)


@pytest.mark.parametrize("flag, value, text", [
    ("--dtype", "float8", "unknown --dtype 'float8'"),
    ("--device", "tpu", "unknown --device 'tpu'"),
    ("--max-recompiles", "0", "--max-recompiles needs input sets to recompile over")])
def test_the_cli_answers_a_wrong_dtype_or_device_without_starting_a_scan(
        flag, value, text, monkeypatch, capsys):
    import breakscan.process.isolate as isolate
    from breakscan.cli import main

    def no_child(*args, **kwargs):
        raise AssertionError("a scan process was started")

    monkeypatch.setattr(isolate, "run_isolated", no_child)
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as ended:
        main([ITEM, "-s", "8,16", flag, value])
    assert ended.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("breakscan: error: ") and text in line


def test_a_config_target_gated_on_recompiles_without_input_sets_fails_before_its_scan(tmp_path):
    from breakscan.runs.check import config_targets

    (run,) = config_targets({"targets": [{"target": f"{ROOT}/{ITEM}", "input-shape": ["8,16"],
                                          "max-recompiles": 0}]}, tmp_path / "pyproject.toml")
    assert run.exit_code == 2 and run.error.startswith("--max-recompiles needs input sets")


def test_usage_error_for_unknown_category():
    with pytest.raises(UsageError, match="unknown --fail-on category nope"):
        GateOptions(fail_on="item,nope")
