"""CI gate: exit codes from the real CLI, baselines, check, and the machine-readable formats."""

from __future__ import annotations

import json
import shutil
import textwrap
import xml.etree.ElementTree as ET

import pytest

from breakscan import scan
from breakscan.errors import UsageError
from breakscan.gate import evaluate
from breakscan.options import GateOptions, ScanOptions

from conftest import SAMPLES, locate, run_cli

ITEM = "sample_models/item_logging.py:LogInsideForward"
CLEAN = "sample_models/item_logging.py:LogOutsideForward"


# --- each exit code, from the real CLI ------------------------------------------------------

def test_exit_0_gate_passed():
    proc = run_cli(CLEAN, "-s", "8,16", "--max-breaks", "0", "--max-graphs", "1", "--fullgraph")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == "PASS: 3 check(s) passed"


def test_exit_1_gate_failed_names_each_check():
    proc = run_cli(ITEM, "-s", "8,16", "--max-breaks", "0", "--fail-on", "item,print",
                   "--max-graphs", "5")
    assert proc.returncode == 1
    assert proc.stdout.rstrip().splitlines()[-1] == (
        "FAIL: max_breaks 1 > limit 0; fail_on:item 1 > limit 0")


def test_exit_2_usage():
    proc = run_cli(ITEM, "-s", "8,16", "--fail-on", "itme")
    assert proc.returncode == 2 and "unknown --fail-on category itme" in proc.stderr
    proc = run_cli(ITEM, "-s", "8,16", "--max-recompiles", "0")
    assert proc.returncode == 2 and "--vary-batch" in proc.stderr


def test_exit_3_model_failed():
    proc = run_cli(ITEM, "-s", "8,15", "--max-breaks", "0")
    assert proc.returncode == 3 and "mat1 and mat2" in proc.stderr


def test_max_recompiles_gate():
    proc = run_cli("sample_models/shape_branch.py:ShapeBranch", "-s", "8,16", "--vary-batch",
                   "2,4,16", "--max-recompiles", "1", "-q")
    assert proc.returncode == 1 and "max_recompiles 2 > limit 1" in proc.stdout


def test_gate_in_json():
    result = scan(f"{SAMPLES}/loop_break.py:PrintInLoop", input_shapes=["8,16"])
    gate = evaluate(result, GateOptions(fullgraph=True, fail_on=["print"]))
    result.gate = gate
    doc = result.to_dict()["gate"]
    assert doc["passed"] is False
    assert {c["name"]: (c["limit"], c["actual"], c["passed"]) for c in doc["checks"]} == {
        "fail_on:print": (0, 1, False),  # the print that made the frame skip
        "fullgraph": (0, 2, False)}  # one break + one skipped frame


# --- baselines ------------------------------------------------------------------------------

def test_baseline_round_trip(tmp_path, monkeypatch):
    from breakscan.config import gate_options
    from breakscan.process.runner import run_model

    models = tmp_path / "models"
    shutil.copytree(SAMPLES, models)
    target = "models/tensor_branch.py:TensorIf"
    base = tmp_path / "baseline.json"
    assert run_cli(target, "-s", "8,16", "--write-baseline", str(base), cwd=tmp_path,
                   ).returncode == 0
    doc = json.loads(base.read_text())
    assert doc["targets"][target]["breaks"] == [{"category": "data_dependent_branch",
                                                 "file": "models/tensor_branch.py",
                                                 "code": "if h.sum() > 0:", "line": 24}]
    # unchanged -> pass (the gate's logic, in this process; the CLI's flags are tested below)
    monkeypatch.chdir(tmp_path)

    def gated():
        gate = gate_options(baseline=str(base), target=target)
        return run_model(target, ScanOptions(input_shapes=["8,16"]), gate, isolated=False)

    same = gated()
    assert same.exit_code == 0 and same.result.gate.passed, same.result.gate
    # lines added above the break do not make it new
    source = models / "tensor_branch.py"
    source.write_text(source.read_text().replace('import torch\n', 'import torch\n\n# note\n'))
    moved = gated()
    assert moved.exit_code == 0 and moved.result.breaks[0].line == 26, moved.result.gate
    # a new break -> fail naming it
    source.write_text(source.read_text().replace(
        "        return torch.tanh(h)\n\n\nclass TensorWhere",
        "        print('debug')\n        return torch.tanh(h)\n\n\nclass TensorWhere"))
    new = run_cli(target, "-s", "8,16", "--baseline", str(base), cwd=tmp_path)
    assert new.returncode == 1
    assert "baseline:new_breaks 1 > limit 0" in new.stdout
    assert "new print at" in new.stdout and "print('debug')" in new.stdout
    # the original break removed (the fixed twin's code) -> pass with an improvement note
    fixed = source.read_text().replace("        print('debug')\n", "").replace(
        "        if h.sum() > 0:\n            h = h * 2\n        else:\n            h = h - 1\n"
        "        return torch.tanh(h)\n\n\nclass TensorWhere",
        "        h = torch.where(h.sum() > 0, h * 2, h - 1)\n        return torch.tanh(h)\n\n\n"
        "class TensorWhere")
    source.write_text(fixed)
    better = run_cli(target, "-s", "8,16", "--baseline", str(base), cwd=tmp_path)
    assert better.returncode == 0, better.stdout
    assert "improved: fixed: data_dependent_branch at models/tensor_branch.py `if h.sum() > 0:`" \
        in better.stdout
    assert "improved: graph count 2 -> 1" in better.stdout


