"""Verification that survives state (issue 44 §1): a model that keeps state between calls is
found out, said once, compared call k with call k, timed from one state, and a later call that
fails says the first call with the same inputs succeeded."""

from __future__ import annotations

import json

import torch

from breakscan import ScanOptions, TimingOptions, scan
from breakscan.pipeline.state import CallState, ModelState

from conftest import FIXTURES, GAINED, ROOT, fixes_in_process, locate, run_cli, shown

CASES = FIXTURES / "models" / "stateful.py"
QUICK = TimingOptions(backend="eager", max_run_time=0.1)


def _module(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location("stateful_cases", CASES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)()


def test_what_a_call_changes_is_found_and_put_back():
    """An index set, a list appended to, a buffer written, an attribute added: each named by
    its dotted path, each put back exactly."""
    model = _module("SteppedInForward")
    model.register_buffer("seen", torch.zeros(2))
    state = ModelState(model)
    x = torch.randn(4, 16)
    first = model(x)
    model.seen.add_(1)
    model.extra = 3
    assert state.changed() == ["extra", "scheduler._step_index", "scheduler.history", "seen"]
    state.restore()
    assert state.changed() == []
    assert model.scheduler._step_index is None and model.scheduler.history == []
    assert torch.equal(model.seen, torch.zeros(2)) and not hasattr(model, "extra")
    assert torch.equal(model(x), first)  # the same call again


def test_running_statistics_and_weights_are_not_state():
    model = _module("RunningStatsOnly").train()
    state = ModelState(model)
    model(torch.randn(4, 16))
    assert state.changed() == []


def test_steady_puts_back_only_what_changes_on_every_call():
    model = _module("BuildsOnFirstCall")
    state = CallState(model)
    model(torch.randn(4, 16))
    state.after_first_call()
    model(torch.randn(4, 16))
    state.after_later_call()
    assert (state.first_call, state.every_call) == (["table"], [])
    report = state.report()
    assert (report.every_call, report.first_call_only) == ([], ["table"])
    assert report.sentence().startswith("its first call sets `table` (")


def test_a_scheduler_stepped_in_forward_is_timed_and_compared_from_one_state():
    """10 steps in its table: the timing's many calls each start from the state after one
    call (never the 11th step's IndexError), eager call 1 is compared with compiled call 1."""
    result = scan(f"{CASES}:SteppedInForward", ScanOptions(input_shapes=("4,16",), timing=QUICK))
    assert result.model_state.every_call == ["scheduler._step_index", "scheduler.history"]
    assert result.model_state.first_call_only == []
    assert result.timings.correctness.match and result.timings.compiled is not None
    (note,) = [n for n in result.notes if n.startswith("the model keeps state")]
    assert note.startswith("the model keeps state between calls: `scheduler._step_index`, "
                           "`scheduler.history` (each compared run")
    (timed,) = [n for n in result.timings.notes if n.startswith("called again and again")]
    assert "IndexError" in timed and "each timed call started from its state after one call" \
        in timed


def test_a_counter_that_recompiles_is_timed_naturally():
    """Timed calls stay natural while the model runs so: a counter guarded by Dynamo keeps
    recompiling, as in the user's loop (no note about steady timing)."""
    result = scan(f"{CASES}:CountsCalls", ScanOptions(input_shapes=("4,16",), timing=QUICK))
    assert not [n for n in result.timings.notes if n.startswith("called again and again")]


def test_a_counter_compares_call_1_with_call_1():
    """The output scales with the call count: compared from the same state, eager and
    compiled agree (before: call 2 against call 1, OUTPUTS DIFFER)."""
    result = scan(f"{CASES}:CountsCalls", ScanOptions(input_shapes=("4,16",), timing=QUICK))
    assert result.timings.correctness.match
    assert result.model_state.every_call == ["calls"]


def test_a_stateless_model_says_nothing():
    result = scan(f"{CASES}:RunningStatsOnly", ScanOptions(input_shapes=("4,16",), train=True))
    assert result.model_state is None and not [n for n in result.notes if "state" in n]


def test_a_fix_of_a_stateful_model_is_verified_from_fresh_state():
    """The `.item()` break in a model stepping its scheduler: every fix compared with the
    original's call 1 from the same state (before: "changes outputs" for every fix)."""
    fixes = fixes_in_process(f"{CASES}:SteppedInForward", "4,16")
    assert fixes and not [f for f in fixes if f["status"] == "changes outputs"], fixes
    assert any(f["status"] in GAINED and f["outputs_match"] for f in fixes), fixes


def test_a_later_call_failing_says_the_first_succeeded(tmp_path):
    """State outside the model (breakscan cannot put it back): exit 3, one line saying call 1
    with the same inputs succeeded, no --input-shape hint."""
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{CASES}:FailsOnSecondCallOutside", "-s", "4,16", "-f", "json", "-o",
                   str(dest))
    _, line = locate('raise RuntimeError("the ring buffer is full")', CASES)
    assert proc.returncode == 3, proc.stderr
    (error,) = [x for x in proc.stderr.splitlines() if x.startswith("breakscan: error:")]
    assert error == (f"breakscan: error: FailsOnSecondCallOutside.forward (call 2) failed: "
                     f"RuntimeError: the ring buffer is full at {shown(CASES)}:{line}; "
                     "call 1 with the "
                     "same inputs succeeded")
    assert "--input-shape" not in proc.stderr


