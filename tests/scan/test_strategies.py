"""Issue 44 §3: the strategies beyond the catalogue, verified end to end on a new user's own
models (tests/fixtures/models/strategy_cases.py): a host-only statement guarded, host code done
by torch ops, a container indexed by a tensor looked up by a tensor index. Each fix's job runs
in this process, as --fix runs it in a child (same planning, job and judgement)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, GAINED, ROOT, fixes_in_process

CASES = FIXTURES / "models" / "strategy_cases.py"
SAMPLES = ROOT / "sample_models"


@pytest.mark.parametrize("name, fix_id, graphs, title", [
    ("FrameProbe", "guard_side_effect", (1, 1),
     "run `self.callers.append(sys._getframe(1).f_code.co_name)` only eagerly"),
    ("AssertClose", "guard_side_effect", (2, 1),
     "run `torch.testing.assert_close(fused, reference)` only eagerly"),
    ("SavesInForward", "guard_side_effect", (2, 1), "run `torch.save(h.detach(), self.saved)`"),
    ("IsFinite", "torch_equivalent", (2, 1),
     "math.isfinite -> torch.isfinite, and the `if` as torch.where"),
    ("ApplyInPlace", "torch_equivalent", (2, 1),
     "apply_(lambda) -> copy_(the lambda on the whole tensor)"),
    ("StorageBytes", "torch_equivalent", (2, 1),
     "untyped_storage().nbytes() -> numel() * element_size() (equal when the tensor owns its "
     "storage)"),
    ("DictByInt", "tensor_lookup", (2, 1), "look up `self.scale[int(c)]` by a tensor index"),
    ("ModuleDictByTensor", "tensor_lookup", (2, 1),
     "look up `self.heads[str(task_id.item())](x)` by a tensor index: every entry called"),
])
def test_the_strategy_removes_the_break_with_the_same_outputs(name, fix_id, graphs, title):
    """The break is gone (fewer breaks; the graph counts as measured), the outputs match the
    original's, and the status is the proof's: verified, or slower when the same-process timing
    says so (a timing: the test asserts the proof, never the speed)."""
    fixes = fixes_in_process(f"{CASES}:{name}", "8,16")
    (fix,) = [f for f in fixes if f["fix_id"] == fix_id and f["diff"]]
    assert fix["title"].startswith(title), fix["title"]
    assert fix["outputs_match"], fix["reason"]
    assert fix["before"]["breaks"] == 1 and fix["after"]["breaks"] == 0, fix["reason"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == graphs
    assert fix["status"] in GAINED, fix["reason"]


@pytest.mark.parametrize("name", ["LazyScale", "WarnOnce"])
def test_a_first_access_construct_is_warmed_up_before_compiling(name):
    """A scale set from the first batch (`.item()` once), a warning issued once: only the first
    call breaks. One eager call before compiling (the warm-up a user writes) and the first
    compiled call has no break: 2 -> 1 graphs, the same outputs as the original's first call."""
    fixes = fixes_in_process(f"{SAMPLES}/first_call.py:{name}", "8,16")
    (fix,) = [f for f in fixes if f["fix_id"] == "warm_up"]
    assert fix["kind"] == "switch" and fix["setting"].startswith("model(*example_inputs)")
    assert fix["title"].startswith("warm up: call the model once, eagerly, before compiling it "
                                   "(the first call alone breaks at sample_models/first_call.py:")
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
    assert fix["outputs_match"] and fix["status"] in GAINED, fix["reason"]
    assert fix["changes"] is None  # it keeps what the model computes


