"""Verifying ``--fix``: each planned fix applied in its own child process, rescanned and judged.

A fix is only called verified when a fresh child process (``isolate.run_isolated`` with a fix)
has applied it — a Dynamo config value, ``dynamic=True``, a library switch, constants made Python
values, or the rewritten module loaded from a temporary copy of the target's folder or package —
rescanned, run eager and compiled, matched the original model's outputs (same weights, same
inputs), and something got better (``gain.change``); then it is timed against the original in
that process and judged (``judge``: the table in ``gain.decide``). Every compared call starts
from the same random state (``pipeline/outputs.reseed``); a model that draws random numbers is
compiled to draw eager's (``fallback_random``) for both the original and the fix. This is the parent's half
(it never imports torch); the child's job is ``fix_job.scan_with_fix``.
"""

from __future__ import annotations

import os
import re

from typing import Callable

from ..frames import display_path
from ..model.result import FixedScan, ScanResult
from ..model.verdicts import Fix
from ..options import Limits, ScanOptions
from ..process.jobs import FIX_JOB
from .judge import judge
from .plan import FixPlan, plan_fixes


class FixesInterrupted(Exception):
    """Ctrl-C / SIGTERM during a verification: the fixes verified so far, and the exit code."""

    def __init__(self, fixes: list[Fix], exit_code: int, error: str):
        super().__init__(error)
        self.fixes, self.exit_code, self.error = fixes, exit_code, error


def verify_fixes(target: str, options: ScanOptions, result: ScanResult, limits: Limits, *,
                 on_fix: Callable[[Fix], None] | None = None,
                 on_stage: Callable[[str], None] | None = None,
                 plans: list[FixPlan] | None = None, isolate: bool = True) -> list[Fix]:
    """Plan and verify every fix (or only ``plans``), each in its own child process (the
    scan's options and limits), and ``on_fix(fix)`` as each is judged.

    ``on_stage("fix 2/4: torch_where · explain")`` follows the verifications live.
    ``isolate=False`` runs each fix's job in this process instead (``child.run_here``: the
    same job and judgement, no limits, seconds faster each where torch is already imported).
    """
    from ..process.child import run_here
    from ..process.isolate import run_isolated

    fixes = []
    plans = plan_fixes(target, result) if plans is None else plans
    for number, plan in enumerate(plans, 1):
        fix = plan.fix
        if fix.reason is None:
            label = f"fix {number}/{len(plans)}: {fix.fix_id}"
            stage = (lambda name, label=label: on_stage(f"{label} · {name}")) if on_stage \
                else None
            request = plan.request(target, options)
            run = run_isolated(FIX_JOB, request, target=target, limits=limits,
                               on_stage=stage, returns=FixedScan) if isolate else \
                run_here(FIX_JOB, request, target=target, on_stage=stage)
            if run.interrupted:
                fix.reason = f"verification {run.error}"
                fixes.append(fix)
                if on_fix:
                    on_fix(fix)
                raise FixesInterrupted(fixes, run.exit_code,
                                       f"{run.error} (verifying fix {fix.fix_id})")
            if run.error is not None:
                applicable = not run.error.startswith("not applicable")
                fix.status = "not tried" if applicable else "not applicable"
                fix.reason = f"verification did not finish: {run.error}" if applicable \
                    else run.error
            else:
                judge(fix, run.result, dynamic=bool(plan.dynamic))
                fix.removes = removed_breaks(result, run.result.result, fix)
                moved = moved_breaks(result, run.result.result, fix)
                if moved and fix.reason:
                    fix.reason = f"{fix.reason}; {moved}"
                if fix.fix_id == "tolist_loop" and _breaks_at_rewrite(run.result.result, fix):
                    fix.reason = (f"{fix.reason}; " if fix.reason else "") + (
                        "the break that remains is the rewritten line's own `.tolist()` (one "
                        "transfer to Python before the loop instead of one per step)")
                if run.result.set_to is not None:
                    _name_the_value(fix, run.result.set_to)
                if run.result.observed_fake is not None:
                    _show_observed(fix, run.result.observed_fake)
        fixes.append(fix)
        if on_fix:
            on_fix(fix)
    return fixes


def _show_observed(fix: Fix, fake: str) -> None:
    """An escape hatch whose fake the child read off the eager run: its diff and title with
    that fake (``fix.call`` carries it, so ``--write`` writes the same), never the placeholder."""
    from ..files import read_source
    from .observe import expression
    from .rewrite import unified_diff
    from .source_fixes import propose_rewrite

    fix.call = expression(fake)
    try:
        source, _ = read_source(fix.file or "")
    except (OSError, UnicodeDecodeError):
        return
    rewrite = propose_rewrite(source, fix.line or 0, fix.fix_id, category=fix.category,
                              call=fix.call)
    if rewrite.new_source is not None:
        fix.diff = unified_diff(source, rewrite.new_source, display_path(fix.file or ""))
        fix.title = f"{rewrite.title} ({fake.split(' (', 1)[1]}"


def _name_the_value(fix: Fix, value: str) -> None:
    """A flipped switch's code and title with the value it set (``model.config.x = False``),
    never ``x = not x``."""
    fix.setting = re.sub(r"not (model\.config|module)\.\w+", value, fix.setting or "")
    fix.title = fix.title.replace("= not current", f"= {value}")


def _breaks_at_rewrite(fixed: ScanResult, fix: Fix) -> bool:
    """Does the fixed copy break at a line the rewrite wrote (its code one of the diff's added
    lines, in a file of the same name)?"""
    name = os.path.basename(fix.file or "")
    added = {line[1:].strip() for line in (fix.diff or "").splitlines()
             if line.startswith("+") and not line.startswith("+++")}
    return any(os.path.basename(b.file) == name and b.code.strip() in added
               for b in fixed.breaks)


def moved_breaks(result: ScanResult, fixed: ScanResult, fix: Fix) -> str | None:
    """For a fix with no gain: where the break went when it left its line for another (a
    setting that lets Dynamo trace further, only to break again), else None."""
    if fix.kind in ("source", "library") or fix.status not in ("no effect", "makes it worse",
                                                               "slower"):
        return None
    before = {(b.file, b.line) for b in result.breaks}
    after = {(b.file, b.line) for b in fixed.breaks}
    gone = [b for b in result.breaks if (b.file, b.line) not in after]
    new = [b for b in fixed.breaks if (b.file, b.line) not in before]
    if not gone or not new:
        return None
    return ("the break moved: " + ", ".join(f"{display_path(b.file)}:{b.line}" for b in gone[:3])
            + " → " + ", ".join(f"{display_path(b.file)}:{b.line} ({b.root_category})"
                                for b in new[:3]))


def removed_breaks(result: ScanResult, fixed: ScanResult, fix: Fix) -> list[int] | None:
    """The ranks (1-based) of ``result``'s root causes whose line the fixed scan no longer
    breaks at; None for a source fix or a library patch (its rewritten copy moves the lines)
    or when the fix broke compilation (no scan to read)."""
    if fix.kind in ("source", "library") or fix.status == "breaks compilation":
        return None
    after = {(brk.file, brk.line) for brk in fixed.breaks}
    return [rank for rank, brk in enumerate(result.breaks, 1)
            if (brk.file, brk.line) not in after]
