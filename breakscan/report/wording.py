"""The reports' shared wording: each sentence or phrase more than one reporter builds.

The terminal, HTML, GitHub/Markdown and SARIF reports say the same things about a break, a
timing, a fix or a comparison; written once here, they cannot drift apart. Plain strings only:
each reporter adds its own styling, escaping and layout.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from ..frames import Frame
from ..model.records import CompileError, Recompile, RootBreak
from ..model.result import Comparison, ScanResult
from ..model.result import whole as count
from ..model.stats import RERUN
from ..model.verdicts import Check, Fix, GateResult, Timing
from ..rules.registry import is_class_hint

COMPILE_ERROR_ADVICE = (
    "The eager model runs; the compiled one raises on every call, so nothing of it runs "
    "compiled (this is not a graph break: no frame falls back to eager). Change this line so "
    "Dynamo can trace it (the explanation says what it could not do), or keep the function "
    "that holds it out of the compiled region with `torch.compiler.disable`. Reproduce with "
    "`torch.compile(model, backend=\"eager\")(...)`.")

BACKEND_ERROR_ADVICE = (
    "The eager model runs, and so does Dynamo's capture (its backend runs the graphs as they "
    "are: the breaks listed are from it); compiled with backend={backend}, the call raises, so "
    "nothing of the model runs compiled. Try `backend=\"aot_eager\"`: when it raises too, "
    "AOTAutograd is at fault (a tensor a graph returns and Python then differentiates, "
    "`torch.autograd.grad` at a break: remove the break at this line first), else {backend} "
    "is (isolate the op in a small disabled helper and report it).")


def compile_error_advice(error: CompileError) -> str:
    """What to do when torch.compile fails: at capture (Dynamo), or only with the real backend."""
    if error.backend:
        return BACKEND_ERROR_ADVICE.format(backend=error.backend)
    return COMPILE_ERROR_ADVICE


CALLS_TEXT = {
    "first_only": "first call only: a later call of the same model does not break here (a "
                  "one-time Python path: lazy init, a hook or warning issued once)",
    "later_only": "later calls only: the first call does not break here, a later call does "
                  "(not counted by the gate, which judges the first call)",
}
KEPT_SPLIT_TEXT = ("first call only, but its split stays: later calls do not take this path, "
                   "yet the code Dynamo compiled around it on the first call is reused, so "
                   "every call still returns to Python here ({fires} per call). Call the model "
                   "once before torch.compile (or move the one-time work to __init__) and the "
                   "compiled code has no split")


def plural(value: float | None, noun: str) -> str:
    """'1 graph call', '2 graph calls', '2.5 returns' (per-call averages read as counts)."""
    return f"{count(value)} {noun}{'' if value == 1 else 's'}"


def ms(seconds: float | None) -> str:
    """A duration in the unit that reads best: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def median_iqr(timing: Timing) -> str:
    """'812.3 µs ± 10.1 µs': a timing's median and its interquartile range."""
    return f"{ms(timing.median_s)} ± {ms(timing.iqr_s)}"


def chain_step(frame: Frame) -> str:
    """One step of a call chain: 'forward() model.py:12'."""
    return f"{frame.function}() {os.path.basename(frame.file)}:{frame.line}"


def check_text(check: Check) -> str:
    """A failed gate check: 'max_breaks 2 > limit 0', 'max_compile_time 6.93 s > limit 5 s',
    or what was not measured ('max_kernels not measured (run with --kernels)')."""
    if check.actual == -1 and check.detail.startswith("not measured"):
        return f"{check.name} {check.detail}"
    if check.name == "max_compile_time":
        return f"{check.name} {check.actual:.3g} s > limit {check.limit:g} s"
    return f"{check.name} {check.actual} > limit {check.limit}"


def gate_status(gate: GateResult | None) -> str:
    """'PASS', 'FAIL', or 'no gate' when no limit was set."""
    return "no gate" if gate is None else ("PASS" if gate.passed else "FAIL")


def recompile_reasons(rec: Recompile) -> str:
    """Why a frame was compiled again: its failed guards, one after another."""
    return "; ".join(rec.reasons) or "guard failed"


def calls_text(brk: RootBreak) -> str | None:
    """Which calls hit a break, when not every call (None)."""
    if brk.calls == "first_only" and brk.fires_per_call:
        return KEPT_SPLIT_TEXT.format(fires=count(brk.fires_per_call))
    return CALLS_TEXT.get(brk.calls)


