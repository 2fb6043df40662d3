"""The verdict on a fix: the numbers before and after it, its outputs, and its status.

The status follows one rule (:mod:`.gain`: what got better and what worse over the whole
picture, then the same-process timing where the two disagree). Outputs are judged against the
unfixed model's own drift: compiling alone already moves a model's outputs (float32
reassociation, a sampler's 1e-4), so a fix "changes outputs" only when its eager outputs differ
from the original's, or when compiled with it they move further from eager than the compiled
original did (:data:`DRIFT_FACTOR` times, beyond the dtype's tolerance).
"""

from __future__ import annotations

from dataclasses import replace

from ..model.result import FixedScan, ScanResult
from ..model.verdicts import Correctness, Fix, FixMetrics, quoted_names
from .gain import Change, change, change_text, decide, numbers_text
from .regional import FIX_ID as REGIONAL, judge_regional, record_compile

DRIFT_FACTOR = 2.0  # a fix's compiled outputs may drift this many times the original's
# In a switch's title (fixes/plan.py): layer drop, requires_grad, freezing; judged with care
TRAINING_SEMANTICS = "(changes training semantics)"
# A switch proved compiled against its own eager run that changes what the model computes.
CHANGES_SEMANTICS = "verified: changes semantics"


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


def within_drift(fixed: Correctness | None, baseline: Correctness | None) -> bool:
    """The fix's compiled outputs are as close to eager as the original's compiled outputs
    were (or within the dtype's tolerance)."""
    if fixed is None or fixed.match:
        return True
    if fixed.scaled_error is None or baseline is None or baseline.scaled_error is None:
        return False
    return fixed.scaled_error <= DRIFT_FACTOR * baseline.scaled_error


def semantics(fix: Fix, fixed: FixedScan) -> str | None:
    """What a switch (or a rewrite that says so, where the fixed model draws random numbers:
    ``fixed.changes``) changes in what the model computes, against the original, in words a
    person reads before applying it; None for a fix that keeps the model's computation (every
    other source fix and setting is judged on the original's outputs instead)."""
    if fix.fix_id == "warm_up":  # a warm-up keeps the computation: its outputs are judged
        return None  # on the original's (a state it left shows there)
    if fix.kind != "switch" and (fix.changes is None or fix.changes not in fixed.changes):
        return None  # a rewrite changes it only where it says so and the child saw it
    parts = list(fixed.changes)
    if not fixed.same_outputs.match:
        parts.append(f"its outputs differ from the original model's "
                     f"({fixed.same_outputs.message})")
    if TRAINING_SEMANTICS in fix.title:
        parts.append("it turns off a training behaviour (layer drop, masking, noise or "
                     "freezing, by its name)" + ("" if not fixed.same_outputs.match else
                                                 "; on these inputs the outputs are the same"))
    return "; ".join(parts) or None


def _outputs_reason(fix: Fix, fixed: FixedScan, changes: str | None = None) -> str | None:
    """Why the fix's outputs count as changed, or None when they do not. A switch that changes
    what the model computes (``changes``), or a rewrite that says it does, is judged against
    its own eager run only."""
    same, compiled, baseline = fixed.same_outputs, fixed.compiled_outputs, fixed.baseline
    if changes is not None:  # no compiled run (no gain, nothing timed): nothing to judge
        if compiled is not None and not within_drift(compiled, baseline):
            changed = "switched" if fix.kind == "switch" else "rewritten"
            return (f"compiled, the {changed} model's outputs differ from its own eager run "
                    f"further than compiling the original did: {compiled.message}")
        return None
    if not same.match and fixed.warmed:
        return (f"the warm-up call changed the model's state ({quoted_names(fixed.warmed)}) "
                f"and left it so: the warmed-up model's calls start from there, not from the state it "
                f"was built with, so its outputs differ from the original's call for call "
                f"({same.message}); warming up helps this model only where that state is put "
                f"back afterwards without undoing what the warm-up built")
    if not same.match:
        return f"outputs differ from the original model: {same.message}"
    if not within_drift(compiled, baseline):
        drift = f"{baseline.scaled_error:.2g}" if baseline and baseline.scaled_error is not \
            None else "unmeasured"
        return (f"compiled with the fix, outputs differ from eager further than compiling "
                f"the original did ({drift}): {compiled.message if compiled else ''}")
    return None