def test_json_names_the_state(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{CASES}:CountsCalls", "-s", "4,16", "-f", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(dest.read_text())
    assert doc["model_state"] == {"every_call": ["calls"], "first_call_only": [], "known": True}


def test_one_setting_is_credited_to_every_root_cause_it_removes():
    """Issue 44 §2: a setting is tried once per model; the root causes it removes are named
    (JSON `removes`), and none of them is reported as "no fix proposed"."""
    from breakscan import Limits
    from breakscan.fixes.unfixed import unfixed
    from breakscan.fixes.verify import verify_fixes

    options = ScanOptions(input_shapes=("4,16",), timing=QUICK)
    target = f"{CASES}:TwoScalarsOneSetting"
    result = scan(target, options)
    assert len(result.breaks) == 2
    fixes = verify_fixes(target, options, result, Limits(), isolate=False)
    (setting,) = [f for f in fixes if f.fix_id == "capture_scalar_outputs"]
    assert setting.removes == [1, 2] and setting.status == "verified", setting.reason
    assert unfixed(result, fixes) == []


def test_a_warm_up_that_advances_the_models_state_says_so_and_is_not_verified():
    """A first-call-only break guarded by state every call advances (diffusers' Euler step:
    `_step_index` found from the timestep once, then stepped): the warm-up removes the break
    (2 -> 1 graphs) only by leaving the index one step ahead. Its outputs differ from the
    original's call for call, and the reason names the state, never "changes semantics" as if
    the warm-up were a switch meant to change the computation (issue 44 §1)."""
    fixes = fixes_in_process(f"{CASES}:IndexOnFirstStep", "8,16")
    (warm,) = [f for f in fixes if f["fix_id"] == "warm_up"]
    assert (warm["before"]["graph_count"], warm["after"]["graph_count"]) == (2, 1)
    assert warm["status"] == "changes outputs" and not warm["outputs_match"]
    assert warm["reason"].startswith("the warm-up call changed the model's state "
                                     "(`_step_index`) and left it so")
    assert warm["changes"] is None


def test_a_lock_taken_on_first_access_only_is_a_first_call_break_and_warming_up_removes_it():
    """``functools.cached_property`` takes its lock on the first read only. The break is shown
    at the user's line (its frame then runs eagerly on every call, as Dynamo skipped it), but
    the lock's line runs on the first call alone: the break is ``first_only`` with its split
    kept, the advice says to read the property (or call the model) before compiling, never
    "take the lock in the caller", and the warm-up is proposed and removes the break
    (issue 45 §2)."""
    fixes = fixes_in_process(f"{CASES}:CachedTable", "4,16")
    (warm,) = [f for f in fixes if f["fix_id"] == "warm_up"]
    assert warm["outputs_match"] and warm["status"] != "changes outputs", warm
    before, after = warm["before"], warm["after"]
    assert (before["frames_run_eagerly_per_call"], after["frames_run_eagerly_per_call"]) == (1, 0)
    assert (before["breaks"], after["breaks"]) == (1, 0)
    from breakscan import ScanOptions, scan

    result = scan(f"{CASES}:CachedTable", ScanOptions(input_shapes=("4,16",)))
    (brk,) = result.breaks
    assert brk.calls == "first_only" and brk.call_chain[-1].function == "__get__"
    assert result.later_call.graph_break_count == 0 and result.later_call.kept_splits == 1
    assert "cached_property" in brk.suggestion and "caller" not in brk.suggestion, brk.suggestion