def test_baseline_errors(tmp_path):
    proc = run_cli(ITEM, "-s", "8,16", "--baseline", str(tmp_path / "none.json"))
    assert proc.returncode == 2 and "baseline file not found" in proc.stderr


# --- check: many models from pyproject.toml -------------------------------------------------

def test_check_runs_every_target(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "sample_models")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [tool.breakscan]
        max-breaks = 0

        [[tool.breakscan.targets]]
        target = "{CLEAN}"
        input-shape = ["8,16"]

        [[tool.breakscan.targets]]
        target = "sample_models/tensor_branch.py:TensorIf"
        input-shape = "8,16"
        fail-on = ["data_dependent_branch"]

        [[tool.breakscan.targets]]
        target = "sample_models/shape_branch.py:ShapeBranch"
        input-shape = ["8,16"]
        vary-batch = [2, 4, 16]
        max-recompiles = 2
    """))
    proc = run_cli("check", "--format", "json", "-o", "out.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["passed"] is False and doc["exit_code"] == 1
    assert [m["exit_code"] for m in doc["models"]] == [0, 1, 0]
    assert doc["models"][2]["result"]["summary"]["recompile_count"] == 2
    table = proc.stdout
    assert "breakscan check" in table and "TensorIf" in table and "FAIL" in table


def test_check_config_errors(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    proc = run_cli("check", cwd=tmp_path)
    assert proc.returncode == 2 and "no [tool.breakscan] section" in proc.stderr


# --- machine-readable formats ---------------------------------------------------------------

@pytest.fixture(scope="module")
def failing_runs():
    from breakscan.process.runner import run_model

    # The formats are the subject, not isolation: the scans run in this process.
    gate, options = GateOptions(max_breaks=0), ScanOptions(input_shapes=["8,16"])
    return [run_model(f"{SAMPLES}/{target}", options, gate, isolated=False)
            for target in ("nested_break.py:NestedBreak", "item_logging.py:LogOutsideForward",
                           "nope.py:X")]


def test_junit_counts(failing_runs):
    from breakscan.report.junit import to_junit

    root = ET.fromstring(to_junit(failing_runs).split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert [(s.get("tests"), s.get("failures"), s.get("errors")) for s in suites] == [
        ("2", "1", "0"), ("2", "0", "0"), ("1", "0", "1")]
    failure = suites[0].find("testcase[@name='max_breaks']/failure")
    assert failure.get("message") == "max_breaks: 1 > limit 0"
    assert "nested_helpers.py:7" in failure.text


def test_sarif_structure(failing_runs):
    from breakscan.report.sarif import to_sarif

    doc = json.loads(to_sarif(failing_runs))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    first = run["results"][0]
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] == "item"
    location = first["locations"][0]["physicalLocation"]
    _, line = locate("peak = h.abs().max().item()", SAMPLES / "nested_helpers.py")
    assert location["artifactLocation"]["uri"] == "sample_models/nested_helpers.py"
    assert location["region"] == {"startLine": line}
    assert first["level"] == "error"  # the gate failed for this model
    assert run["results"][-1]["ruleId"] == "scan_error"


def test_github_annotations_and_markdown(failing_runs):
    from breakscan.report.github import to_github, to_markdown

    lines = to_github(failing_runs).splitlines()
    _, line = locate("peak = h.abs().max().item()", SAMPLES / "nested_helpers.py")
    assert lines[0].startswith(f"::error file=sample_models/nested_helpers.py,line={line},"
                               "title=graph break%3A item::")
    assert "%0Afix: " in lines[0] and "\n" not in lines[0]
    assert any(l.startswith("::error title=breakscan gate::") for l in lines)
    md = to_markdown(failing_runs)
    assert "| model | status |" in md and "**FAIL**" in md and "| pass |" in md


def test_usage_error_for_unknown_category():
    with pytest.raises(UsageError, match="unknown --fail-on category nope"):
        GateOptions(fail_on="item,nope")
