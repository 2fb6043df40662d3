"""`breakscan compare` through the real CLI (three child processes), for one sample pair: the
JSON document holds the same facts as the in-process comparisons of every pair in
tests/scan/test_compare_scan.py, and the terminal table comes with it.
"""

from __future__ import annotations

import json

from conftest import QUICK, run_cli, sample_expectations

PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts]


# The same check as tests/scan/test_compare_scan.py's (keep the two equal): a module of one test
# folder cannot import another's (no packages, prepend import mode).
def _assert_the_twin_wins(doc: dict, good) -> None:
    if doc["a"]["result"]["compile_error"]:  # A does not compile at all: B does
        assert doc["b"]["result"]["compile_error"] is None and doc["ab"] is None
        assert doc["b"]["result"]["summary"]["graph_count"] >= 1
        return
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
    ab = doc["ab"]  # A and B compiled and timed in one process: the only speed comparison
    for side in ("original", "fixed", "speedup"):
        assert ab[side]["low"] <= ab[side]["value"] <= ab[side]["high"]
    assert ab["verdict"] in ("faster", "slower", "no measurable difference")
    assert ab["blocks"] >= 10


def test_compare_through_the_cli_writes_json_and_the_table(tmp_path):
    """The real CLI (three child processes), for one pair: the JSON document holds the same
    facts as the in-process comparisons, and the terminal table comes with it."""
    good, bad = next((g, b) for g, b in PAIRS if b == "TensorIf")
    dest = tmp_path / "compare.json"
    proc = run_cli("compare", f"{good.file}:{bad}", good.target, "-s", "8,16", *QUICK,
                   "-f", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    _assert_the_twin_wins(json.loads(dest.read_text()), good)
    lines = proc.stdout.splitlines()
    assert lines[:2] == [f"A = {good.file}:{bad}", f"B = {good.target}"]
    assert any(line.startswith("│ graphs ") and "2 │" in line and "1 │" in line for line in lines)
    assert "outputs: B matches A (max abs error 0.00e+00, same weights)" in proc.stdout
    assert "A → B, compiled, in one process: compiled " in " ".join(proc.stdout.split())