def fires_text(brk: RootBreak, result: ScanResult) -> str:
    """'fires 24× per call' / 'costs 41.0 µs of 96.0 µs per call, 24×' (with --time) /
    'fired 20 times over the run, 4× per call of its region' (breakscan run)."""
    fires = f"{count(brk.fires_per_call)}×" if brk.fires_per_call is not None else "?×"
    if result.kind == "program" and brk.fires is not None:
        return f"fired {plural(brk.fires, 'time')} over the run, {fires} per call of its region"
    if result.kind == "trace":
        return f"on rank(s) {', '.join(map(str, brk.ranks))}"
    t = result.timings
    if brk.cost_s_per_call is not None and t is not None and t.outside_s_per_call:
        call = f" of a {ms(t.compiled.median_s)} call" if t.compiled else ""
        text = (f"costs {ms(brk.cost_s_per_call)} of the {ms(t.outside_s_per_call)} per call "
                f"spent outside compiled graphs{call}, {fires}")
        if brk.compile_cost_s:
            text += f"; its extra frames took {ms(brk.compile_cost_s)} to compile"
        return text
    cold = _cold_compile_cost(result, brk)
    return f"fires {fires} per call" + (
        f"; its extra frames took {ms(cold)} to compile, cold" if cold else "")


def _cold_compile_cost(result: ScanResult, brk: RootBreak) -> float | None:
    """--compile-time: the cold compile of the frames that exist because of this break."""
    index = next((i for i, b in enumerate(result.breaks) if b is brk), None)
    if result.compile_time is None or index is None:
        return None
    return result.compile_time.cost_of(index) or None


def settings_text(result: ScanResult) -> str:
    """The torch.compile settings the scan ran with, in the words users write them."""
    c = result.compile_settings or {}
    dynamic = {True: "True", False: "False"}.get(c.get("dynamic"), "None (torch's default)")
    text = f"torch.compile settings: dynamic={dynamic} for the capture, run-time counts, " \
        "recompiles"
    if c.get("backend"):
        extra = "".join(f", {k}={c[k]!r}" for k in ("mode",) if c.get(k))
        options = f", options={c['options']!r}" if c.get("options") else ""
        text += f" and timings; timings: backend={c['backend']!r}{extra}{options}"
    if c.get("nested_graph_breaks") is not None:  # in force, as the scan's process had it
        text += f"; torch._dynamo.config.nested_graph_breaks={c['nested_graph_breaks']}"
    return text


def runtime_line(result: ScanResult) -> str:
    """What ran per model call, and why it differs from the unique counts."""
    s = result.summary
    eager = f", {plural(s.frames_run_eagerly_per_call, 'frame')} run eagerly" \
        if s.frames_run_eagerly_per_call else ""
    return (f"at run time, per call ({s.runtime_calls} calls after warm-up, eager backend): "
            f"{plural(s.graph_calls_per_call, 'graph call')}, "
            f"{plural(s.eager_gaps_per_call, 'return')} to Python at a break{eager}. "
            "The counts above (and explain's) count each graph and break once; here each "
            "counts every time it runs.")


def calls_line(result: ScanResult) -> str:
    """Which call the counts describe, and how a later call of the same model differs."""
    later = result.later_call
    text = (f"captured: the {result.captured_call}; a later call: graphs {later.graph_count}, "
            f"root-cause breaks {later.graph_break_count}")
    if later.first_only:
        text += f"; {later.first_only} break(s) on the first call only"
    if later.kept_splits:
        text += (f" ({later.kept_splits} still split the compiled code: it was compiled "
                 "around them on the first call and is reused)")
    if later.later_only:
        text += f"; {later.later_only} break(s) on later calls only (reported, not gated)"
    return text


def noise_note(t: Any) -> str:
    """Why a noisy timing is flagged, and what makes it steadier (terminal and HTML)."""
    load = f"; load average {t.load_average:g} on {os.cpu_count()} CPU(s)" \
        if t.load_average is not None else ""
    return (f"noisy: {', '.join(t.noisy)}: the spread stayed above 10 % of the median for the "
            f"whole time budget, or too few timed blocks fit in it to measure the spread{load}; "
            "these numbers may move between runs. For steadier ones: "
            "a quiet machine, --threads 1, a longer --max-run-time.")


def random_note(t: Any) -> str:
    """What a seeded comparison of a model that draws random numbers shows (terminal and HTML):
    Inductor is named only when it compiled, and "their outputs compare" only when they did."""
    inductor = t.backend == "inductor"
    seeded = ("the model draws random numbers: eager and compiled ran from the same seed "
              "(torch, random, NumPy)" + (", Inductor drawing eager's (fallback_random)"
                                          if inductor else ""))
    if t.correctness is None or t.correctness.match:
        return seeded + (", so their outputs compare; the compiled timings include that"
                         if inductor else ", so their outputs compare")
    return (seeded + "; still their outputs differ: the compiled model drew other numbers "
            "(Dynamo runs NumPy's random functions on torch's generator unless "
            "torch._dynamo.config.use_numpy_random_stream is set) or computes differently, "
            "and a seeded comparison cannot tell which")


