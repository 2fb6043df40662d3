"""Numbers that must not contradict themselves (issue 33): zero kernels is a measurement, a
timing whose spread exceeds its median is no speedup."""

from __future__ import annotations

import pytest

from breakscan import scan
from breakscan.gate import evaluate
from breakscan.options import GateOptions
from breakscan.pipeline.measure import unmeasured_speedup
from breakscan.verdicts import Timing

from conftest import FIXTURES

CASES = f"{FIXTURES}/models/numbers_cases.py"


@pytest.mark.parametrize("name, limit", [("Identity", 0), ("LoopSkipsFrame", 100)])
def test_a_model_with_no_kernels_passes_max_kernels(name, limit):
    result = scan(f"{CASES}:{name}", input_shapes=["4,4"], kernels=True)
    assert result.summary.kernels_per_call == 0
    (check,) = evaluate(result, GateOptions(max_kernels=limit)).checks
    assert (check.name, check.actual, check.passed, check.detail) == ("max_kernels", 0, True, "")


def _timing(median_us: float, iqr_us: float) -> Timing:
    return Timing(median_s=median_us * 1e-6, iqr_s=iqr_us * 1e-6, runs=100, threads=1,
                  noisy=iqr_us > 0.1 * median_us)


def test_a_spread_above_the_median_is_no_speedup():
    steady = _timing(100, 5)
    assert unmeasured_speedup(steady, _timing(27, 5)) is None
    assert unmeasured_speedup(steady, _timing(27, 27)) is None  # equal: still a measurement
    assert unmeasured_speedup(steady, _timing(27, 243)) == (
        "the compiled timing's spread (243.0 µs) exceeds its median (27.0 µs); rerun on a "
        "quiet machine or with a longer --max-run-time")
    assert unmeasured_speedup(_timing(100, 900), steady).startswith("the eager timing's")
    assert unmeasured_speedup(steady, None) is None
