"""The pytest plugin, driven by pytester: it catches a break and passes the fixed twin."""

from __future__ import annotations

from conftest import SAMPLES

pytest_plugins = ["pytester"]


def test_plugin_fails_on_break_and_passes_twin(pytester):
    pytester.makepyfile(test_models=f"""
        import sys
        import pytest
        import torch
        sys.path.insert(0, {str(SAMPLES)!r})
        from item_logging import LogInsideForward, LogOutsideForward

        @pytest.mark.breakscan(max_breaks=0)
        def test_broken(breakscan):
            breakscan(LogInsideForward(), torch.randn(8, 16))

        def test_fixed(breakscan):
            result = breakscan(LogOutsideForward(), torch.randn(8, 16), max_graphs=1)
            assert result.summary.graph_count == 1

        def test_helper_directly():
            import breakscan
            with pytest.raises(breakscan.GraphBreakError) as info:
                breakscan.assert_max_graph_breaks(LogInsideForward(), torch.randn(8, 16),
                                                  fail_on="item", max_breaks=None)
            assert "fail_on:item 1 > limit 0" in str(info.value)
    """)
    result = pytester.runpytest_subprocess()  # loaded through the pytest11 entry point
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*breakscan: LogInsideForward failed its graph-break gate: max_breaks 1 > limit 0*",
        "*1. item (GB0124) at *item_logging.py:30 in forward()*",
        "*self.last_mean = h.mean().item()*",
        "*fix: Keep the value as a 0-d tensor*",
    ])
    assert "Traceback" not in result.stdout.str()
