"""Impact: how often each break fires per call, what it costs with --time, how breaks rank."""

from __future__ import annotations

from breakscan import scan
from breakscan.options import TimingOptions

from conftest import FIXTURES, SAMPLES

LAYERS = f"{FIXTURES / 'impact_models.py'}:LayersAndPrint"


def test_a_per_layer_break_fires_once_per_layer_and_ranks_above_a_single_one():
    result = scan(LAYERS, input_shapes=["8,16"])
    s = result.summary
    assert (s.graph_count, s.graph_break_count) == (3, 2)  # unique: each counted once
    # per call: head graph, then 12 × (block graph + resume graph); 12 breaks + the print
    assert (s.graph_calls_per_call, s.eager_gaps_per_call) == (25, 13)
    assert s.frames_run_eagerly_per_call == 1 and s.runtime_calls == 3
    first, second = result.breaks
    assert first.code.startswith("if h.mean() > 10:") and first.fires_per_call == 12
    assert second.code.startswith('print("after head")') and second.fires_per_call == 1
    # frames still point at the break they resume after, through the re-ranking
    for frame in result.frames:
        if frame.break_index is not None:
            assert frame.resume_line in [result.breaks[frame.break_index].line] + [
                f.line for f in result.breaks[frame.break_index].call_chain]


def test_a_break_on_the_first_call_only_fires_zero_times_in_the_steady_state():
    result = scan(f"{SAMPLES / 'first_call.py'}:WarnOnce", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.calls == "first_only"
    assert brk.fires_per_call == 0
    assert result.summary.eager_gaps_per_call == 0


def test_time_costs_each_break_within_the_time_outside_graphs_and_ranks_by_cost():
    result = scan(LAYERS, input_shapes=["8,16"],
                  timing=TimingOptions(max_run_time=0.1, fullgraph=False))
    t = result.timings
    assert t.outside_s_per_call is not None and t.outside_s_per_call > 0
    costs = [b.cost_s_per_call for b in result.breaks]
    assert all(c is not None and c >= 0 for c in costs)
    assert sum(costs) <= t.outside_s_per_call <= t.compiled.median_s
    # inside + outside is the timed call: the profiler's shares, never its slowed-down times
    assert abs(t.graph_s_per_call + t.outside_s_per_call - t.compiled.median_s) < 1e-12
    # ranked by measured cost: the per-layer break's 12 gaps outweigh the print's one
    assert costs == sorted(costs, reverse=True)
    assert result.breaks[0].code.startswith("if h.mean() > 10:") and costs[0] > 0
    assert result.breaks[0].compile_cost_s is not None  # its resume frame was compiled


def test_the_test_suite_helpers_gate_graph_calls_per_call():
    import sys

    import pytest
    import torch

    sys.path.insert(0, str(SAMPLES))
    try:
        from per_layer_branch import PerLayerBranch, PerLayerWhere
    finally:
        sys.path.remove(str(SAMPLES))
    from breakscan import GraphBreakError, assert_max_graph_breaks

    x = torch.randn(8, 16)
    result = assert_max_graph_breaks(PerLayerWhere(), x, max_graph_calls=1)
    assert result.summary.graph_calls_per_call == 1
    with pytest.raises(GraphBreakError, match="max_graph_calls 48 > limit 1"):
        assert_max_graph_breaks(PerLayerBranch(), x, max_graph_calls=1)
