"""The rules real library code needed, on small models of our own (no third-party package).

First-call capture, the origin of a branch's value, no root cause in the standard library, the
user's line for a break inside a library, Dynamo's own reason for falling back to eager, lint
statuses in skipped frames, advice that names something to do, fixes from Dynamo's hints, and
the specialised sizes 0/1 in the recompile check. The third-party versions of these cases are in
tests/test_third_party.py.
"""

from __future__ import annotations

import json

import pytest

from breakscan import scan
from breakscan.gate import evaluate
from breakscan.options import GateOptions
from breakscan.rules import finding_status

from conftest import GAINED, FIXTURES, QUICK, SAMPLES, locate, run_cli, run_on_terminal

RC = FIXTURES / "models" / "real_code.py"
TOYSCHED = FIXTURES / "site-packages" / "toysched" / "__init__.py"
FAST = QUICK


def _scan(name: str, shape: str = "4,16", **kwargs):
    return scan(f"{RC}:{name}", input_shapes=[shape], **kwargs)


def _line(text: str, file=RC) -> int:
    return locate(text, file)[1]


# -- 1. the first call --------------------------------------------------------------------------

def test_fullgraph_gate_fails_on_a_first_call_break():
    proc = run_cli(f"{SAMPLES}/first_call.py:HookOnce", "-s", "8,16", "--fullgraph", "-q")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "graphs 2 · root-cause breaks 1" in proc.stdout and "FAIL: fullgraph" in proc.stdout


