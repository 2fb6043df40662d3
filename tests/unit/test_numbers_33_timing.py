"""A timing whose spread exceeds its median is no speedup (issue 33 §6): the rule on constructed
timings and blocks, and how the reports say it. Torch-free: nothing is timed here."""

from __future__ import annotations

import io
import json
import math

from markupsafe import escape
from rich.console import Console

from breakscan.fixes.judge import judge
from breakscan.report import render_file_format
from breakscan.report.html import to_html
from breakscan.report.terminal import render_runs
from breakscan.model.stats import UNMEASURED, ab_timing, ratio, unmeasured
from breakscan.model.result import FixedScan
from breakscan.model.verdicts import Correctness, Timing
from conftest import recorded_runs

WHY = "the compiled timing's spread (IQR) is 9.0× its median"
NOTE = f"speedup not measured: {WHY}; rerun on a quiet machine or with a longer --max-run-time"


def _timing(median_us: float, iqr_us: float) -> Timing:
    return Timing(median_s=median_us * 1e-6, iqr_s=iqr_us * 1e-6, runs=100, threads=1,
                  noisy=iqr_us > 0.1 * median_us)


def test_a_spread_above_the_median_gives_no_speedup():
    steady = _timing(100, 5)
    value, why = ratio(steady, _timing(27, 5))
    assert math.isclose(value, 100 / 27) and why is None
    assert ratio(steady, _timing(27, 27))[1] is None  # equal: still a measurement
    assert ratio(steady, _timing(27, 243)) == (None, WHY)  # the 3.70x, IQR 9x median
    assert ratio(_timing(100, 150), steady)[1] == \
        "the eager timing's spread (IQR) is 1.5× its median"
    assert ratio(steady, _timing(27, 243), "fullgraph=True")[1] == \
        "the fullgraph=True timing's spread (IQR) is 9.0× its median"
    assert ratio(steady, None) == (None, None)  # not timed: nothing to say
    assert ratio(steady, _timing(0, 0))[1] == \
        "the compiled timing's spread (IQR) is more than its median"
    assert unmeasured({"a": 1.0, "b": 0.2}) is None
    assert unmeasured({"a": math.nan}) is not None


def _blocks(median: float, n: int = 12) -> list[float]:
    return [median * (1 + 0.01 * (i % 3 - 1)) for i in range(n)]


def test_the_same_process_ab_has_no_speedup_when_a_side_spreads_over_its_median():
    timed = ab_timing(_blocks(2e-3), _blocks(1e-3), calls_per_block=10, threads=1,
                      backend="inductor", noise=0.1)
    assert (timed.verdict, timed.unmeasured, timed.noisy) == ("faster", None, False)
    assert timed.said() == f"faster ({timed.speedup.value:.2f}×)"
    # Every other block of the fixed model 20x slower: IQR ~ 19 ms over a ~10.5 ms median.
    wild = [1e-3 if i % 2 else 20e-3 for i in range(12)]
    timed = ab_timing(_blocks(2e-3), wild, calls_per_block=10, threads=1, backend="inductor",
                      noise=0.1)
    assert (timed.speedup, timed.verdict, timed.noisy) == (None, UNMEASURED, True)
    assert timed.unmeasured == "the fixed timing's spread (IQR) is 1.8× its median"
    assert timed.said() == f"not measured ({timed.unmeasured})"
    assert timed.fixed.value == 10.5e-3  # the medians stay: each is what its blocks gave


def _unmeasured_run():
    """A recorded --fix run whose compiled and fullgraph timings spread over their medians."""
    run, = recorded_runs("fix")
    t = run.result.timings
    t.compiled = _timing(27, 243)
    t.fullgraph, t.fullgraph_error = _timing(20, 200), None
    t.speedup = None
    t.notes = [NOTE]
    run.result.fixes = []
    return run


def test_the_reports_say_not_measured_where_a_speedup_would_be():
    run = _unmeasured_run()
    console = Console(record=True, width=120, file=io.StringIO())
    render_runs([run], console)
    text = console.export_text()
    rows = {line.split()[0]: line for line in text.splitlines()
            if "±" in line}
    assert rows["eager"].rstrip().endswith("1.00x")
    assert rows["torch.compile"].rstrip().endswith("not measured")
    assert rows["fullgraph=True"].rstrip().endswith("not measured")
    assert f"note: {NOTE}" in " ".join(text.split())
    page = to_html([run])
    assert "speedup not measured (see the timings' notes)" in page
    assert page.count('data-label="speedup">not measured</td>') == 2
    doc = json.loads(render_file_format([run], "json", single=True))
    assert doc["timings"]["speedup"] is None
    assert doc["timings"]["notes"] == [NOTE]


def test_a_fix_whose_same_process_timing_spread_too_far_reads_not_measured():
    """Needs report/wording.ab_line and fixes/judge._reason to say ``ab.said()`` (no ratio)."""
    run, = recorded_runs("fix")
    (fix,) = run.result.fixes
    wild = [1e-3 if i % 2 else 20e-3 for i in range(12)]
    fix.ab = ab_timing([2e-3] * 12, wild, calls_per_block=10, threads=1, backend="inductor",
                       noise=0.1)
    why = "the fixed timing's spread (IQR) is 1.8× its median"
    console = Console(record=True, width=200, file=io.StringIO())
    render_runs([run], console)
    assert (f"speedup not measured ({why}; rerun on a quiet machine or with a longer "
            "--max-run-time)") in " ".join(console.export_text().split())
    assert f"speedup not measured ({escape(why)};" in to_html([run])
    doc = json.loads(render_file_format([run], "json", single=True))
    assert {k: doc["fixes"][0]["ab"][k] for k in ("speedup", "verdict", "unmeasured")} == {
        "speedup": None, "verdict": "not measured", "unmeasured": why}
    # Judged as no measurable difference (docs/fixes.md), the reason saying why.
    same = Correctness(match=True, max_abs_error=0.0, max_rel_error=0.0)
    judge(fix, FixedScan(result=run.result, same_outputs=same, ab=fix.ab), dynamic=False)
    assert fix.status == "no effect"
    assert fix.reason.endswith(f"; same-process timing: not measured ({why})")
