"""The pytest plugin, driven by pytester: it catches a break and passes the fixed twin."""

from __future__ import annotations

import pytest

from conftest import SAMPLES, locate

ITEM_LINE = locate("self.last_mean = h.mean().item()", SAMPLES / "item_logging.py")[1]

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
        f"*1. item (GB0124) at *item_logging.py:{ITEM_LINE} in forward()*",
        "*self.last_mean = h.mean().item()*",
        "*fix: Keep the value as a 0-d tensor*",
    ])
    assert "Traceback" not in result.stdout.str()


def test_only_the_limits_given_apply_and_a_failure_is_reported_once(pytester):
    """The README's own example: max_graphs=2, fail_on="item" on a model with one non-item
    break passes (no hidden max_breaks=0); a failure is one message, with no chained traceback
    and no Dynamo trace lines in the captured log."""
    pytester.makepyfile(test_limits=f"""
        import sys
        import pytest
        import torch
        sys.path.insert(0, {str(SAMPLES)!r})
        from print_in_forward import PrintInForward
        from item_logging import LogInsideForward

        def test_other_limits_only(breakscan):
            result = breakscan(PrintInForward(), torch.randn(8, 16), max_graphs=2,
                               fail_on="item")
            assert result.summary.graph_break_count == 1

        @pytest.mark.breakscan(fail_on="item")
        def test_marker_limit_fails(breakscan):
            breakscan(LogInsideForward(), torch.randn(8, 16))

        def test_no_limit_means_no_breaks(breakscan):
            breakscan(PrintInForward(), torch.randn(8, 16))
    """)
    result = pytester.runpytest_subprocess("--log-level=DEBUG")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "During handling of the above exception" not in out
    # Counted in the failure reports only: pytest's short summary repeats the first line, in
    # full when the terminal is wide (COLUMNS), which is pytest's doing, not the plugin's.
    reports = [line for line in result.stdout.lines if line.startswith("breakscan: ")]
    assert reports == [
        "breakscan: LogInsideForward failed its graph-break gate: fail_on:item 1 > limit 0",
        "breakscan: PrintInForward failed its graph-break gate: max_breaks 1 > limit 0"]
    assert "torch.__trace" not in out


@pytest.mark.parametrize("dist", ["load", "loadfile"])
def test_a_model_zoo_module_over_the_config_targets_runs_under_xdist(pytester, dist):
    """The README's model-zoo pattern: one test per [tool.breakscan] target, spread over
    workers with `pytest -n 2` (each target scanned in its own process, gated like `check`);
    with `--dist load`, beside it a module of `breakscan` fixture tests in the same session."""
    pytest.importorskip("xdist")
    pytester.makefile(".toml", pyproject=f"""
        [tool.breakscan]
        max-breaks = 0

        [[tool.breakscan.targets]]
        target = "{SAMPLES}/item_logging.py:LogOutsideForward"
        input-shape = ["8,16"]

        [[tool.breakscan.targets]]
        target = "{SAMPLES}/tensor_branch.py:TensorWhere"
        input-shape = ["8,16"]

        [[tool.breakscan.targets]]
        target = "{SAMPLES}/tensor_branch.py:TensorIf"
        input-shape = ["8,16"]
    """)
    pytester.makepyfile(test_model_zoo="""
        import pytest
        from breakscan.testing.assertions import assert_target, load_targets

        @pytest.mark.parametrize("entry", load_targets("pyproject.toml"), ids=str)
        def test_compiles_within_its_gate(entry):
            assert_target(entry)
    """)
    if dist == "load":
        _fixture_tests(pytester)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist", "--dist", dist)
    result.assert_outcomes(passed=4 if dist == "load" else 2, failed=2 if dist == "load" else 1)
    result.stdout.fnmatch_lines(["*2 workers*"])
    out = result.stdout.str()
    assert "tensor_branch.py:TensorIf failed its graph-break gate: max_breaks 1 > limit 0" in out
    if dist == "load":
        assert "breakscan: TensorIf failed its graph-break gate: max_breaks 1 > limit 0" in out


def _fixture_tests(pytester) -> None:
    """Tests of the `breakscan` fixture, two clean models and a broken one."""
    pytester.makepyfile(test_fixture_zoo=f"""
        import sys
        import pytest
        import torch
        sys.path.insert(0, {str(SAMPLES)!r})
        import item_logging, tensor_branch

        @pytest.mark.parametrize("model", [item_logging.LogOutsideForward,
                                           tensor_branch.TensorWhere])
        def test_clean(breakscan, model):
            assert breakscan(model(), torch.randn(8, 16)).summary.graph_count == 1

        def test_broken(breakscan):
            breakscan(tensor_branch.TensorIf(), torch.randn(8, 16))
    """)