def _arrow(before: Any, after: Any, fmt: Callable[[Any], str] = str) -> str:
    show = lambda v: "-" if v is None else fmt(v)  # noqa: E731
    return f"{show(before)} → {show(after)}"


def fix_numbers(fix: Fix) -> str:
    """'graphs 2 → 1 · graph calls per call 48 → 1 · breaks 1 → 0 · recompiles …'."""
    b, a = fix.before, fix.after
    if b is None or a is None:
        return ""
    parts = [f"graphs {_arrow(b.graph_count, a.graph_count)}"]
    if b.graph_calls_per_call is not None or a.graph_calls_per_call is not None:
        parts.append(f"graph calls per call "
                     f"{_arrow(b.graph_calls_per_call, a.graph_calls_per_call, count)}")
    for words, name in (("returns to Python per call", "eager_gaps_per_call"),
                        ("frames run eagerly", "frames_run_eagerly_per_call")):
        if getattr(b, name) is not None and getattr(a, name) is not None and \
                getattr(b, name) + getattr(a, name) > 0:
            parts.append(f"{words} {_arrow(getattr(b, name), getattr(a, name), count)}")
    parts.append(f"breaks {_arrow(b.breaks, a.breaks)}")
    if b.recompiles is not None or a.recompiles is not None:
        parts.append(f"recompiles {_arrow(b.recompiles, a.recompiles)}")
    if b.kernels_per_call is not None or a.kernels_per_call is not None:  # --kernels
        parts.append(f"kernels per call {_arrow(b.kernels_per_call, a.kernels_per_call, count)}")
    if b.kernel_findings != a.kernel_findings:  # a kernel rule's fix
        parts.append(f"kernel findings {_arrow(b.kernel_findings, a.kernel_findings)}")
    if b.cold_compile_s is not None and a.cold_compile_s is not None:  # regional_compile
        parts.append(f"cold compile {b.cold_compile_s:.2f} s → {a.cold_compile_s:.2f} s")
    return " · ".join(parts)


def _ratio(value: float) -> str:
    return f"{value:.2f}×"


def bound(value: float) -> str:
    """An interval bound with the digits it needs to show which side of 1 it is on: 1.003, not
    1.00 (which would read as an interval that includes 1 under a 'faster' verdict)."""
    for digits in (2, 3, 4):
        text = f"{value:.{digits}f}"
        if float(text) != 1.0 or value == 1.0:
            return text
    return f"{value:.5f}"


def speed_line(fix: Fix) -> str:
    """A verified fix's same-process timing (see :func:`ab_line`)."""
    return ab_line(fix.ab) if fix.ab is not None else ""


def ab_line(ab: Any) -> str:
    """A same-process A/B as one line whose verdict matches its numbers.

    'compiled 812.3 µs [801.0–820.1] → 120.4 µs [118.9–121.7] · 6.75× faster (95 % CI
    6.60–6.90×) · 20 interleaved block pairs, 1 thread'.
    """

    def latency(iv: Any) -> str:
        return f"{ms(iv.value)} [{ms(iv.low)}–{ms(iv.high)}]"

    s = ab.speedup
    if s is None:  # a side's blocks spread more than their median: no ratio (stats.ab_timing)
        verdict = f"speedup not measured ({ab.unmeasured}; {RERUN})"
    elif ab.verdict == "faster":
        verdict = f"{_ratio(s.value)} faster (95 % CI {bound(s.low)}–{bound(s.high)}×)"
    elif ab.verdict == "slower":  # the same interval, read as a slowdown
        verdict = (f"{_ratio(1 / s.value)} SLOWER (95 % CI {bound(1 / s.high)}–"
                   f"{bound(1 / s.low)}×)")
    else:
        verdict = (f"no measurable difference ({_ratio(s.value)}, 95 % CI "
                   f"{bound(s.low)}–{bound(s.high)}× includes 1)")
    noisy = " · noisy: the block times spread over 10 % of their median" if ab.noisy else ""
    return (f"compiled {latency(ab.original)} → {latency(ab.fixed)} · {verdict} · "
            f"{ab.blocks} interleaved block pairs of {ab.calls_per_block} call(s), "
            f"{ab.threads} thread(s), same process{noisy}")


