"""Statistics for before/after timings: medians with bootstrap intervals, a verdict, and when
a ratio of two timings is no measurement at all.

Before and after are timed in one process, interleaved in blocks (``interleaved.time_interleaved``);
each block gives one seconds-per-call sample of each. The blocks are paired (taken side by side,
under the same load), so the bootstrap resamples block indices and keeps the pairs together.
Pure Python and seeded: the same samples always give the same interval.
"""

from __future__ import annotations

import math
import random
import statistics

from .verdicts import ABTiming, Interval, Timing

CONFIDENCE = 0.95
RESAMPLES = 2000

FASTER, SLOWER, SAME = "faster", "slower", "no measurable difference"
UNMEASURED = "not measured"  # a side's spread exceeds its median: no ratio says anything
RERUN = "rerun on a quiet machine or with a longer --max-run-time"  # what to do about it


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


def relative_iqr(timing: Timing) -> float:
    """A timing's interquartile range over its median (inf for a median of 0 or NaN)."""
    return timing.iqr_s / timing.median_s if timing.median_s > 0 else math.inf


def unmeasured(spreads: dict[str, float]) -> str | None:
    """Why a ratio of these timings is no measurement, or None. ``spreads``: each side's IQR over
    its median. A side whose spread exceeds its median was timed through so much noise that
    any ratio of medians is chance (a 3.70x whose compiled IQR was nine times its median reran
    as 1.05x)."""
    for name, value in spreads.items():
        if not value <= 1.0:  # NaN too
            times = f"{value:.1f}×" if math.isfinite(value) else "more than"
            return f"the {name} timing's spread (IQR) is {times} its median"
    return None


def ratio(eager: Timing | None, other: Timing | None,
          name: str = "compiled") -> tuple[float | None, str | None]:
    """(eager median / ``other``'s median, None), or (None, why it is no measurement); (None,
    None) when a side was not timed. The one rule for every speedup over eager."""
    if eager is None or other is None:
        return None, None
    why = unmeasured({"eager": relative_iqr(eager), name: relative_iqr(other)})
    if why is not None:
        return None, why
    return eager.median_s / other.median_s, None


def ab_timing(before: list[float], after: list[float], *, calls_per_block: int, threads: int,
              backend: str, noise: float) -> ABTiming:
    """The same-process A/B from its paired blocks (seconds per call): both medians, and the
    speedup with its interval and verdict, unless a side's blocks spread more than their median
    (verdict ``not measured``, no speedup). ``noise``: the spread above which a side is noisy."""
    spreads = {"original": spread(before), "fixed": spread(after)}
    why = unmeasured(spreads)
    speedup = speedup_interval(before, after) if why is None else None
    return ABTiming(original=median_interval(before), fixed=median_interval(after),
                    speedup=speedup, verdict=UNMEASURED if speedup is None else verdict(speedup),
                    blocks=len(before), calls_per_block=calls_per_block, threads=threads,
                    backend=backend, noisy=max(spreads.values()) > noise, unmeasured=why)
