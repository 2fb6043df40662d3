"""The breaks no fix was proposed for, each with one line why (``unfixed``): a break a tried
fix removes, a switch acts on, or a tried setting names is not listed."""

from __future__ import annotations

from typing import Any

from ..frames import display_path
from ..model.result import ScanResult
from ..model.verdicts import Fix
from ..rules.catalogue import Chain, fixes_for, library_switches, rule_for
from .settings import hinted_settings


def unfixed(result: ScanResult, fixes: list[Fix]) -> list[str]:
    """``no fix proposed for #N: <why>`` for every break no fix was even tried for."""
    out = []
    for rank, brk in enumerate(result.breaks, 1):
        places = {(brk.file, brk.line)} | ({(brk.user_frame.file, brk.user_frame.line)}
                                           if brk.user_frame else set())
        if any((f.file, f.line) in places for f in fixes) or _switched(brk, fixes) or \
                any(rank in (f.removes or ()) for f in fixes) or _setting_tried(brk, fixes):
            continue
        out.append(f"no fix proposed for #{rank} ({brk.category} at "
                   f"{display_path(brk.file)}:{brk.line}): {_why_no_fix(brk)}")
    return out


def _why_no_fix(brk: Any) -> str:
    """One line: why nothing applies (Dynamo's registry calls it fundamental, the value
    depends on the data, library code, no rewrite), and what leaving it costs, measured."""
    category = brk.root_category
    if "FUNDAMENTAL" in (getattr(brk, "hint_classes", None) or []):
        why = "Dynamo's registry marks this break fundamental: Dynamo will not trace it"
    elif rule_for(category).data_dependent:
        why = ("the code needs a Python value of a tensor's data (data-dependent by design), "
               "and no tensor form of it was found")
    elif rule_for(category).no_automatic_fix:
        why = (f"breakscan has no automatic fix for this {category.replace('_', ' ')} break "
               "and Dynamo's hints name no setting")
    elif brk.owner != "user":
        why = ("the break is in library code, no rewrite of it applies, and no setting "
               "applies")
    else:
        why = "no rewrite applies to this line"
    cost = getattr(brk, "cost_s_per_call", None)
    if cost:  # measured and not nil (a break that runs nothing of its own costs no time)
        left = f"{cost * 1e6:.1f} µs" if cost < 1e-3 else f"{cost * 1e3:.1f} ms"
        return f"{why}; left as it is, it costs {left} per call (measured); follow the advice above"
    return f"{why}; follow the advice above"


def _setting_tried(brk: Any, fixes: list[Fix]) -> bool:
    """A setting this break's rule or Dynamo's hints for it name was tried (planned once per
    model, at the first break that names it)."""
    tried = {f.fix_id for f in fixes if f.kind == "setting" and f.status != "not tried"}
    named = {spec.id for spec in fixes_for(brk.root_category, "setting")}
    named |= {name for name, _ in hinted_settings(brk)}
    return bool(tried & named)


def _switched(brk: Any, fixes: list[Fix]) -> bool:
    """A library switch that acts on this break's call chain was tried, or a switch on its
    path (``switches.py``)."""
    from .switches import switches_for

    tried = {f.fix_id for f in fixes if f.kind == "switch"}
    if any(spec.id in tried and spec.applies(_chain(brk)) for spec in library_switches()):
        return True
    return any(s.fix_id in tried for s in switches_for(brk))


def _chain(brk: Any) -> Chain:
    return [(f.file, f.function) for f in brk.call_chain] + [(brk.file, brk.function)]



