"""Advice a user can act on (issue 21) through the real CLI: a compile failure in every format,
and source shown literally.

The third-party suite (tests/slow/test_third_party.py) has a real library instance of each item.
"""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, SAMPLES, locate, run_cli

CASES = FIXTURES / "models" / "advice_cases.py"


# -- 1. a compile failure is not a graph break ----------------------------------------------------

def test_a_model_that_does_not_compile_exits_3_and_fails_every_gate():
    """Through the CLI: exit 3, the JSON's compile_error and the terminal's line. Every other
    format's line for the same recorded failure: tests/unit/test_reports.py."""
    target = f"{SAMPLES / 'compile_error.py'}:CompileFails"
    proc = run_cli(target, "-s", "8,16", "--max-breaks", "1", "-f", "json")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    line = locate("keep[rows, cols] = False", SAMPLES / "compile_error.py")[1]
    error = doc["compile_error"]
    assert {k: error[k] for k in ("message", "exception", "line", "code")} == {
        "message": "RuntimeError when making fake tensor call", "exception": "TorchRuntimeError",
        "line": line, "code": "keep[rows, cols] = False"}
    assert error["file"] == str(SAMPLES / "compile_error.py")
    assert [f["function"] for f in error["call_chain"]] == ["forward"]
    assert doc["breaks"] == [] and doc["summary"]["frames_skipped"] == 0
    assert [c["name"] for c in doc["gate"]["checks"] if not c["passed"]] == ["compiles"]
    plain = run_cli(target, "-s", "8,16", env={"COLUMNS": "200"})  # no gate: still exit 3
    assert plain.returncode == 3
    assert plain.stdout.splitlines()[1] == (  # said first, right under the target
        "torch.compile fails: TorchRuntimeError: RuntimeError when making fake tensor call at "
        f"sample_models/compile_error.py:{line}")
    assert "frame_skipped" not in plain.stdout and "ran eagerly" not in plain.stdout


# -- 6. source shown literally ----------------------------------------------------------------------

def test_markup_in_source_reasons_file_names_and_output_is_shown_literally(tmp_path):
    odd = tmp_path / "odd[bold]name.py"
    shutil.copy(CASES, odd)
    proc = run_cli(f"{odd}:Markup", "-s", "4,16", "-v", env={"COLUMNS": "240"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "pos = h[h > 0]" in out  # the action table and the panel
    assert '[bold red]alert[/bold red] [/] :smile:' in out  # the source and the output
    assert "odd[bold]name.py" in out
    assert "😄" not in out
