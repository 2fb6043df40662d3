"""CI gate from the real CLI: each exit code, baselines and `check` over pyproject.toml targets.

The gate's document and the machine-readable formats on scans run in this process are in
tests/scan/test_gate_scan.py; option checks that need no model in tests/unit/test_options_unit.py.
"""

from __future__ import annotations

import json
import shutil
import textwrap

from breakscan.options import ScanOptions

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


# --- baselines ------------------------------------------------------------------------------

def test_baseline_round_trip(tmp_path, monkeypatch):
    from breakscan.config import gate_options
    from breakscan.runs.runner import run_model

    models = tmp_path / "models"
    shutil.copytree(SAMPLES, models)
    target = "models/tensor_branch.py:TensorIf"
    base = tmp_path / "baseline.json"
    assert run_cli(target, "-s", "8,16", "--write-baseline", str(base), cwd=tmp_path,
                   ).returncode == 0
    doc = json.loads(base.read_text())
    line = locate("if h.sum() > 0:", SAMPLES / "tensor_branch.py")[1]
    assert doc["targets"][target]["breaks"] == [{"category": "data_dependent_branch",
                                                 "file": "models/tensor_branch.py",
                                                 "code": "if h.sum() > 0:", "line": line}]
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
    assert moved.exit_code == 0 and moved.result.breaks[0].line == line + 2, moved.result.gate
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


def test_check_gates_the_cold_compile_and_its_expected_figure(tmp_path):
    """Issue 47: `max-compile-time` in [tool.breakscan] turns --compile-time on and gates the
    cold compile's seconds; the expected-counts file holds the figure (with the dependencies it
    was made with), and a change names the dependency that changed since."""
    shutil.copytree(SAMPLES, tmp_path / "sample_models")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [tool.breakscan]
        max-compile-time = 0.000001

        [[tool.breakscan.targets]]
        target = "{CLEAN}"
        input-shape = ["8,16"]
    """))
    expected = {"breakscan_expected": 1, "torch_version": "1.0.0",
                "dependencies": {"torch": "1.0.0"},
                "targets": {CLEAN: {"ok": True, "graphs": 1, "root_breaks": 0,
                                    "compile_s": 0.000001}}}
    (tmp_path / "expected.json").write_text(json.dumps(expected))
    proc = run_cli("check", "--expected", "expected.json", "-f", "json", "-o", "out.json",
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (model,) = json.loads((tmp_path / "out.json").read_text())["models"]
    (check,) = model["result"]["gate"]["checks"]
    seconds = model["result"]["compile_time"]["cold"]["frames"][0]["total_s"]
    assert (check["name"], check["passed"], check["limit"]) == ("max_compile_time", False, 1e-6)
    assert check["actual"] >= seconds > 0
    out = " ".join((proc.stdout + proc.stderr).split())
    assert f"FAIL {CLEAN}: compile_s 0.000001 -> " in out.replace("1e-06", "0.000001")
    assert "(torch 1.0.0 -> 2." in out and "since the file was written: the change may come " \
                                             "from that)" in out
