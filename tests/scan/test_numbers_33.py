"""Numbers that must not contradict themselves (issue 33): zero kernels is a measurement, a
timing whose spread exceeds its median is no speedup."""

from __future__ import annotations

import pytest

from breakscan import ProgramOptions, run_program, scan
from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions
from breakscan.pipeline.measure import _ratios
from breakscan.model.verdicts import Timing, TimingReport

from conftest import FIXTURES

CASES = f"{FIXTURES}/models/numbers_cases.py"
NO_GRAPH = FIXTURES / "programs" / "numbers_no_graph.py"
ZERO = {"max_kernels": (0, True, ""), "fail_on:fallback": (0, True, "")}


def _checks(result, limit):
    gate = evaluate(result, GateOptions(max_kernels=limit, fail_on=("fallback",)))
    return {c.name: (c.actual, c.passed, c.detail) for c in gate.checks}


@pytest.mark.parametrize("name, limit", [("Identity", 0), ("LoopSkipsFrame", 100)])
def test_a_model_with_no_kernels_passes_max_kernels(name, limit):
    result = scan(f"{CASES}:{name}", input_shapes=["4,4"], kernels=True)
    assert result.summary.kernels_per_call == 0
    assert _checks(result, limit) == ZERO


def test_without_kernels_the_gate_says_to_ask_for_them():
    result = scan(f"{CASES}:Identity", input_shapes=["4,4"])
    assert _checks(result, 0) == {
        "max_kernels": (-1, False, "not measured (run with --kernels)"),
        "fail_on:fallback": (-1, False, "not measured (run with --kernels)")}


@pytest.mark.parametrize("mode, regions", [("identity", 1), ("none", 0)])
def test_a_program_whose_compiled_code_launches_no_kernel_passes(mode, regions):
    """`identity`: a compiled function Dynamo makes no graph of; `none`: nothing compiled."""
    result = run_program(ProgramOptions(script=str(NO_GRAPH), args=(mode,), kernels=True,
                                        quiet=True))
    assert result.program.exit_code == 0 and len(result.program.regions) == regions
    assert result.summary.kernels_per_call == 0
    assert _checks(result, 0) == ZERO


def _timing(median_us: float, iqr_us: float) -> Timing:
    return Timing(median_s=median_us * 1e-6, iqr_s=iqr_us * 1e-6, runs=100, threads=1,
                  noisy=iqr_us > 0.1 * median_us)


def test_measure_drops_a_speedup_whose_timing_spreads_over_its_median():
    report = TimingReport(device="cpu", threads=1, backend="inductor", mode=None,
                          eager=_timing(100, 5), compiled=_timing(27, 243),
                          fullgraph=_timing(20, 100), speedup=100 / 27)
    _ratios(report)
    assert report.speedup is None
    assert report.notes == [
        "speedup not measured: the compiled timing's spread (IQR) is 9.0× its median; rerun on "
        "a quiet machine or with a longer --max-run-time",
        "fullgraph=True speedup not measured: the fullgraph=True timing's spread (IQR) is 5.0× "
        "its median; rerun on a quiet machine or with a longer --max-run-time"]
    report = TimingReport(device="cpu", threads=1, backend="inductor", mode=None,
                          eager=_timing(100, 5), compiled=_timing(27, 5))
    _ratios(report)
    assert report.speedup == pytest.approx(100 / 27) and report.notes == []
