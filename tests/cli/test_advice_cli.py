"""Advice a user can act on (issue 21) through the real CLI: a compile failure in every format,
and source shown literally.

The third-party suite (tests/slow/test_third_party.py) has a real library instance of each item.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, SAMPLES, locate, run_cli

CASES = FIXTURES / "models" / "advice_cases.py"


# -- 1. a compile failure is not a graph break ----------------------------------------------------

@pytest.mark.slow
def test_a_model_only_inductor_fails_on_exits_3_keeps_its_breaks_and_the_fix_rescues_it():
    """The capture runs (a pass-through backend), Inductor's compiled call raises: `--time`
    makes that the compile error, with its backend, never "exit 0" beside "torch.compile
    failed"; the break stays, and `--fix` verifies the setting that makes it compile."""
    target = f"{SAMPLES / 'family_autograd.py'}:GradientPenalty"
    proc = run_cli(target, "-s", "8,16", "--time", "--fix", "--max-run-time", "0.1",
                   "-f", "json")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    line = locate("(g,) = torch.autograd.grad(score.sum(), mixed, create_graph=True)",
                  SAMPLES / "family_autograd.py")[1]
    error = doc["compile_error"]
    assert (error["backend"], error["exception"], error["line"]) == ("inductor", "RuntimeError",
                                                                     line)
    assert "not have been used in the graph" in error["message"]
    assert [(b["gb_id"], b["line"]) for b in doc["breaks"]] == [("GB9186", line)]
    (fix,) = [f for f in doc["fixes"] if f["fix_id"] == "trace_autograd_ops"]
    assert fix["status"] == "verified" and fix["outputs_match"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
    assert "the original fails compiled with this backend" in fix["reason"]


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
