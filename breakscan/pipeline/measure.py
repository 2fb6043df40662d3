"""Stage 4 — measure: what do the breaks cost? Eager vs ``torch.compile`` vs ``fullgraph=True``.

Each variant is timed with ``torch.utils.benchmark.Timer.adaptive_autorange`` (warm-up, runs until
the IQR is within 10% of the median or the time budget is spent, accelerator synchronised) at a
fixed thread count, which is reported. The first compiled call is timed separately as the compile
time. Compiled outputs are checked against eager with ``torch.testing.assert_close``; a mismatch
is reported, never hidden. A speedup is eager / compiled only when neither timing's spread
exceeds its median (``stats.ratio``); else it is null and a note says why. ``torch.profiler``
on the compiled model gives the share of each call spent outside compiled graphs
(``outside``): the Python between graphs that the breaks force.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils import benchmark

from ..dynamo.backend import compile_model
from ..dynamo.session import bytecode_hook, dynamo_session, read_metrics
from ..errors import describe, raised_by_breakscan, running_model
from ..frames import acting_frame, display_path, parse_stack
from ..messages import split_reason
from ..model.raw import CodeEvent, CodeKey, RawFailure
from ..model.stats import RERUN, ratio
from ..model.verdicts import Timing, TimingReport
from ..options import TimingOptions
from .call import ModelCall, synchronize
from .capture import raised_compiling, raw_failure
from .outputs import comparable_randomness, compare_outputs, draws_random_numbers, reseed
from .outside import OutsideGraphs, outside_graphs
from .state import failed_for_its_state, later_call_hint

WARMUP_CALLS = 3
NOISE = 0.1  # IQR / median above this is a noisy measurement (adaptive_autorange's own target)
# Each variant runs at least this share of its budget, however soon its spread settles: a
# median over more runs moves less between runs of the same command (benchmarks/timing_spread.py).
MIN_SHARE = 0.25

OnProgress = Callable[[str], None]


MIN_BLOCKS = 4  # timed blocks needed for a spread (IQR) that means anything


def _time(call: Callable[[], Any], threads: int, max_run_time: float,
          on_progress: OnProgress | None = None) -> Timing:
    """Median and IQR of ``call`` after a warm-up; ``on_progress`` hears the runs so far.

    The run count is adaptive (until the IQR is within 10 % of the median or ``max_run_time``
    is spent), so progress is runs and seconds of the time budget, not runs of a known total.
    """
    for _ in range(WARMUP_CALLS):
        call()
    runs, spent = 0, 0.0

    def block_done(number: int, seconds: float) -> None:  # between timed blocks, never inside
        nonlocal runs, spent
        runs, spent = runs + number, spent + seconds
        if on_progress is not None:
            on_progress(f"{runs} runs, {min(spent, max_run_time):.1f}/{max_run_time:g} s")

    m = benchmark.Timer(stmt="call()", globals={"call": call}, num_threads=threads) \
        .adaptive_autorange(threshold=NOISE, min_run_time=max_run_time * MIN_SHARE,
                            max_run_time=max_run_time, callback=block_done)
    # Fewer than MIN_BLOCKS timed blocks (a slow call, or torch 2.14's block sizing: one block
    # of 100 runs where 2.13 timed 11 of 10) leave the spread unmeasured, its IQR 0: noisy.
    return Timing(median_s=m.median, iqr_s=m.iqr, runs=len(m.times) * m.number_per_run,
                  threads=threads, blocks=len(m.times),
                  noisy=m.iqr > NOISE * m.median or len(m.times) < MIN_BLOCKS)


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not on this platform
        return None


def short_error(message: str) -> str:
    """An error without the list of every option torch knows (inductor prints them all)."""
    return message.split(", known options are")[0]


def _first_break(exc: BaseException) -> str:
    """'gb_type: explanation (at file:line)' for the break that stopped fullgraph=True."""
    text = str(exc)
    parts = split_reason(text)
    frame = acting_frame(parse_stack(text))
    where = f" (at {display_path(frame.file)}:{frame.line})" if frame else ""
    if not parts["explanation"]:
        return describe(exc)[:300]
    return f"{parts['gb_type']}: {parts['explanation'].splitlines()[0]}{where}"


@dataclass
class FrameCosts:
    """What measure found per compiled code object (``(name, file, first line)``): the Python
    time per call before its graphs ran (a resume function's: the break's gap) and its compile
    time. ``impact`` turns these into each break's cost."""

    gaps: dict[CodeKey, float] = field(default_factory=dict)
    compile_s: dict[CodeKey, float] = field(default_factory=dict)

    def add(self, outside: OutsideGraphs, scale: float, code_events: list[CodeEvent],
            notes: list[str]) -> None:
        """The profiled gaps (scaled to the timed median) and the compile times of one timed
        model, by the code object each compile id compiled."""
        code_of = {e.compile_id: (e.name, e.file, e.first_line) for e in code_events}
        for compile_id, seconds in outside.gaps.items():
            key = code_of.get(compile_id)
            if key is not None:
                self.gaps[key] = self.gaps.get(key, 0.0) + seconds * scale
        for metric in read_metrics(notes):
            key = code_of.get(metric.compile_id)
            if key is not None and metric.compile_s:
                self.compile_s[key] = self.compile_s.get(key, 0.0) + metric.compile_s


