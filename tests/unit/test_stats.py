"""The before/after statistics on known samples: intervals and verdicts."""

from __future__ import annotations

import random

import pytest

from breakscan.model.stats import (FASTER, SAME, SLOWER, Interval, median_interval, speedup_interval,
                             spread, verdict)


def _blocks(median: float, jitter: float, n: int = 30, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [median * (1 + rng.uniform(-jitter, jitter)) for _ in range(n)]


def test_the_median_interval_holds_the_median_and_narrows_with_less_noise():
    tight = median_interval(_blocks(100e-6, 0.01))
    loose = median_interval(_blocks(100e-6, 0.30))
    for est in (tight, loose):
        assert est.low <= est.value <= est.high
        assert 90e-6 < est.value < 110e-6
    assert tight.high - tight.low < loose.high - loose.low
    assert median_interval([5.0, 5.0, 5.0]) == Interval(5.0, 5.0, 5.0)


def test_a_clear_gain_is_faster_with_its_ratio_inside_the_interval():
    before, after = _blocks(200e-6, 0.05, seed=1), _blocks(100e-6, 0.05, seed=2)
    est = speedup_interval(before, after)
    assert 1.8 < est.low <= est.value <= est.high < 2.2
    assert verdict(est) == FASTER


def test_a_clear_loss_is_slower():
    est = speedup_interval(_blocks(100e-6, 0.05, seed=1), _blocks(150e-6, 0.05, seed=2))
    assert est.high < 1.0
    assert verdict(est) == SLOWER


def test_overlapping_noise_is_no_measurable_difference():
    est = speedup_interval(_blocks(100e-6, 0.30, seed=1), _blocks(101e-6, 0.30, seed=2))
    assert est.low < 1.0 < est.high
    assert verdict(est) == SAME


def test_the_bootstrap_is_seeded_and_pairs_blocks():
    before, after = _blocks(100e-6, 0.2, seed=3), _blocks(90e-6, 0.2, seed=4)
    assert speedup_interval(before, after) == speedup_interval(before, after)
    # a shared drift (both slowed by the same load in the same blocks) cancels out in pairs
    drift = [1 + k / 10 for k in range(30)]
    est = speedup_interval([100e-6 * d for d in drift], [80e-6 * d for d in drift])
    assert est == Interval(1.25, 1.25, 1.25) or abs(est.high - est.low) < 1e-9
    with pytest.raises(ValueError):
        speedup_interval([1.0], [1.0, 2.0])


def test_spread_is_the_iqr_over_the_median():
    assert spread([1.0]) == 0.0
    assert spread([1.0, 1.0, 1.0, 1.0]) == 0.0
    assert spread([90.0, 95.0, 100.0, 105.0, 110.0]) > 0.1


def test_a_bound_shows_which_side_of_1_it_is_on():
    from breakscan.report.wording import bound

    assert (bound(1.2345), bound(1.003), bound(0.9996), bound(1.0)) == \
        ("1.23", "1.003", "0.9996", "1.00")
