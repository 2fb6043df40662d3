"""Stage 4 — measure: what do the breaks cost? Eager vs ``torch.compile`` vs ``fullgraph=True``.

Each variant is timed with ``torch.utils.benchmark.Timer.adaptive_autorange`` (warm-up, runs until
the IQR is within 10% of the median or the time budget is spent, accelerator synchronised) at a
fixed thread count, which is reported. The first compiled call is timed separately as the compile
time. Compiled outputs are checked against eager with ``torch.testing.assert_close``; a mismatch
is reported, never hidden. ``torch.profiler`` on the compiled model gives the share of each call
spent outside compiled graphs: the Python between graphs that the breaks force.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils import benchmark

from ..frames import acting_frame, parse_stack
from ..analysis.breaklog import split_reason
from ..dynamo.hooks import CodeKey, bytecode_hook, compile_model, dynamo_session, read_metrics
from ..errors import as_model_error, describe
from ..result import ABTiming, Correctness, Timing, TimingReport
from ..stats import median_interval, speedup_interval, spread, verdict

WARMUP_CALLS = 3
_PLAIN = (int, float, complex, bool, str, bytes, type(None))
PROFILED_CALLS = 10
NOISE = 0.1  # IQR / median above this is a noisy measurement (adaptive_autorange's own target)
# Each variant runs at least this share of its budget, however soon its spread settles: a
# median over more runs moves less between runs of the same command (benchmarks/timing_spread.py).
MIN_SHARE = 0.25


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


OnProgress = Callable[[str], None]


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
    return Timing(median_s=m.median, iqr_s=m.iqr, runs=len(m.times) * m.number_per_run,
                  threads=threads, noisy=m.iqr > NOISE * m.median)


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not on this platform
        return None


def _leaves(value: Any) -> list[Any]:
    leaves, _ = torch.utils._pytree.tree_flatten(value)
    return leaves


def compare_outputs(expected: Any, actual: Any) -> Correctness:
    """assert_close on every tensor leaf (dtype-appropriate tolerances) plus the max errors."""
    exp, act = _leaves(expected), _leaves(actual)
    if len(exp) != len(act):
        return Correctness(match=False, max_abs_error=None, max_rel_error=None,
                           message=f"compiled output has {len(act)} leaves, eager {len(exp)}")
    max_abs = max_rel = 0.0
    problems: list[str] = []
    opaque = 0
    for index, (e, a) in enumerate(zip(exp, act)):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as exc:
                problems.append(f"output {index}: {' '.join(str(exc).split())[:200]}")
            if e.numel() and e.is_floating_point() and a.shape == e.shape:
                diff = (a.detach().double() - e.detach().double()).abs()
                max_abs = max(max_abs, float(diff.max()))
                rel = diff / e.detach().double().abs().clamp_min(1e-12)
                max_rel = max(max_rel, float(rel.max()))
        elif isinstance(e, _PLAIN) and isinstance(a, _PLAIN):
            if e != a:
                problems.append(f"output {index}: {a!r} != {e!r}")
        else:
            opaque += 1  # e.g. a KV-cache object: no value equality to compare with
    note = f"{opaque} non-tensor output(s) not compared" if opaque else None
    return Correctness(match=not problems, max_abs_error=max_abs, max_rel_error=max_rel,
                       message="; ".join(problems) or note)


def eager_outputs(loaded: Any) -> Any:
    """A loaded target's eager outputs (seeded, detached copies): the reference to compare with."""
    torch.manual_seed(0)
    grad = contextlib.nullcontext() if loaded.training else torch.no_grad()
    with grad:
        out = loaded.fn(*loaded.args, **loaded.kwargs)
    return torch.utils._pytree.tree_map(
        lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, out)


@contextlib.contextmanager
def _quiet_stderr_fd():
    """The profiler's C++ side prints start/stop lines straight to fd 2: park them."""
    import os
    import tempfile

    try:
        saved = os.dup(2)
    except OSError:  # no real fd 2 (embedded interpreters)
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


_CALL_MARK = "breakscan: model call"
_GRAPH_MARK = "## Call CompiledFxGraph"
_REGION_MARK = "Torch-Compiled Region: "