def test_breaks_of_later_calls_only_are_reported_but_not_gated():
    result = scan(f"{SAMPLES}/first_call.py:PrintAfterFirstCall", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.calls == "later_only" and brk.category == "print"
    assert (result.later_call.graph_count, result.later_call.graph_break_count) == (2, 1)
    gate = evaluate(result, GateOptions(max_breaks=0, fail_on=["print"]))
    assert gate.passed, gate.checks


def test_first_call_only_break_is_counted_and_marked_in_json():
    from breakscan.options import GateOptions, ScanOptions
    from breakscan.process.runner import run_model

    run = run_model(f"{SAMPLES}/first_call.py:LazyScale", ScanOptions(input_shapes=["8,16"]),
                    GateOptions(max_breaks=0), isolated=False)
    assert run.exit_code == 1
    doc = run.result.to_dict()
    assert doc["captured_call"] == "first call of a freshly built model"
    assert doc["later_call"]["first_only"] == 1 and doc["later_call"]["graph_count"] == 1
    assert [b["calls"] for b in doc["breaks"]] == ["first_only"]


# -- 2. origins, not symptoms -------------------------------------------------------------------

def test_branches_on_one_numpy_value_are_one_root_cause_at_its_origin():
    result = _scan("NumpyOrigin")
    (brk,) = result.breaks
    assert (brk.line, brk.code, brk.category) == (_line("return np.lcm(a, b)"),
                                                  "return np.lcm(a, b)", "data_dependent_branch")
    assert [s.line for s in brk.sites] == [_line("if x.shape[-1] % multiple != 0:"),
                                           _line("if multiple > 8:")]
    assert brk.records == 2 and result.summary.graph_count == 3
    assert "math" in brk.suggestion and "NumPy" in brk.suggestion
    # The lint's finding on that line agrees with the scan.
    (finding,) = [f for f in result.static if f.line == brk.line]
    assert finding.status == "break"
    fixed = _scan("MathOrigin")
    assert (fixed.summary.graph_count, fixed.breaks) == (1, [])


def test_the_standard_library_is_never_the_root_cause():
    result = _scan("StdlibCall")
    (brk,) = result.breaks
    assert (brk.file, brk.line, brk.owner) == (str(RC), _line(
        "width = len(json.dumps(self.settings))"), "user")
    assert any(f.file.endswith("json/encoder.py") for f in brk.call_chain)  # chain kept whole


def test_a_break_inside_a_library_names_the_users_line():
    result = _scan("LibraryLoop")
    (brk,) = result.breaks
    assert (brk.file, brk.owner) == (str(TOYSCHED), "third_party")
    assert brk.code == "scale = self.scale[int(t)]"
    assert (brk.user_frame.file, brk.user_frame.line) == (
        str(RC), _line("x = self.scheduler.step(out, t, x)"))
    assert "real_code.py:" in brk.suggestion and "torch.compiler.disable" in brk.suggestion


# -- 3. honest frame-skip causes and lint statuses ---------------------------------------------

@pytest.mark.parametrize("name, kind, words, frames_skipped", [
    ("BreakInTry", "whole_frame", "inside a try block", 1),
    ("BreakInLock", "whole_frame", "could not resume from this break: it skipped", 1),
    ("SkippedFrameLint", "loop", "inside a for/while loop", 1),
    ("LSTMTagger", "rest_of_frame", "ran the rest of the function eagerly", 0),
])
def test_fallback_to_eager_states_dynamos_own_cause(name, kind, words, frames_skipped):
    result = _scan(name, "2,5,16" if name == "LSTMTagger" else "4,16")
    (brk,) = [b for b in result.breaks if b.skip_kind]
    assert brk.skip_kind == kind and words in brk.skip_cause
    # The summary and the break agree on whether a whole frame ran eagerly.
    assert result.summary.frames_skipped == frames_skipped
    assert brk.frame_skipped == bool(frames_skipped)
    if kind != "loop":
        assert "loop" not in brk.suggestion and "loop" not in brk.skip_cause


def test_lint_says_not_traced_for_a_line_in_a_skipped_frame():
    result = _scan("SkippedFrameLint")
    (item,) = [f for f in result.static if f.category == "item"]
    assert item.line == _line("scale = x.abs().max().item()") and item.status == "not traced"
    assert "not traced (frame skipped)" in finding_status(item.status, item.category)


def test_recompile_rules_are_never_called_a_waiting_break():
    for status in ("ran", "not exercised"):
        for category in ("shape_loop", "shape_branch", "global_mutation"):
            text = finding_status(status, category)
            assert text and "waiting" not in text and "without breaking" not in text
    assert "a break waiting" in finding_status("not exercised", "item")


# -- 4. advice that leads somewhere -------------------------------------------------------------

@pytest.mark.parametrize("name", ["NumpyOrigin", "StdlibCall", "LibraryLoop", "BreakInTry",
                                  "BreakInLock", "RequiresGradFlag", "LSTMTagger"])
def test_advice_names_something_to_do(name):
    result = _scan(name, "2,5,16" if name == "LSTMTagger" else "4,16",
                   train=name == "RequiresGradFlag")
    assert result.breaks
    for brk in result.breaks:
        assert "See Dynamo's explanation" not in brk.suggestion
        assert "a other" not in brk.suggestion
        if (brk.cause_category or brk.category) != "print":
            assert "ignore_logging_functions" not in brk.suggestion
        assert "torch.compiler.disable" in brk.suggestion or brk.category != "other"


def test_a_setting_named_by_dynamos_hint_is_tried_and_verified():
    proc = run_cli(f"{RC}:LSTMTagger", "-s", "2,5,16", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (fix,) = [f for f in doc["fixes"] if f["fix_id"] == "allow_rnn"]
    assert fix["setting"] == "torch._dynamo.config.allow_rnn = True"
    assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
    assert (fix["before"]["breaks"], fix["after"]["breaks"], fix["after"]["graph_count"]) == \
        (1, 0, 1)
    # one graph either way: the gain is the return to Python (the rest of forward ran eagerly
    # after the LSTM break, which has no resume function) that the setting removes
    assert (fix["before"]["eager_gaps_per_call"], fix["after"]["eager_gaps_per_call"]) == (1, 0)
    brk = doc["breaks"][0]
    assert (brk["skip_kind"], brk["fires_per_call"]) == ("rest_of_frame", 1)


def test_a_library_break_gets_fixes_at_the_users_call_each_verified():
    proc = run_cli(f"{RC}:LibraryLoop", "-s", "4,16", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    fixes = {f["fix_id"]: f for f in json.loads(proc.stdout)["fixes"]}
    line = _line("x = self.scheduler.step(out, t, x)")
    tolist = fixes["tolist_loop"]
    assert tolist["status"] in GAINED and tolist["outputs_match"]
    assert tolist["after"]["graph_count"] < tolist["before"]["graph_count"]
    assert "+        for t in self.scheduler.timesteps.tolist():" in tolist["diff"]
    disable = fixes["disable_call"]
    assert (disable["file"], disable["line"], disable["call"]) == (str(RC), line, "step")
    assert "torch.compiler.disable(self.scheduler.step)(out, t, x)" in disable["diff"]
    assert disable["status"] in GAINED or disable["reason"]  # proven either way, never assumed


def test_no_fix_proposed_says_why():
    proc = run_cli(f"{RC}:BreakInLock", "-s", "4,16", "--fix", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "no fix proposed for #1 (frame_skipped at" in proc.stdout


# -- 5. the recompile check does not waste time ------------------------------------------------

def test_sizes_0_and_1_are_not_replayed_with_dynamic_true():
    target = f"{SAMPLES}/shape_branch.py:ShapeBranch"
    report = scan(target, input_shapes=["8,16"], vary_batch="1,2,4").recompiles
    assert report.specialised_sets == [0] and report.dynamic_replayed == 2
    assert "specialises sizes 0 and 1" in report.suggestion
    only_one = scan(target, input_shapes=["8,16"], vary_batch="1,8").recompiles
    assert only_one.recompiles and only_one.dynamic_recompile_count is None
    assert "not replayed" in only_one.suggestion
    skipped = scan(target, input_shapes=["8,16"], vary_batch="4,16",
                   dynamic_check=False).recompiles
    assert skipped.dynamic_recompile_count is None and "--no-dynamic-check" in skipped.suggestion


def test_a_status_line_shows_the_stage_on_a_terminal_only():
    """On a TTY, stderr carries a live line with the stage and elapsed time; piped, nothing."""
    target = f"{SAMPLES}/shape_branch.py:ShapeBranch"
    screen = run_on_terminal(target, "-s", "8,16", "--vary-batch", "2,4,16")
    assert f"s · explain · {target}" in screen and "Recompiles over 3 input sets" in screen
    piped = run_cli(f"{SAMPLES}/shape_branch.py:ShapeBranch", "-s", "8,16")
    assert "· explain ·" not in piped.stderr and piped.stderr == ""