@dataclass
class _Timed:
    """One measure's model call, its timing options and its report so far."""

    call: ModelCall
    timing: TimingOptions
    report: TimingReport
    on_stage: Callable[[str, TimingReport], None] | None
    on_progress: OnProgress | None
    # The compiled variant's backend in place of timing.backend: --kernels' inspecting Inductor
    # (which holds the mode and options itself).
    backend: Callable[..., Any] | None = None
    failure: RawFailure | None = None  # the compiled variant raised where eager ran
    steady: bool = False  # timed calls from the state after one call (see ``time``)

    def __post_init__(self) -> None:
        self.grad = contextlib.nullcontext() if self.call.training else torch.no_grad()

    def stage(self, name: str) -> None:
        if self.on_stage:
            self.on_stage(name, self.report)

    def bind(self, target: Callable[..., Any], *, fresh: bool = False) -> Callable[[], Any]:
        """One call of ``target``: from the model's state as built (``fresh``: the compared
        first call), natural (a timed call), or from its state after one call once natural
        calls failed on a model that keeps state (``steady``)."""
        def run() -> Any:
            if fresh:
                self.call.fresh()
            elif self.steady:
                self.call.steady()
            with self.grad:
                out = target(*self.call.args, **self.call.kwargs)
            synchronize(self.call.device)
            return out
        return run

    def time(self, target: Callable[..., Any]) -> Timing:
        """``target`` timed by natural calls; a model that keeps state and fails so (its own
        error, not a compile's) is timed again from its state after one call, and says so."""
        try:
            return _time(self.bind(target), self.timing.threads, self.timing.max_run_time,
                         self.on_progress)
        except Exception as exc:
            if self.steady or not failed_for_its_state(self.call.state, exc) or \
                    raised_by_breakscan(exc, calling_model=True):
                raise
            self.steady = True
            self.report.notes.append(
                f"called again and again, the model fails ({short_error(describe(exc))}): it "
                "keeps state between calls, so each timed call started from its state after "
                "one call, eager and compiled alike")
        return _time(self.bind(target), self.timing.threads, self.timing.max_run_time,
                     self.on_progress)

    def compile_once(self, label: str, explain_failure: Callable[[BaseException], str],
                     backend: Callable[..., Any] | None = None,
                     **extra: Any) -> tuple[Callable[..., Any] | None, Any, float | None,
                                            str | None]:
        """Compile and make the first call: (compiled, its output, compile seconds, None), or
        (None, None, None, why it failed). ``backend`` replaces ``timing.backend``, mode and
        options (it holds them)."""
        t, call = self.timing, self.call
        self.stage(f"compile ({t.backend}{label})")
        dynamic = t.dynamic if t.dynamic is not None else call.dynamic
        settings = dict(backend=backend) if backend is not None else dict(
            options=call.compile_options, backend=t.backend, mode=t.mode)
        try:  # torch.compile itself refuses an unknown --compile-option
            target = compile_model(call.fn, call.compile_only, dynamic=dynamic, **settings,
                                   **extra)
            first = self.bind(target, fresh=True)
            reseed()
            start = time.perf_counter()
            out = first()
            seconds = time.perf_counter() - start
        except Exception as exc:
            if not extra:  # the plain compiled variant (not fullgraph=True)
                self.failure = raw_failure(exc)
            return None, None, None, short_error(explain_failure(exc))
        return target, out, seconds, None


