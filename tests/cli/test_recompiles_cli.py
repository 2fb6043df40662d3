"""Recompiles over several input sets through the real CLI."""

from __future__ import annotations

import json

from conftest import FIXTURES, QUICK, run_cli


def test_cli_json_carries_recompiles(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli("sample_models/shape_branch.py:ShapeBranch", "-s", "8,16", "--vary-batch",
                   "2,4,16", "--format", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    assert "recompiles 2" in proc.stdout
    doc = json.loads(dest.read_text())
    assert doc["summary"]["recompile_count"] == 2
    assert doc["recompiles"]["dynamic_recompile_count"] == 1
    assert doc["recompiles"]["recompiles"][0]["reasons"] == [
        "tensor 'x' size mismatch at index 0. expected 2, actual 4"]


def test_a_branch_on_a_shape_gets_one_consistent_message():
    """Lint, recompile check and --fix agree: two code paths need two graphs, and dynamic=True,
    shown not to help, is recommended nowhere."""
    model = FIXTURES / "models" / "fix_cases.py"
    proc = run_cli(f"{model}:WidthBranch", "-s", "8,16", "--shapes", "8,16", "--shapes", "8,32",
                   "--fix", *QUICK, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    report = doc["recompiles"]
    branch_line = [n for n, t in enumerate(model.read_text().splitlines(), 1)
                   if t.strip() == "if x.shape[1] == 16:"][0]
    assert report["recompiles"][0]["guard_lines"] == [f"{model}:{branch_line}"]
    assert report["dynamic_helps"] is False
    assert "two code paths need two graphs" in report["suggestion"]
    (finding,) = [f for f in doc["static"] if f["category"] == "shape_branch"]
    assert "dynamic=True does not remove it" in finding["message"]
    assert "use `dynamic=True`" not in finding["message"]
    assert not [f for f in doc["fixes"] if f["fix_id"] == "dynamic"]
