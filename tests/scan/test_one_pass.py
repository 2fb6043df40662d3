"""Issue 23: one compiled model per scan. Its first call gives explain's numbers (equal to a
bare explain of a fresh model), its second the later call, the rest the run-time counts; the
counters never blame the model for breakscan's own failures; every report says where the time
went."""

from __future__ import annotations

import contextlib
import sys

import pytest
import torch

from breakscan import scan
from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions
from breakscan.pipeline.load import load_target

from conftest import FIXTURES as FIXTURE_ROOT
from conftest import SAMPLES, locate, sample_expectations

FIXTURES = FIXTURE_ROOT / "models"
COMPILES = [e for e in sample_expectations() if "compile_error" not in e.facts]
STAGES = ["load", "lint", "explain", "eager run", "later call", "run-time counts"]


@pytest.mark.parametrize("expect", COMPILES, ids=str)
def test_explain_numbers_equal_a_bare_explain_of_a_fresh_model(expect):
    result = scan(expect.target, input_shapes=["8,16"])
    loaded = load_target(expect.target, input_shapes=["8,16"])
    with torch.no_grad(), contextlib.redirect_stdout(None):
        bare = torch._dynamo.explain(loaded.fn)(*loaded.args, **loaded.kwargs)
    e = result.explain
    assert (e.graph_count, e.graph_break_count, e.op_count, len(e.break_reasons)) == \
        (bare.graph_count, bare.graph_break_count, bare.op_count, len(bare.break_reasons))


def test_each_frame_is_compiled_once_per_scan():
    """The later call and the run-time counts reuse the first call's compiled code: Dynamo
    transforms each frame once (three separate traces transformed each three times)."""
    compiled: list[str] = []
    handle = torch._dynamo.convert_frame.register_bytecode_hook(
        lambda code, new: compiled.append(code.co_name))
    try:
        result = scan(f"{SAMPLES}/per_layer_branch.py:PerLayerBranch", input_shapes=["8,16"])
    finally:
        handle.remove()
    first_call = [f.name for f in result.frames if not f.skipped]
    assert len(first_call) == 3 and sorted(compiled) == sorted(first_call)
    assert result.summary.graph_calls_per_call == 48.0  # the counts still come out
    assert list(result.stages) == STAGES


def test_a_break_inside_a_comprehension_under_a_skipped_frame_is_counted():
    target = f"{FIXTURES}/comprehension_break.py:ItemInComprehension"
    # The condition this guards against is real: a code object that cannot be hashed runs.
    loaded = load_target(target, input_shapes=["8,16"])
    compiled = torch.compile(loaded.fn, backend="eager")
    unhashable = []

    def profile(frame, event, arg):
        if event == "call":
            try:
                hash(frame.f_code)
            except TypeError:
                unhashable.append(frame.f_code.co_name)

    with contextlib.redirect_stdout(None):
        compiled(*loaded.args)
        sys.setprofile(profile)
        try:
            compiled(*loaded.args)
        finally:
            sys.setprofile(None)
        torch._dynamo.reset()
    assert "scaled" in unhashable

    result = scan(target, input_shapes=["8,16"])
    assert result.compile_error is None
    assert not [n for n in result.notes if "not measured" in n or "counter failed" in n]
    s = result.summary
    assert (s.graph_calls_per_call, s.eager_gaps_per_call, s.frames_run_eagerly_per_call) == \
        (2.0, 1.0, 2.0)
    item = locate("scales = [h[i].norm().item() for i in range(2)]", FIXTURES /
                  "comprehension_break.py")
    printed = locate('print("step", step)  # a break in a loop: Dynamo skips forward',
                     FIXTURES / "comprehension_break.py")
    fires = {(b.file, b.line): (b.fires_per_call, b.calls) for b in result.breaks}
    assert fires == {(str(item[0]), item[1]): (1.0, "every"),
                     (str(printed[0]), printed[1]): (1.0, "every")}


def _broken_counter(wanted):
    """breakscan's call counter with a bug: its own profile function raises inside the compiled
    call (at breakscan's line: the check it makes of each code object raises, a C function adds
    no frame), so the failure is breakscan's by where it was raised."""
    from breakscan.dynamo.backend import python_calls

    return python_calls({}.__getitem__)


def test_a_failing_counter_is_reported_as_breakscans_never_as_the_models(monkeypatch):
    import breakscan.pipeline.capture

    monkeypatch.setattr(breakscan.pipeline.capture, "python_calls", _broken_counter)
    result = scan(f"{SAMPLES}/tolist_call.py:TolistInForward", input_shapes=["8,16"])
    assert result.compile_error is None
    (later, counts) = [n for n in result.notes if "counter failed" in n]
    assert later.startswith("breakscan's later-call counter failed, not the model")
    assert counts.startswith("run-time counts not measured: breakscan's run-time counter "
                             "failed, not the model (it runs when called again): KeyError")
    # The rest of the report is intact: the first call's capture and the later call.
    assert (result.summary.graph_count, result.summary.graph_break_count) == (2, 1)
    assert [b.calls for b in result.breaks] == ["every"]
    assert result.later_call.graph_count == 2
    assert result.summary.graph_calls_per_call is None


def test_a_first_call_break_whose_split_stays_is_told_with_the_warm_up_that_removes_it():
    """The hooks are installed on the first call only, but the code compiled around that call is
    reused: later calls still split. The advice (call the model once before torch.compile) is
    checked: compiled after one eager call, the same model is one graph."""
    from breakscan.report.wording import calls_text

    target = f"{SAMPLES}/first_call.py:HooksOnceInHelper"
    result = scan(target, input_shapes=["8,16"])
    (brk,) = result.breaks
    assert (brk.calls, brk.fires_per_call) == ("first_only", 1.0)
    later = result.later_call
    assert (later.graph_count, later.graph_break_count, later.first_only, later.kept_splits) == \
        (2, 0, 1, 1)
    assert result.summary.graph_calls_per_call == 2.0
    assert calls_text(brk).startswith("first call only, but its split stays")
    assert "Call the model once before torch.compile" in calls_text(brk)

    loaded = load_target(target, input_shapes=["8,16"])
    with torch.no_grad():
        loaded.fn(*loaded.args)  # the warm-up the advice names
        warm = torch._dynamo.explain(loaded.fn)(*loaded.args)
    assert (warm.graph_count, warm.graph_break_count) == (1, 0)


# -- breaks of the first call only and of later calls only -----------------------------------------

def test_breaks_of_later_calls_only_are_reported_but_not_gated():
    result = scan(f"{SAMPLES}/first_call.py:PrintAfterFirstCall", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.calls == "later_only" and brk.category == "print"
    assert (result.later_call.graph_count, result.later_call.graph_break_count) == (2, 1)
    gate = evaluate(result, GateOptions(max_breaks=0, fail_on=["print"]))
    assert gate.passed, gate.checks


def test_first_call_only_break_is_counted_and_marked_in_json():
    from breakscan.options import GateOptions, ScanOptions
    from breakscan.runs.runner import run_model

    run = run_model(f"{SAMPLES}/first_call.py:LazyScale", ScanOptions(input_shapes=["8,16"]),
                    GateOptions(max_breaks=0), isolated=False)
    assert run.exit_code == 1
    doc = run.result.to_dict()
    assert doc["captured_call"] == "first call of a freshly built model"
    assert doc["later_call"]["first_only"] == 1 and doc["later_call"]["graph_count"] == 1
    assert [b["calls"] for b in doc["breaks"]] == ["first_only"]
