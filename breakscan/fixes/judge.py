"""The verdict on a fix: the numbers before and after it, and whether it is a real gain.

A fix is only verified when its rescan in the child gave the same outputs, compiled, and made
fewer graphs or fewer returns to Python per call (:func:`gained`), or, for a kernel rule's
rewrite, fewer kernel findings and a faster same-process timing; it is "slower" when its
interleaved timing says so, "makes it worse" or "no effect" otherwise.
"""

from __future__ import annotations

from dataclasses import replace

from ..result import FixedScan, ScanResult, whole
from ..verdicts import Fix, FixMetrics


def metrics(result: ScanResult, *, dynamic: bool = False) -> FixMetrics:
    t = result.timings
    recompiles = None
    if result.recompiles is not None:
        recompiles = (result.recompiles.dynamic_recompile_count if dynamic
                      else len(result.recompiles.recompiles))
    return FixMetrics(graph_count=result.summary.graph_count,
                      breaks=result.summary.graph_break_count, recompiles=recompiles,
                      compiled_s=t.compiled.median_s if t and t.compiled else None,
                      speedup=t.speedup if t else None,
                      graph_calls_per_call=result.summary.graph_calls_per_call,
                      eager_gaps_per_call=result.summary.eager_gaps_per_call,
                      frames_run_eagerly_per_call=result.summary.frames_run_eagerly_per_call,
                      kernels_per_call=result.summary.kernels_per_call,
                      kernel_findings=len(result.kernel_findings)
                      if any(g.inductor is not None for g in result.graphs) else None)


def gained(before: FixMetrics, after: FixMetrics) -> bool:
    """A real gain: fewer graphs; per model call, fewer graph calls, returns to Python, frames
    run eagerly or (with --kernels) kernels launched; or fewer recompiles. Fewer break sites
    alone is not one (a break that only moved a line down still splits the graph and still
    returns to Python)."""
    def fewer(b: float | None, a: float | None) -> bool:
        return b is not None and a is not None and a < b

    return (after.graph_count < before.graph_count
            or fewer(before.graph_calls_per_call, after.graph_calls_per_call)
            or fewer(before.eager_gaps_per_call, after.eager_gaps_per_call)
            or fewer(before.frames_run_eagerly_per_call, after.frames_run_eagerly_per_call)
            or fewer(before.kernels_per_call, after.kernels_per_call)
            or fewer(before.recompiles, after.recompiles))


def fewer_findings(before: FixMetrics, after: FixMetrics) -> bool:
    """Fewer kernel rules' findings (a kernel rule's rewrite): a gain only when the same-process
    timing also says faster (:func:`judge`)."""
    return before.kernel_findings is not None and after.kernel_findings is not None and \
        after.kernel_findings < before.kernel_findings