def compared_total(result: ScanResult | None, name: str) -> str:
    """One summary count of a compared target ('error' when it has no result)."""
    return str(getattr(result.summary, name)) if result else "error"


def compared_timing(result: ScanResult | None, name: str) -> str:
    """One timing of a compared target ('eager', 'compiled'): median ± IQR, or '-'."""
    value = getattr(result.timings, name, None) if result and result.timings else None
    return median_iqr(value) if value else "-"


def compared_speedup(result: ScanResult | None) -> str:
    """A compared target's speedup over its own eager run, or '-'."""
    t = result.timings if result else None
    return f"{t.speedup:.2f}x" if t and t.speedup else "-"


def outputs_verdict(comparison: Comparison) -> tuple[str, str]:
    """Whether B's outputs match A's, and how it reads: ``ok``, ``bad`` or ``warn`` (not
    compared)."""
    out = comparison.outputs
    if out is None:
        return comparison.note or "outputs not compared", "warn"
    if out.match:
        shared = ", same weights" if comparison.weights_shared else ""
        return f"outputs: B matches A (max abs error {out.max_abs_error:.2e}{shared})", "ok"
    return f"outputs: B DIFFERS from A: {out.message or ''}", "bad"


def kernels_line(info: Any) -> str:
    """"34 ops → 7 kernels (4 fused, 2 extern, 1 fallback); Inductor counts 5 generated"."""
    found = info.inductor
    if found is None:
        return ""
    if found.error is not None:
        return f"{info.op_count} ops → Inductor failed ({found.error})"
    kinds = [(kind, sum(k.kind == kind for k in found.kernels))
             for kind in ("fused", "extern", "fallback")]
    parts = ", ".join(f"{n} {kind}" for kind, n in kinds if n)
    counted = (f"; Inductor's generated_kernel_count {found.kernel_count}"
               if found.kernel_count is not None else "")
    return (f"{info.op_count} ops → {plural(len(found.kernels), 'kernel')}"
            f"{f' ({parts})' if parts else ''}{counted} · compiled in {found.compile_s:.1f}s")


def fixes_baseline(fixes: list[Fix], backend: str | None = None,
                   input_sets: list[list[list[int]]] | None = None) -> list[str]:
    """Said once above the fixes: the random state they were compared from, how far compiling
    alone moved the original's outputs (what each fix is judged against), and which input sets
    the recompiles were counted over (``recompiles 1 → 0`` says nothing of other sizes)."""
    lines = []
    if input_sets and any(f.before is not None and f.before.recompiles is not None
                          for f in fixes):
        shown = "; ".join(" ".join(",".join(map(str, shape)) for shape in one)
                          for one in input_sets[:6])
        lines.append(f"recompiles are counted over the {len(input_sets)} input set(s) run "
                     f"({shown}{'; …' if len(input_sets) > 6 else ''}): other shapes may "
                     "compile again")
    if any(f.random for f in fixes):
        lines.append("the model draws random numbers: every compared call starts from the same "
                     "seed (torch, random, NumPy)" + (
                         ", and Inductor was made to draw eager's "
                         "(torch._inductor.config.fallback_random) so outputs can be compared"
                         if backend == "inductor" else ""))
    drift = max((f.baseline_error for f in fixes if f.baseline_error), default=None)
    if drift:
        lines.append(f"compiled, the original differs from eager by {drift:.2g} of its outputs' "
                     "magnitude before any fix; each fix's compiled outputs are judged against "
                     "that (up to twice as far), not as its own failure")
    return lines


def own_hints(brk: RootBreak) -> list[str]:
    """Dynamo's hints about this break, without its hint-class boilerplate (named instead by
    :func:`hint_classes_text`)."""
    return [h for h in brk.hints if not is_class_hint(h)]


def hint_classes_text(brk: RootBreak) -> str:
    """'FUNDAMENTAL, SUPPORTABLE' with what each means to the reader, or ''."""
    meaning = {"USER_ERROR": "may fail uncompiled too", "FUNDAMENTAL": "Dynamo will not trace it",
               "SUPPORTABLE": "Dynamo could support it one day",
               "DIFFICULT": "hard to debug", "DYNAMO_BUG": "likely a Dynamo bug",
               "CAUSED_BY_EARLIER_GRAPH_BREAK": "may follow from an earlier break",
               "INFERENCE_MODE": "inference-mode checks", "SPARSE_TENSOR": "sparse tensors"}
    return ", ".join(f"{c} ({meaning[c]})" if c in meaning else c for c in brk.hint_classes)
