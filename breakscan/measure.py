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
from typing import Any, Callable

import torch
from torch.utils import benchmark

from .frames import acting_frame, parse_stack
from .breaklog import split_reason
from .dynamo import compile_within, dynamo_session
from .errors import as_model_error, describe
from .result import Correctness, Timing, TimingReport

WARMUP_CALLS = 3
_PLAIN = (int, float, complex, bool, str, bytes, type(None))
PROFILED_CALLS = 10
NOISE = 0.1  # IQR / median above this is a noisy measurement (adaptive_autorange's own target)


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
        .adaptive_autorange(threshold=NOISE, min_run_time=0.05, max_run_time=max_run_time,
                            callback=block_done)
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


def _outside_share(call: Callable[[], Any], device: torch.device,
                   backend: str) -> tuple[float | None, float]:
    """(share of wall time outside compiled graphs, time inside them per call) via the profiler.

    Inductor marks each compiled-graph call with a "## Call CompiledFxGraph … ##" event; other
    backends do not, so the share is None for them. Profiler overhead counts as outside time:
    read the share as an upper bound.
    """
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    with _quiet_stderr_fd(), profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(PROFILED_CALLS):
            call()
        _sync(device)
        wall = time.perf_counter() - start
    graph_us = [e.time_range.end - e.time_range.start for e in prof.events()
                if e.name.startswith("## Call CompiledFxGraph")]
    if not graph_us and backend != "inductor":
        return None, 0.0  # this backend does not mark its graphs; inductor with none: all eager
    inside = sum(graph_us) / 1e6
    return max(0.0, 1.0 - inside / wall), inside / PROFILED_CALLS


def _first_break(exc: BaseException) -> str:
    """'gb_type: explanation (at file:line)' for the break that stopped fullgraph=True."""
    text = str(exc)
    parts = split_reason(text)
    frame = acting_frame(parse_stack(text))
    where = f" (at {frame.location()})" if frame else ""
    if not parts["explanation"]:
        return describe(exc)[:300]
    return f"{parts['gb_type']}: {parts['explanation'].splitlines()[0]}{where}"


def measure(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
            device: torch.device, training: bool = False, backend: str = "inductor",
            mode: str | None = None, threads: int = 1, fullgraph: bool = True,
            max_run_time: float = 2.0, dynamic: bool | None = None,
            on_stage: Callable[[str, TimingReport], None] | None = None,
            compile_only: tuple[Any, str] | None = None,
            on_progress: OnProgress | None = None) -> TimingReport:
    """Time eager, compiled and (where it compiles) fullgraph; check compiled == eager.

    ``on_stage(name, report_so_far)`` is called as each step starts, so an isolated scan that
    hangs or crashes mid-way still reports the steps that finished; ``on_progress(text)`` hears
    the runs of the step being timed. ``compile_only=(owner, method)`` compiles only that
    method while ``fn`` runs eagerly.
    """
    def compile_(target: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        if compile_only is not None:
            return compile_within(target, *compile_only, **options)
        return torch.compile(target, **options)

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
        target = compile_(fn, backend=backend, mode=mode, dynamic=dynamic, **extra)
        try:
            out, seconds = first_call(target)
        except Exception as exc:
            return None, None, None, explain_failure(exc)
        return target, out, seconds, None

    try:
        with dynamo_session(training=training) as session:
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
                report.outside_share, report.graph_s_per_call = _outside_share(
                    bind(compiled), device, backend)
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
