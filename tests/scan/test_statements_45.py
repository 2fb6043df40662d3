"""Issue 45: sentences the numbers or the code contradict, each against a real scan."""

from __future__ import annotations

import pytest

from breakscan import scan

from conftest import FIXTURES

MODELS = FIXTURES / "models" / "statements_45.py"


@pytest.mark.parametrize("name, compiled_before", [("FirstStatementBreak", False),
                                                   ("ComputedThenBreak", True)])
def test_the_code_before_a_resume_ran_compiled_only_when_a_graph_holds_it(name, compiled_before):
    result = scan(f"{MODELS}:{name}", input_shapes=["8,16"])
    (skipped,) = [b for b in result.breaks if b.frame_skipped]
    assert "Dynamo's resume function" in skipped.skip_cause
    assert ("the code before that line ran compiled" in skipped.skip_cause) == compiled_before
    assert ("no graph was compiled from the code before that line" in skipped.skip_cause) == \
        (not compiled_before)
    assert (result.summary.graph_count > 0) == compiled_before