def test_an_escape_hatch_with_a_data_dependent_length_is_verified_with_its_setting():
    """np.trim_zeros in a helper: a custom_op with a dynamic-size fake and
    capture_dynamic_output_shape_ops, verified together (4 graphs -> 1 on 2.13, outputs equal)."""
    fixes = fixes_in_process(f"{FIXTURES}/models/escape_dynamic.py:TrimmedSignal")
    (fix,) = [f for f in fixes if f["fix_id"] == "escape_hatch"]
    assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
    assert fix["setting"] == "torch._dynamo.config.capture_dynamic_output_shape_ops = True"
    assert "new_dynamic_size()" in fix["diff"]
    assert fix["before"]["graph_count"] > 1 and fix["before"]["breaks"] == 1
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)


def test_a_fork_rng_the_caller_cannot_enter_is_removed_and_labelled_as_a_change():
    """fork_rng(enabled=self.fork): the caller cannot enter it for the model (hoist_context is
    refused: not constants). drop_fork_rng removes it, 1 frame run eagerly -> 0, proved compiled
    against its own eager run, and says what changes: its draws then advance the generator."""
    fixes = fixes_in_process(f"{CASES}:ForkedSeededNoise")
    (hoist,) = [f for f in fixes if f["fix_id"] == "hoist_context"]
    assert hoist["status"] == "not tried" and "not constants" in hoist["reason"]
    (drop,) = [f for f in fixes if f["fix_id"] == "drop_fork_rng"]
    assert drop["title"].startswith("remove `with torch.random.fork_rng(enabled=self.fork):` "
                                    "from forward() and keep its block"), drop["title"]
    assert "advance the global generator" in drop["changes"]
    assert (drop["before"]["frames_run_eagerly_per_call"],
            drop["after"]["frames_run_eagerly_per_call"]) == (1, 0)
    assert drop["status"] in ("verified: changes semantics", "slower"), drop["reason"]
    assert drop["verified"] is False  # a change is never a plain recommendation
    if drop["status"] == "verified: changes semantics":
        assert "Compiled, the rewritten model matches its own eager run" in drop["reason"]


def test_a_fork_rng_around_no_draw_is_removed_without_saying_it_changes_anything():
    """The same rewrite where the block draws nothing: the fixed model draws no random number,
    so nothing it computes changes and the fix is judged on the original's outputs."""
    fixes = fixes_in_process(f"{CASES}:ForkedNoDraw")
    (drop,) = [f for f in fixes if f["fix_id"] == "drop_fork_rng"]
    assert drop["changes"] is None
    assert drop["outputs_match"] and drop["status"] in GAINED, drop["reason"]


def test_an_escape_hatchs_fake_is_read_off_the_eager_run_when_the_source_does_not_show_it():
    """np.digitize in a helper: the source does not say what its result is shaped like; one
    eager call shows it is shaped like `x` (float32 after the cast), so the fake is
    `torch.empty_like(x)`, the diff and title carry it (never the placeholder), and the
    custom_op is verified: the break gone, the same outputs."""
    fixes = fixes_in_process(f"{FIXTURES}/models/escape_observed.py:Bucketed")
    (fix,) = [f for f in fixes if f["fix_id"] == "escape_hatch"]
    assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
    assert "+    return torch.empty_like(x)" in fix["diff"] and "raise RuntimeError" not in \
        fix["diff"], fix["diff"]
    assert fix["title"].endswith("(shaped like `x` on the eager run's 1 call(s))"), fix["title"]
    assert fix["call"] == "torch.empty_like(x)"  # what --write rewrites with
    assert (fix["before"]["breaks"], fix["after"]["breaks"]) == (1, 0)


def test_a_result_shaped_like_no_input_on_the_eager_run_is_not_applicable_and_says_what_it_saw():
    """np.bincount of np.digitize: 10 counts whatever the input, no input to shape a fake like."""
    fixes = fixes_in_process(f"{FIXTURES}/models/escape_observed.py:Histogram")
    (fix,) = [f for f in fixes if f["fix_id"] == "escape_hatch"]
    assert fix["status"] == "not applicable", fix["reason"]
    assert "on the eager run `histogram`'s result (shape [10]) is shaped like none of its " \
           "tensor inputs" in fix["reason"]
