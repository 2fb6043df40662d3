"""A rewrite that destroys the value is never verified nor written (issue 33 §2).

``h.double().mul(1e-8).add(1).log().sin().float()`` holds ~1e-8 in float64 and 0.0 in float32
(``1 + 1e-8 * h`` rounds to 1). BS202's rewrite drops the round trip: outputs compared relative
to their magnitude (``pipeline/outputs.py``) make it "changes outputs", and ``--write`` leaves
the file alone.
"""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, QUICK, run_cli


def test_a_round_trip_rewrite_that_zeroes_the_output_changes_outputs_and_is_not_written(
        tmp_path):
    model = tmp_path / "precision_cases.py"
    shutil.copy(FIXTURES / "models" / "precision_cases.py", model)
    original = model.read_bytes()
    report = tmp_path / "fix.json"
    proc = run_cli(f"{model}:TinyLogInFloat64", "-s", "4,64", "--kernels", "--fix", "--write",
                   *QUICK, "-f", "json", "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(report.read_text())
    assert [(f["rule"], f["line"]) for f in doc["kernel_findings"]] == [("BS202", 16)]
    (fix,) = [f for f in doc["fixes"] if f["fix_id"] == "drop_round_trip"]
    assert "+        h = h.mul(1e-8).add(1).log().sin()" in fix["diff"]
    assert (fix["status"], fix["verified"], fix["outputs_match"], fix["written"]) == \
        ("changes outputs", False, False, False)
    assert fix["reason"].startswith("outputs differ from the original model: output 0: "
                                    "differs by 1 of its largest magnitude")
    assert model.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fix.json", "precision_cases.py"]
    assert "rewrote" not in proc.stderr
