"""Statistics for before/after timings: medians with bootstrap intervals, and a verdict.

Before and after are timed in one process, interleaved in blocks (``interleaved.time_interleaved``);
each block gives one seconds-per-call sample of each. The blocks are paired (taken side by side,
under the same load), so the bootstrap resamples block indices and keeps the pairs together.
Pure Python and seeded: the same samples always give the same interval.
"""

from __future__ import annotations

import random
import statistics

from .verdicts import Interval

CONFIDENCE = 0.95
RESAMPLES = 2000

FASTER, SLOWER, SAME = "faster", "slower", "no measurable difference"


def _percentiles(values: list[float], confidence: float) -> tuple[float, float]:
    values = sorted(values)
    tail = (1.0 - confidence) / 2
    low = values[int(tail * (len(values) - 1))]
    high = values[int(round((1.0 - tail) * (len(values) - 1)))]
    return low, high


def median_interval(samples: list[float], *, confidence: float = CONFIDENCE,
                    resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """The median of ``samples`` and its percentile-bootstrap interval."""
    if not samples:
        raise ValueError("no samples")
    rng = random.Random(seed)
    n = len(samples)
    medians = [statistics.median(rng.choices(samples, k=n)) for _ in range(resamples)]
    low, high = _percentiles(medians, confidence)
    value = statistics.median(samples)
    return Interval(value, min(low, value), max(high, value))


def speedup_interval(before: list[float], after: list[float], *,
                     confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                     seed: int = 0) -> Interval:
    """median(before) / median(after) and its paired-bootstrap interval (> 1: after is faster)."""
    if len(before) != len(after) or not before:
        raise ValueError("before and after need the same, non-zero number of blocks")
    rng = random.Random(seed)
    n = len(before)
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        after_median = statistics.median(after[i] for i in picks)
        if after_median > 0:
            ratios.append(statistics.median(before[i] for i in picks) / after_median)
    value = statistics.median(before) / statistics.median(after)
    low, high = _percentiles(ratios, confidence) if ratios else (value, value)
    return Interval(value, min(low, value), max(high, value))


def verdict(speedup: Interval) -> str:
    """``faster`` or ``slower`` only when the whole interval says so; otherwise no difference
    that this measurement can tell from noise."""
    if speedup.low > 1.0:
        return FASTER
    if speedup.high < 1.0:
        return SLOWER
    return SAME


def spread(samples: list[float]) -> float:
    """Interquartile range over median (0 for fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4)
    median = statistics.median(samples)
    return (q3 - q1) / median if median else 0.0
