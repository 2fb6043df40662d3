"""`breakscan compare` through the real CLI (three child processes), for one sample pair: the
JSON document holds the same facts as the in-process comparisons of every pair in
tests/scan/test_compare_scan.py, and the terminal table comes with it.
"""

from __future__ import annotations

import json

from conftest import QUICK, assert_the_twin_wins, run_cli, sample_expectations

PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts]


def test_compare_through_the_cli_writes_json_and_the_table(tmp_path):
    """The real CLI (three child processes), for one pair: the JSON document holds the same
    facts as the in-process comparisons, and the terminal table comes with it. The user's
    torch.compile settings (here dynamic=True) apply to both models."""
    good, bad = next((g, b) for g, b in PAIRS if b == "TensorIf")
    dest = tmp_path / "compare.json"
    proc = run_cli("compare", f"{good.file}:{bad}", good.target, "-s", "8,16", *QUICK,
                   "--dynamic", "true", "-f", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(dest.read_text())
    assert_the_twin_wins(doc, good)
    for side in ("a", "b"):
        assert doc[side]["result"]["compile_settings"]["dynamic"] is True
    lines = proc.stdout.splitlines()
    assert lines[:2] == [f"A = {good.file}:{bad}", f"B = {good.target}"]
    assert any(line.startswith("│ graphs ") and "2 │" in line and "1 │" in line for line in lines)
    assert "outputs: B matches A (max abs error 0.00e+00, same weights)" in proc.stdout
    assert "A → B, compiled, in one process: compiled " in " ".join(proc.stdout.split())
