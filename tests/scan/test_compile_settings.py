"""The user's own torch.compile settings (--dynamic, --compile-option, --backend, --mode) reach
the capture, the run-time counts, the recompile check, the timings and the gate."""

from __future__ import annotations

import pytest

from breakscan import scan
from breakscan.options import TimingOptions

from conftest import SAMPLES

NO_BRANCH = f"{SAMPLES / 'shape_branch.py'}:NoShapeBranch"


def test_dynamic_false_keeps_every_size_static():
    result = scan(NO_BRANCH, input_shapes=["8,16"], vary_batch="2,4,16", dynamic=False)
    assert result.summary.recompile_count == 2  # each new batch size compiles again
    assert result.compile_settings["dynamic"] is False


def test_compile_options_reach_torch_compile_in_the_timings():
    """An option torch.compile does not know fails the compile: proof the options got there."""
    result = scan(NO_BRANCH, input_shapes=["8,16"], compile_options=["no_such_option=1"],
                  timing=TimingOptions(max_run_time=0.05, fullgraph=False))
    assert result.compile_settings["options"] == {"no_such_option": 1}
    assert "no_such_option" in (result.timings.compile_error or "")


def test_the_pytest_helpers_take_dynamic():
    import sys

    import torch

    sys.path.insert(0, str(SAMPLES))
    try:
        from shape_branch import NoShapeBranch
    finally:
        sys.path.remove(str(SAMPLES))
    from breakscan import assert_max_graph_breaks

    result = assert_max_graph_breaks(NoShapeBranch(), torch.randn(8, 16), dynamic=True)
    assert result.compile_settings["dynamic"] is True
    with pytest.raises(Exception, match="--dynamic takes true or false"):
        assert_max_graph_breaks(NoShapeBranch(), torch.randn(8, 16), dynamic="sometimes")