@dataclass
class OutsideGraphs:
    """Where each compiled call's time went, from the profiler (inductor marks its graphs)."""

    share: float | None  # of wall time outside compiled graphs (None: the backend marks none)
    inside_s: float = 0.0  # per call, inside compiled graphs
    wall_s: float = 0.0  # per call, the whole profiled call (the profiler's overhead included)
    # Per call, the Python time before each graph that a resume function runs, keyed by the
    # code of the region (compile id -> code) the graph belongs to: the gap a break caused.
    gaps: dict[str, float] = field(default_factory=dict)  # compile id -> seconds per call


def _gaps(events: list[Any]) -> dict[str, float]:
    """Microseconds of Python between consecutive graph calls within each model call, keyed by
    the compile id of the innermost compiled region the next graph runs in."""
    graphs = sorted((e.time_range.start, e.time_range.end) for e in events
                    if e.name.startswith(_GRAPH_MARK))
    regions = [(e.time_range.start, e.time_range.end, e.name[len(_REGION_MARK):])
               for e in events if e.name.startswith(_REGION_MARK)]
    calls = [(e.time_range.start, e.time_range.end) for e in events if e.name == _CALL_MARK]
    gaps: dict[str, float] = {}
    for call_start, call_end in calls:
        inside = [g for g in graphs if call_start <= g[0] and g[1] <= call_end]
        for (_, previous_end), (start, _) in zip(inside, inside[1:]):
            around = [r for r in regions if r[0] <= start <= r[1]]
            if start > previous_end and around:
                innermost = min(around, key=lambda r: r[1] - r[0])
                gaps[innermost[2]] = gaps.get(innermost[2], 0.0) + start - previous_end
    return gaps


def _outside_graphs(call: Callable[[], Any], device: torch.device, backend: str) -> OutsideGraphs:
    """The share of wall time outside compiled graphs, and the gaps between them, via the
    profiler.

    Inductor marks each compiled-graph call with a "## Call CompiledFxGraph … ##" event and
    Dynamo each compiled frame's run with a "Torch-Compiled Region: <compile id>" event; other
    backends mark no graphs, so the share is None for them. Profiler overhead counts as outside
    time: read the share as an upper bound.
    """
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU]
    with _quiet_stderr_fd(), profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(PROFILED_CALLS):
            with record_function(_CALL_MARK):
                call()
        _sync(device)
        wall = time.perf_counter() - start
    events = list(prof.events())
    graph_us = [e.time_range.end - e.time_range.start for e in events
                if e.name.startswith(_GRAPH_MARK)]
    if not graph_us and backend != "inductor":
        return OutsideGraphs(share=None)  # this backend does not mark its graphs
    inside = sum(graph_us) / 1e6
    return OutsideGraphs(share=max(0.0, 1.0 - inside / wall), inside_s=inside / PROFILED_CALLS,
                         wall_s=wall / PROFILED_CALLS,
                         gaps={cid: us / 1e6 / PROFILED_CALLS
                               for cid, us in _gaps(events).items()})


def _short(message: str) -> str:
    """An error without the list of every option torch knows (inductor prints them all)."""
    return message.split(", known options are")[0]


def _first_break(exc: BaseException) -> str:
    """'gb_type: explanation (at file:line)' for the break that stopped fullgraph=True."""
    text = str(exc)
    parts = split_reason(text)
    frame = acting_frame(parse_stack(text))
    where = f" (at {frame.location()})" if frame else ""
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


