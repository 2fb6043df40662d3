"""Issue 23 through the real CLI: the stages of a scan in every report, the live status line on
a terminal, and the fullgraph gate on a break of the first call."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import SAMPLES, run_cli, run_on_terminal

STAGES = ["load", "lint", "explain", "eager run", "later call", "run-time counts"]


def test_stages_are_in_the_json_the_verbose_report_and_the_html(tmp_path):
    out = tmp_path / "scan.json"
    page = tmp_path / "scan.html"
    common = [sys.executable, "-m", "breakscan", f"{SAMPLES}/per_layer_branch.py:PerLayerBranch",
              "--input-shape", "8,16", "--vary-batch", "2,4"]
    subprocess.run(common + ["-f", "json", "-o", str(out)], check=True, timeout=300)
    proc = subprocess.run(common + ["--verbose", "--html", str(page)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stages = json.loads(out.read_text())["stages"]
    assert list(stages) == STAGES + ["recompiles", "recompiles (dynamic=True replay)"]
    assert all(isinstance(s, float) and s >= 0 for s in stages.values())
    assert stages["explain"] > 0
    text = " ".join(proc.stdout.split())  # rich wraps the line at the terminal's width
    assert "scan time " in text and "· later call " in text and "· run-time counts " in text
    html = page.read_text()
    assert 'data-key="stages"' in html and 'data-stage="run-time counts"' in html


def test_a_status_line_shows_the_stage_on_a_terminal_only():
    """On a TTY, stderr carries a live line with the stage and elapsed time; piped, nothing."""
    target = f"{SAMPLES}/shape_branch.py:ShapeBranch"
    screen = run_on_terminal(target, "-s", "8,16", "--vary-batch", "2,4,16")
    assert f"s · explain · {target}" in screen and "Recompiles over 3 input sets" in screen
    piped = run_cli(f"{SAMPLES}/shape_branch.py:ShapeBranch", "-s", "8,16")
    assert "· explain ·" not in piped.stderr and piped.stderr == ""


# -- a break of the first call ----------------------------------------------------------------

def test_fullgraph_gate_fails_on_a_first_call_break():
    proc = run_cli(f"{SAMPLES}/first_call.py:HookOnce", "-s", "8,16", "--fullgraph", "-q")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "graphs 2 · root-cause breaks 1" in proc.stdout and "FAIL: fullgraph" in proc.stdout