def judge(fix: Fix, fixed: FixedScan, *, dynamic: bool) -> None:
    """Fill in ``after``, the outputs and the status (:func:`.gain.decide`) with its reason."""
    fix.after = metrics(fixed.result, dynamic=dynamic)
    fix.after.speedup = None  # no eager-relative number from another process: see fix.ab
    fix.outputs_match = fixed.same_outputs.match and within_drift(fixed.compiled_outputs,
                                                                  fixed.baseline)
    fix.max_abs_error = fixed.same_outputs.max_abs_error
    fix.baseline_error = fixed.baseline.scaled_error if fixed.baseline else None
    fix.random = fixed.random
    before, after = fix.before, fix.after
    failed = fixed.compile_error or (fixed.result.compile_error.message
                                     if fixed.result.compile_error else None)
    found = change(before, after)
    changes = semantics(fix, fixed)
    outputs_reason = _outputs_reason(fix, fixed, changes)
    if fixed.ab is not None:  # both latencies from one process, never one from each
        fix.ab = fixed.ab
        fix.before = before = replace(before, compiled_s=fixed.ab.original.value)
        after.compiled_s = fixed.ab.fixed.value
    else:
        after.compiled_s = None
    timing = fixed.ab.verdict if fixed.ab is not None else None
    fix.status = decide(found, compiles=not failed, outputs_same=outputs_reason is None,
                        timing=timing, eager_region=fix.fix_id == "disable_region")
    fix.reason = _reason(fix.status, found, before, after, failed, outputs_reason, fixed, fix)
    if fix.status == "verified" and changes is not None:  # proved, but not the same model
        fix.status = CHANGES_SEMANTICS
        changed = "switched" if fix.kind == "switch" else "rewritten"
        fix.reason = (f"changes what the model computes: {changes}. Compiled, the {changed} "
                      f"model matches its own eager run; apply it only if that change is what "
                      f"you want" + (f" ({fix.reason})" if fix.reason else ""))
    if fixed.rescued and not failed and outputs_reason is None and found.better:
        # torch.compile failed on the original; with it, it runs
        fix.status = "verified" if changes is None else CHANGES_SEMANTICS
        fix.reason = (f"the original fails compiled with this backend; with it, the model "
                      f"compiles and matches eager: {numbers_text(before, after)} (not timed: "
                      "the original has no compiled run to time against)")
        if changes is not None:
            fix.reason = f"changes what the model computes: {changes}; {fix.reason}"
    if fix.status == "breaks compilation":
        fix.after = None  # no graph was made: "22 -> 0 graphs" would read as a gain
    fix.verified = fix.status == "verified"
    fix.changes = changes  # a rewrite's declared change stays only where it showed
    if fix.fix_id == REGIONAL:  # judged on its compile time, not on the graphs it adds
        judge_regional(fix, fixed, outputs_reason)
    else:
        record_compile(fix, fixed)


def _reason(status: str, found: Change, before: FixMetrics, after: FixMetrics,
            failed: str | None, outputs_reason: str | None, fixed: FixedScan,
            fix: Fix | None = None) -> str | None:
    """The reason a report prints next to the status: what it rests on, in numbers."""
    numbers = numbers_text(before, after)
    timed = ""
    if fixed.ab is not None:
        timed = f"; same-process timing: {fixed.ab.said()}"
    if status == "breaks compilation":
        return f"breaks compilation: torch.compile fails with it: {failed}"
    if status == "changes outputs":
        return f"{outputs_reason} ({numbers})"
    if status == "verified":
        said = [f"a trade ({change_text(found)}), measurably faster{timed}"] if found.mixed \
            else []
        return "; ".join(said) or None
    if status == "not tried":
        return f"{change_text(found)}, but its timing against the original did not run"
    if found.fewer_findings and not found.better and not found.worse:
        timing = "not timed" if fixed.ab is None else \
            f"{fixed.ab.said()} in the same-process timing"
        return (f"removes {before.kernel_findings - after.kernel_findings} kernel finding(s), "
                f"but {timing}: no gain")
    if status == "no effect":
        sites = " (fewer break sites alone is no gain)" if after.breaks < before.breaks else ""
        return f"no effect: {numbers}{sites}{timed}"
    if status == "makes it worse" and fix is not None and fix.fix_id == "disable_region" and found.lost_graphs:
        return f"makes it worse: runs more of the model eagerly: {numbers}"
    why = {"slower": "measurably slower: no gain",
           "makes it worse": "not measurably faster" if found.better else "nothing fewer"}
    return f"{status}: {numbers} ({change_text(found)}; {why[status]}{timed})"
