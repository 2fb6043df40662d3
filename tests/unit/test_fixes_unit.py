"""What counts as a fix's gain, judged on its numbers (no torch, no process)."""

from __future__ import annotations


def test_fewer_break_sites_alone_is_no_gain():
    """The OLMoE case: a setting that only moves a break down a line (graphs 11 -> 11, the
    same returns to Python) is no gain; each measure that drops is one."""
    import dataclasses

    from breakscan.fixes.judge import gained
    from breakscan.verdicts import FixMetrics

    before = FixMetrics(graph_count=11, breaks=2, recompiles=None, compiled_s=None, speedup=None,
                        graph_calls_per_call=11, eager_gaps_per_call=10,
                        frames_run_eagerly_per_call=1)
    moved = dataclasses.replace(before, breaks=1)
    assert not gained(before, moved)
    for field, value in (("graph_count", 10), ("graph_calls_per_call", 10),
                         ("eager_gaps_per_call", 9), ("frames_run_eagerly_per_call", 0)):
        assert gained(before, dataclasses.replace(moved, **{field: value})), field
    assert gained(dataclasses.replace(before, recompiles=3),
                  dataclasses.replace(moved, recompiles=1))