def measure(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            device: torch.device, training: bool = False, backend: str = "inductor",
            mode: str | None = None, threads: int = 1, fullgraph: bool = True,
            max_run_time: float = 2.0, dynamic: bool | None = None,
            on_stage: Callable[[str, TimingReport], None] | None = None,
            compile_only: tuple[Any, str] | None = None,
            on_progress: OnProgress | None = None,
            frame_costs: FrameCosts | None = None,
            compile_options: dict[str, Any] | None = None) -> TimingReport:
    """Time eager, compiled and (where it compiles) fullgraph; check compiled == eager.

    ``on_stage(name, report_so_far)`` is called as each step starts, so an isolated scan that
    hangs or crashes mid-way still reports the steps that finished; ``on_progress(text)`` hears
    the runs of the step being timed. ``compile_only=(owner, method)`` compiles only that
    method while ``fn`` runs eagerly. ``frame_costs``, when given, is filled in (see
    :class:`FrameCosts`).
    """
    def compile_(target: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        return compile_model(target, compile_only, options=compile_options, **options)

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)  # before compiling: inductor bakes the count in
    grad = contextlib.nullcontext() if training else torch.no_grad()

    def bind(target: Callable[..., Any]) -> Callable[[], Any]:
        def call() -> Any:
            with grad:
                out = target(*args, **kwargs)
            _sync(device)
            return out
        return call

    def first_call(target: Callable[..., Any]) -> tuple[Any, float]:
        torch.manual_seed(0)
        start = time.perf_counter()
        out = bind(target)()
        return out, time.perf_counter() - start

    report = TimingReport(device=str(device), threads=threads, backend=backend, mode=mode)
    stage = (lambda name: on_stage(name, report)) if on_stage else (lambda name: None)

    def compile_once(label: str, explain_failure: Callable[[BaseException], str],
                     **extra: Any) -> tuple[Callable[..., Any] | None, Any, float | None,
                                            str | None]:
        """Compile and make the first call: (compiled, its output, compile seconds, None), or
        (None, None, None, why it failed)."""
        stage(f"compile ({backend}{label})")
        try:  # torch.compile itself refuses an unknown --compile-option
            target = compile_(fn, backend=backend, mode=mode, dynamic=dynamic, **extra)
            out, seconds = first_call(target)
        except Exception as exc:
            return None, None, None, _short(explain_failure(exc))
        return target, out, seconds, None

    try:
        with dynamo_session(training=training) as session, \
                bytecode_hook(session.notes) as code_events:
            stage("timing (eager)")
            torch.manual_seed(0)
            try:
                expected = bind(fn)()
            except Exception as exc:
                raise as_model_error(exc, "eager call") from exc
            report.eager = _time(bind(fn), threads, max_run_time, on_progress)

            compiled, actual, report.compile_s, report.compile_error = compile_once("", describe)
            if compiled is not None:
                stage("timing (compiled)")
                report.correctness = compare_outputs(expected, actual)
                report.compiled = _time(bind(compiled), threads, max_run_time, on_progress)
                report.speedup = report.eager.median_s / report.compiled.median_s
                outside = _outside_graphs(bind(compiled), device, backend)
                # The profiler slows what it watches: its shares are applied to the timed median,
                # so inside + outside is the call, and each break's cost is within its outside.
                median = report.compiled.median_s
                scale = median / outside.wall_s if outside.wall_s else 0.0
                report.outside_share = outside.share
                report.graph_s_per_call = outside.inside_s
                if outside.share is not None:
                    report.outside_s_per_call = outside.share * median
                    report.graph_s_per_call = (1.0 - outside.share) * median
                if frame_costs is not None:
                    code_of = {e.compile_id: (e.name, e.file, e.first_line) for e in code_events}
                    for compile_id, seconds in outside.gaps.items():
                        key = code_of.get(compile_id)
                        if key is not None:
                            frame_costs.gaps[key] = frame_costs.gaps.get(key, 0.0) + \
                                seconds * scale
                    for metric in read_metrics(session.notes):
                        key = code_of.get(metric.compile_id)
                        if key is not None and metric.compile_s:
                            frame_costs.compile_s[key] = \
                                frame_costs.compile_s.get(key, 0.0) + metric.compile_s
            report.notes.extend(session.notes)

        if fullgraph:
            with dynamo_session(training=training):
                strict, _, report.fullgraph_compile_s, report.fullgraph_error = compile_once(
                    ", fullgraph", _first_break, fullgraph=True)
                if strict is not None:
                    stage("timing (fullgraph)")
                    report.fullgraph = _time(bind(strict), threads, max_run_time, on_progress)
    finally:
        torch.set_num_threads(previous_threads)
        report.load_average = _load_average()
    if report.compiled and not math.isfinite(report.speedup or math.nan):
        report.speedup = None
    return report


AB_MIN_BLOCKS = 10  # block pairs, at least, whatever the time budget
AB_BLOCK_S = 0.01  # the faster model's block runs at least this long (calls calibrated to it)


