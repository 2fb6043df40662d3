"""Issue 45: sentences the numbers or the code contradict, each against a real scan."""

from __future__ import annotations

import pytest

from breakscan import scan

from conftest import FIXTURES, locate, on_torch

MODELS = FIXTURES / "models" / "statements_45.py"


@pytest.mark.parametrize("name, compiled_before, graphs", [
    ("FirstStatementBreak", False, 0), ("ComputedThenBreak", True, 1),
    ("OuterCallsInner", False, 1)])  # its one graph: prepare(), earlier in the file
def test_the_code_before_a_resume_ran_compiled_only_when_a_graph_holds_it(name, compiled_before,
                                                                        graphs):
    """torch 2.15 skips InnerFirstWith's whole forward instead (no resume function): then it
    says so and says nothing of code before the line."""
    result = scan(f"{MODELS}:{name}", input_shapes=["8,16"])
    (skipped,) = [b for b in result.breaks if b.frame_skipped]
    if name == "OuterCallsInner" and on_torch("2.15+"):
        assert "it skipped the whole function forward()" in skipped.skip_cause
        assert "before that line" not in skipped.skip_cause
        assert result.summary.graph_count == graphs
        return
    assert "Dynamo's resume function" in skipped.skip_cause
    assert ("the code before that line ran compiled" in skipped.skip_cause) == compiled_before
    assert ("no graph was compiled from the code before that line" in skipped.skip_cause) == \
        (not compiled_before)
    assert result.summary.graph_count == graphs


def test_a_break_inside_assert_close_is_at_the_call_not_where_its_argument_was_computed():
    """The data-dependent branch is inside torch.testing: the line to change is the user's
    `assert_close(...)` call, not the line that computed `fused`."""
    cases = FIXTURES / "models" / "strategy_cases.py"
    result = scan(f"{cases}:AssertClose", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.code == "torch.testing.assert_close(fused, reference)"
    assert brk.line == cases.read_text().splitlines().index(
        "        torch.testing.assert_close(fused, reference)") + 1
    assert brk.sites == [] and brk.category == "data_dependent_branch"


def _line(code: str) -> int:
    return MODELS.read_text().splitlines().index(code) + 1


def test_each_branch_is_a_root_cause_at_its_own_line():
    """Issue 45 §1 (LCM's `prev_timestep >= 0`): a branch whose value crossed an earlier break
    was moved to the line that computed the value, next to the first branch left at its line:
    two root causes at other lines, the per-call counts split. Each branch is its own root
    cause, at the line a person changes."""
    (lone,) = scan(f"{MODELS}:LoneBranch", input_shapes=["8,16"]).breaks
    assert (lone.line, lone.sites) == (_line("        y = x * 2 if s >= 0 else x"), [])
    result = scan(f"{MODELS}:TwoBranchesOneValue", input_shapes=["8,16"])
    assert [(b.code, b.sites, b.fires_per_call) for b in result.breaks] == [
        ("y = x * 2 if s >= 0 else x", [], 1.0), ("z = y + 1 if s < 10 else y", [], 1.0)]


def test_a_dict_comprehension_over_item_is_one_root_cause_with_its_follow_on_record():
    """Two records at one line, the second Dynamo's own "follows from an earlier break" (GB0092):
    one root cause, firing once per call, that keeps what the second says (the rest of forward
    ran eagerly). Before: two root causes on one line, one of them '-' per call."""
    result = scan(f"{MODELS}:LoggedScalars", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert (brk.category, brk.line, brk.records) == ("item", locate("logged = {k: float(v) for k, v in parts.items()}", MODELS)[1], 2)
    assert result.summary.break_records == 2
    assert [r.split()[0] for r in brk.follow_on_records] == ["GB0092"]
    assert brk.skip_kind == "rest_of_frame" and "ran the rest of the function eagerly" in \
        brk.skip_cause
    assert brk.fires_per_call == 1.0


def test_the_function_named_as_run_eagerly_is_the_one_dynamo_skipped():
    """A break inside copy.deepcopy (the standard library) under a property: shown at the
    property's line, the user's, but the function Dynamo skipped, and that ran eagerly, is
    decode() (its compilation metrics fail at copy.py, not at the line shown); it said
    init_noise_sigma(), the property, which Dynamo compiled on its own."""
    result = scan(f"{MODELS}:DecodeSkipped", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert (brk.function, brk.line) == ("init_noise_sigma", locate(
        "return copy.deepcopy(self.scheduler).init_noise_sigma", MODELS)[1])
    decode = locate("def decode(self, latents):", MODELS)[1]
    assert brk.skip_cause == ("Dynamo could not resume from this break: it skipped the whole "
                              f"function decode() (statements_45.py:{decode}), which ran eagerly")
    (skipped,) = [f for f in result.frames if f.skipped]
    assert skipped.name == "decode"