def judge(fix: Fix, fixed: FixedScan, *, dynamic: bool) -> None:
    """Fill in ``after`` and the verdict: same outputs and a real gain, or not verified."""
    fix.after = metrics(fixed.result, dynamic=dynamic)
    fix.after.speedup = None  # no eager-relative number from another process: see fix.ab
    compiled = fixed.compiled_outputs
    same = fixed.same_outputs
    fix.outputs_match = same.match and (compiled is None or compiled.match)
    fix.max_abs_error = same.max_abs_error
    before, after = fix.before, fix.after
    # A kernel rule's rewrite: no structural gain, fewer findings; its timing decides.
    findings_only = not gained(before, after) and not worse(before, after) and \
        fewer_findings(before, after)
    failed = fixed.compile_error or (fixed.result.compile_error.message
                                     if fixed.result.compile_error else None)
    if failed:
        fix.status = "breaks compilation"
        fix.reason = f"breaks compilation: torch.compile fails with it: {failed}"
        fix.after = None  # no graph was made: "22 -> 0 graphs" would read as a gain
    elif not same.match:
        fix.status = "changes outputs"
        fix.reason = f"outputs differ from the original model: {same.message}"
        if "(changes training semantics)" in fix.title:  # expected of such a switch
            fix.reason = ("changes training semantics, so the outputs differ (expected when "
                          f"this switch is off): {fix_numbers_text(before, after)}")
    elif compiled is not None and not compiled.match:
        fix.status = "changes outputs"
        fix.reason = f"compiled outputs differ from eager with the fix: {compiled.message}"
    elif not gained(before, after) and not findings_only:
        fix.status = "makes it worse" if worse(before, after) else "no effect"
        fix.reason = (f"{fix.status}: graphs {before.graph_count} -> {after.graph_count}; per "
                      f"call, graph calls {whole(before.graph_calls_per_call)} -> "
                      f"{whole(after.graph_calls_per_call)}, returns to Python "
                      f"{whole(before.eager_gaps_per_call)} -> "
                      f"{whole(after.eager_gaps_per_call)}"
                      + (f"; recompiles {before.recompiles} -> {after.recompiles}"
                         if before.recompiles is not None or after.recompiles is not None
                         else "")
                      + (f"; kernels per call {whole(before.kernels_per_call)} -> "
                         f"{whole(after.kernels_per_call)}"
                         if before.kernels_per_call is not None
                         or after.kernels_per_call is not None else "")
                      + f" (breaks {before.breaks} -> {after.breaks}: fewer break sites alone "
                        "is no gain)")
    else:
        fix.status = "verified"
    _timing(fix, fixed, before, findings_only)
    fix.verified = fix.status == "verified"


def _timing(fix: Fix, fixed: FixedScan, before: FixMetrics, findings_only: bool) -> None:
    """The same-process timing onto the fix: its latencies, and the verdict it can change (a
    verified fix measurably slower; a kernel rule's rewrite, ``findings_only``, not measurably
    faster or not timed)."""
    after = fix.after
    if after is None:  # nothing compiled with it: no numbers, no timing
        return
    if fixed.ab is not None:  # both latencies from one process, never one from each
        fix.ab = fixed.ab
        fix.before = replace(before, compiled_s=fixed.ab.original.value)
        after.compiled_s = fixed.ab.fixed.value
        if fix.status == "verified" and findings_only and fixed.ab.verdict != "faster":
            fix.status = "slower" if fixed.ab.verdict == "slower" else "no effect"
            fix.reason = (f"removes {before.kernel_findings - after.kernel_findings} kernel "
                          f"finding(s), but {fixed.ab.verdict} in the same-process timing "
                          f"({fixed.ab.speedup.value:.2f}×): no gain")
        elif fix.status == "verified" and fixed.ab.verdict == "slower":
            fix.status = "slower"
            what = "removes the break" if after.breaks < before.breaks else \
                "fewer graphs or returns to Python"
            fix.reason = f"{what} · {1 / fixed.ab.speedup.value:.2f}× slower: no gain"
    else:
        after.compiled_s = None
        if fix.status == "verified" and findings_only:
            fix.status = "no effect"  # fewer kernel findings, and no timing to show a gain
            fix.reason = "removes a kernel finding, but it was not timed: no gain shown"


def fix_numbers_text(before: FixMetrics, after: FixMetrics) -> str:
    return (f"graphs {before.graph_count} -> {after.graph_count}, graph calls per call "
            f"{whole(before.graph_calls_per_call)} -> {whole(after.graph_calls_per_call)}")


def worse(before: FixMetrics, after: FixMetrics) -> bool:
    """More graphs, or per call more graph calls, returns to Python, frames run eagerly, or
    more recompiles (a Dynamo-hinted setting can do that: 3 -> 4 graphs was seen)."""
    def more(b: float | None, a: float | None) -> bool:
        return b is not None and a is not None and a > b

    return (after.graph_count > before.graph_count
            or more(before.graph_calls_per_call, after.graph_calls_per_call)
            or more(before.eager_gaps_per_call, after.eager_gaps_per_call)
            or more(before.frames_run_eagerly_per_call, after.frames_run_eagerly_per_call)
            or more(before.recompiles, after.recompiles))