@dataclass
class Variant:
    """One side of a before/after timing: a callable, its inputs and how it is compiled."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    compile_only: tuple[Any, str] | None = None
    dynamic: bool | None = None
    config: dict[str, Any] = field(default_factory=dict)  # torch._dynamo.config while compiled

    def compiled(self, device: torch.device, **options: Any) -> Callable[[], Any]:
        """The compiled model bound to its inputs (call it within :meth:`context`)."""
        target = compile_model(self.fn, self.compile_only, dynamic=self.dynamic, **options)

        def call() -> Any:
            out = target(*self.args, **self.kwargs)
            _sync(device)
            return out
        return call

    def context(self, training: bool) -> contextlib.ExitStack:
        """Its Dynamo config and grad mode, entered once per timed block, not per call."""
        import torch._dynamo.config as dynamo_config

        stack = contextlib.ExitStack()
        stack.enter_context(dynamo_config.patch(**self.config))
        stack.enter_context(contextlib.nullcontext() if training else torch.no_grad())
        return stack


def _block(call: Callable[[], Any], number: int, context: contextlib.ExitStack) -> float:
    with context:
        start = time.perf_counter()
        for _ in range(number):
            call()
        return (time.perf_counter() - start) / number


def time_interleaved(original: Variant, fixed: Variant, *, device: torch.device,
                     training: bool, backend: str = "inductor", mode: str | None = None,
                     threads: int = 1, max_run_time: float = 2.0, expected: Any = None,
                     compile_options: dict[str, Any] | None = None,
                     on_stage: Callable[[str], None] | None = None,
                     on_progress: OnProgress | None = None
                     ) -> tuple[ABTiming | None, Correctness | None, str | None]:
    """Compile both models in this process and time them in alternating blocks.

    Returns (the A/B timing, the fixed model's compiled outputs vs ``expected``, why it could
    not be timed). Same inputs, same thread count, the order within a pair alternating so a
    drift of the machine falls on both; at least ``AB_MIN_BLOCKS`` pairs, then until
    ``2 × max_run_time`` is spent.
    """
    stage = on_stage or (lambda name: None)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)  # before compiling: inductor bakes the count in
    try:
        with dynamo_session(training=training):
            calls = []
            variants = (original, fixed)
            for label, variant in zip(("original", "fixed"), variants):
                stage(f"compile ({backend}, {label})")
                torch.manual_seed(0)
                try:
                    call = variant.compiled(device, backend=backend, mode=mode,
                                            options=compile_options)
                    with variant.context(training):
                        out = call()
                except Exception as exc:
                    return None, None, _short(f"the {label} model did not compile: "
                                              f"{describe(exc)}")
                calls.append(call)
            correctness = compare_outputs(expected, out) if expected is not None else None
            stage("timing (original and fixed, interleaved)")

            def block(k: int, number: int) -> float:
                return _block(calls[k], number, variants[k].context(training))

            for k in (0, 1):
                block(k, WARMUP_CALLS)
            # Blocks of the faster model last at least AB_BLOCK_S: short blocks are noisy.
            fastest = min(block(k, 1) for k in (0, 1))
            number = max(1, math.ceil(AB_BLOCK_S / max(fastest, 1e-9)))
            before: list[float] = []
            after: list[float] = []
            budget, start = 2 * max_run_time, time.perf_counter()
            while len(before) < AB_MIN_BLOCKS or time.perf_counter() - start < budget:
                if len(before) % 2 == 0:
                    before.append(block(0, number))
                    after.append(block(1, number))
                else:
                    after.append(block(1, number))
                    before.append(block(0, number))
                if on_progress is not None:
                    spent = min(time.perf_counter() - start, budget)
                    on_progress(f"{len(before)} block pairs, {spent:.1f}/{budget:g} s")
    finally:
        torch.set_num_threads(previous_threads)
    speedup = speedup_interval(before, after)
    return ABTiming(original=median_interval(before), fixed=median_interval(after),
                    speedup=speedup, verdict=verdict(speedup),
                    blocks=len(before), calls_per_block=number, threads=threads,
                    backend=backend,
                    noisy=spread(before) > NOISE or spread(after) > NOISE), correctness, None
