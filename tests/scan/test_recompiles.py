"""Recompiles over several input sets (--vary-batch / --shapes), on live Dynamo."""

from __future__ import annotations

import re

import pytest
import torch

from breakscan import scan
from breakscan.errors import UsageError

from conftest import SAMPLES, locate

SHAPE = f"{SAMPLES}/shape_branch.py"


def _expected(name: str) -> dict[str, str]:
    source = (SAMPLES / "shape_branch.py").read_text()
    block = source.split(f"class {name}", 1)[1].split("Expected with --vary-batch 2,4,16:", 1)[1]
    return dict(re.findall(r"^\s*(\w+): (.+?)\s*$", block.split('"""', 1)[0], re.M))


@pytest.mark.parametrize("name", ["ShapeBranch", "NoShapeBranch"])
def test_vary_batch_matches_docstring(name):
    facts = _expected(name)
    result = scan(f"{SHAPE}:{name}", input_shapes=["8,16"], vary_batch="2,4,16")
    report = result.recompiles
    assert report.input_sets == [[[2, 16]], [[4, 16]], [[16, 16]]]
    assert result.summary.recompile_count == len(report.recompiles) == int(facts["recompiles"])
    assert report.dynamic_recompile_count == int(facts["recompiles_dynamic"])
    assert report.dynamic_graph_count < report.graph_count
    assert "dynamic=True (verified" in report.suggestion
    first = report.recompiles[0]
    assert first.function == "forward" and first.input_set == 1
    assert first.reasons == ["tensor 'x' size mismatch at index 0. expected 2, actual 4"]
    if "guard_at" in facts:
        file, line = locate(facts["guard_at"], SAMPLES / "shape_branch.py")
        assert f"{file}:{line}" in report.recompiles[1].guard_lines
        assert f"{file}:{line}" in report.suggestion


def test_batch_of_one_is_always_specialised():
    result = scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], vary_batch="1,4,16")
    report = result.recompiles
    assert len(report.recompiles) == 2
    # The size-1 set is not replayed with dynamic=True (it would compile its own graph anyway);
    # the other two are, and the shape branch still recompiles between them.
    assert (report.specialised_sets, report.dynamic_replayed) == ([0], 2)
    assert report.dynamic_recompile_count == 1
    assert "sizes 0 and 1" in report.suggestion and "does not remove it" in report.suggestion


def test_shapes_option_and_its_errors():
    result = scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], shapes=["12,16", "3,16"])
    # Exactly the listed sets, as for --vary-batch: the scanned 8,16 is not added.
    assert result.recompiles.input_sets == [[[12, 16]], [[3, 16]]]
    batches = scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], vary_batch="2,4")
    assert batches.recompiles.input_sets == [[[2, 16]], [[4, 16]]]
    with pytest.raises(UsageError, match="gives 2 input"):
        scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], shapes=["4,16 4,16"])
    with pytest.raises(UsageError, match="not both"):
        scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], shapes=["4,16"], vary_batch="2,4")
    with pytest.raises(UsageError, match="--vary-batch"):
        scan(f"{SHAPE}:ShapeBranch", input_shapes=["8,16"], vary_batch="0,4")


def test_global_mutation_hits_the_recompile_limit():
    from conftest import FIXTURES

    limit = torch._dynamo.config.recompile_limit
    shapes = ["4"] * (limit + 2)
    result = scan(f"{FIXTURES}/models/global_state.py:AppendsToGlobal", input_shapes=["4"],
                  shapes=shapes)
    report = result.recompiles
    assert len(report.recompiles) >= limit - 1  # every call fails the guard on len(SEEN)
    assert report.limit_hits and report.limit_hits[0].startswith("forward")
    assert "recompile limit" in report.suggestion and "not about shapes" in report.suggestion


def test_no_recompiles_without_shape_changes():
    result = scan(f"{SHAPE}:NoShapeBranch", input_shapes=["8,16"], shapes=["8,16"])
    assert result.summary.recompile_count == 0 and result.recompiles.suggestion is None


# -- the recompile check does not waste time ----------------------------------------------------

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