def _time_compiled(timed: _Timed, frame_costs: FrameCosts | None) -> None:
    """Eager, then compiled: timings, correctness, the time outside graphs and, when asked,
    each compiled frame's gaps and compile time."""
    call, report = timed.call, timed.report
    with dynamo_session(training=call.training) as session, \
            bytecode_hook(session.notes) as code_events:
        timed.stage("timing (eager)")
        with running_model("eager call"):
            random, expected = draws_random_numbers(timed.bind(call.fn, fresh=True))
        if call.state is not None:
            call.state.after_first_call()  # the state a steady timed call starts from
        with running_model("timing the eager model", later_call_hint(call.state)):
            report.eager = timed.time(call.fn)

        # Inductor draws its own random numbers: made to draw eager's so outputs compare.
        with comparable_randomness(random) as report.random_comparable:
            compiled, actual, report.compile_s, report.compile_error = timed.compile_once(
                "", describe, backend=timed.backend)
            if compiled is not None:
                timed.stage("timing (compiled)")
                report.correctness = compare_outputs(expected, actual)
                natural = not timed.steady
                with running_model(f"timing the compiled model ({timed.timing.backend})",
                                   later_call_hint(call.state)):
                    report.compiled = timed.time(compiled)
                if natural and timed.steady:  # eager again, from the same state as compiled
                    with running_model("timing the eager model", later_call_hint(call.state)):
                        report.eager = timed.time(call.fn)
                report.speedup = ratio(report.eager, report.compiled)[0]
                with running_model("profiling the compiled model", later_call_hint(call.state)):
                    outside = outside_graphs(timed.bind(compiled), call.device,
                                             timed.timing.backend)
                # The profiler slows what it watches: its shares are applied to the timed median,
                # so inside + outside is the call, and each break's cost is within its outside.
                median = report.compiled.median_s
                scale = median / outside.wall_s if outside.wall_s else 0.0
                report.outside_share = outside.share
                if outside.share is not None:  # else neither is measured (both null)
                    report.outside_s_per_call = outside.share * median
                    report.graph_s_per_call = (1.0 - outside.share) * median
                if frame_costs is not None:
                    frame_costs.add(outside, scale, code_events, session.notes)
        report.notes.extend(session.notes)


# torch 2.13's error for a fullgraph=True frame past the recompile limit (absent elsewhere).
_RECOMPILE_LIMIT_HIT = getattr(getattr(torch._dynamo, "exc", None), "FailOnRecompileLimitHit", ())


def _time_fullgraph(timed: _Timed) -> None:
    report = timed.report
    with dynamo_session(training=timed.call.training):
        strict, _, report.fullgraph_compile_s, report.fullgraph_error = timed.compile_once(
            ", fullgraph", _first_break, fullgraph=True)
        if strict is not None:
            timed.stage("timing (fullgraph)")
            with running_model("timing the fullgraph model", later_call_hint(timed.call.state)):
                try:
                    report.fullgraph = timed.time(strict)
                except _RECOMPILE_LIMIT_HIT:  # the eager fallback fullgraph=True forbids
                    limit = getattr(torch._dynamo.config, "recompile_limit", "?")
                    report.fullgraph_error = (f"a later call recompiled past the recompile limit"
                                              f" ({limit}); without fullgraph it runs eagerly")
                except Exception as exc:  # a later call takes a path that breaks (a model
                    if not raised_compiling(exc):  # that keeps state): fullgraph=True fails
                        raise
                    report.fullgraph_error = f"a later call breaks: {_first_break(exc)}"


def measure(call: ModelCall, timing: TimingOptions, *,
            on_stage: Callable[[str, TimingReport], None] | None = None,
            on_progress: OnProgress | None = None,
            frame_costs: FrameCosts | None = None,
            backend: Callable[..., Any] | None = None,
            failures: list[RawFailure] | None = None) -> TimingReport:
    """Time eager, compiled and (where it compiles, with ``timing.fullgraph``) fullgraph; check
    compiled == eager. ``timing.dynamic``, when set, replaces the call's own ``dynamic``.

    ``on_stage(name, report_so_far)`` is called as each step starts, so an isolated scan that
    hangs or crashes mid-way still reports the steps that finished; ``on_progress(text)`` hears
    the runs of the step being timed. ``call.compile_only=[(owner, method)]`` compiles only that
    method while ``call.fn`` runs eagerly. ``frame_costs``, when given, is filled in (see
    :class:`FrameCosts`). ``backend`` compiles the compiled variant instead of
    ``timing.backend`` (``--kernels``' inspecting Inductor: one compile for both).
    ``failures``, when given, gets the compiled variant's exception where eager ran: the scan
    captures with a backend that runs the graphs as they are, so only here can the real
    backend's failure show (torch.compile fails on the model).
    """
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(timing.threads)  # before compiling: inductor bakes the count in
    report = TimingReport(device=str(call.device), threads=timing.threads,
                          backend=timing.backend, mode=timing.mode)
    timed = _Timed(call, timing, report, on_stage, on_progress, backend)
    try:
        _time_compiled(timed, frame_costs)
        if timing.fullgraph:
            _time_fullgraph(timed)
    finally:
        torch.set_num_threads(previous_threads)
        report.load_average = _load_average()
        if failures is not None and timed.failure is not None:
            failures.append(timed.failure)
    _ratios(report)
    return report


def _ratios(report: TimingReport) -> None:
    """The speedups over eager by the one rule (``stats.ratio``): a side whose spread exceeds
    its median gives no speedup, and a note says why (the reports' fullgraph=True ratio follows
    the same rule)."""
    report.speedup, why = ratio(report.eager, report.compiled)
    if why is not None:
        report.notes.append(f"speedup not measured: {why}; {RERUN}")
    _, why = ratio(report.eager, report.fullgraph, "fullgraph=True")
    if why is not None:
        report.notes.append(f"fullgraph=True speedup not measured: {why}; {RERUN}")
