"""What a fix gained: the one rule, over the whole picture, that every fix status follows.

A fix is judged on six axes, each counted before and after it, lower being better: frames run
eagerly, graph calls, returns to Python (all per model call), graphs, recompiles and (with
``--kernels``) kernels launched per call. A model that ran entirely eagerly (0 graphs) and now
compiles has gained, however many graphs and graph calls it now has. :func:`decide` is the
decision table of docs/fixes.md ("The gain decision table"), one row per ``if``; the tests
check every row. A fix that runs code eagerly on purpose (``disable_region``, ``eager_region``)
has one row more: it is never verified when the model ends with fewer graphs than it had, or
with none: making the model more eager is not a fix, however few breaks are left.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.result import whole
from ..model.verdicts import FixMetrics

# (the words in reports, the FixMetrics field), in the order they matter to a user.
AXES = (("frames run eagerly", "frames_run_eagerly_per_call"),
        ("graph calls per call", "graph_calls_per_call"),
        ("returns to Python per call", "eager_gaps_per_call"),
        ("graphs", "graph_count"),
        ("recompiles", "recompiles"),
        ("kernels per call", "kernels_per_call"))
_EPSILON = 1e-9  # per-call counts are averages over the counted calls
COMPILES_NOW = "compiles (it ran entirely eagerly before)"
# What a model that ran entirely eagerly gains with its first graphs, not counted against it:
# the graphs, their calls and the returns to Python between them (before, it was all Python).
_NEW_WHEN_COMPILED = ("graph_count", "graph_calls_per_call", "eager_gaps_per_call")


@dataclass
class Change:
    """Which axes a fix made better and which worse; ``fewer_findings`` for a kernel rule."""

    better: list[str] = field(default_factory=list)
    worse: list[str] = field(default_factory=list)
    fewer_findings: bool = False
    lost_graphs: bool = False  # fewer graphs after than before, or none at all

    @property
    def mixed(self) -> bool:
        return bool(self.better) and bool(self.worse)


def change(before: FixMetrics, after: FixMetrics) -> Change:
    """Each axis compared; a model with 0 graphs before and some after has gained
    :data:`COMPILES_NOW`, and its new graphs, graph calls and the returns to Python between
    them are not counted against it."""
    found = Change()
    compiles_now = before.graph_count == 0 and after.graph_count > 0
    if compiles_now:
        found.better.append(COMPILES_NOW)
    for words, name in AXES:
        b, a = getattr(before, name), getattr(after, name)
        if b is None or a is None:
            continue
        if a < b - _EPSILON:
            found.better.append(words)
        elif a > b + _EPSILON and not (compiles_now and name in _NEW_WHEN_COMPILED):
            found.worse.append(words)
    found.lost_graphs = after.graph_count == 0 or after.graph_count < before.graph_count
    found.fewer_findings = before.kernel_findings is not None and \
        after.kernel_findings is not None and after.kernel_findings < before.kernel_findings
    return found


def worth_timing(found: Change) -> bool:
    """Whether the same-process timing can decide anything: something got better."""
    return bool(found.better) or found.fewer_findings


def decide(found: Change, *, compiles: bool, outputs_same: bool, timing: str | None,
           eager_region: bool = False) -> str:
    """The status, from the table in docs/fixes.md. ``timing``: the same-process verdict
    (``faster``, ``slower``, ``no measurable difference``) or None when not timed;
    ``eager_region``: the fix runs code eagerly on purpose (``disable_region``)."""
    if not compiles:
        return "breaks compilation"
    if not outputs_same:
        return "changes outputs"
    if not found.better and not found.worse:
        if found.fewer_findings:  # a kernel rule's rewrite: only a faster timing is a gain
            return {"faster": "verified", "slower": "slower"}.get(timing or "", "no effect")
        return "no effect"
    if eager_region and found.lost_graphs:  # more of the model eager: never a fix
        return "makes it worse"
    if not found.better:
        return "makes it worse"
    if found.worse:  # a trade: verified only when it is measurably faster
        return "verified" if timing == "faster" else "makes it worse"
    if timing is None:
        return "not tried"  # better, but never timed against the original: nothing proven
    return "slower" if timing == "slower" else "verified"


def numbers_text(before: FixMetrics, after: FixMetrics) -> str:
    """Every axis that was counted on either side, ``before -> after``."""
    parts = []
    for words, name in (("graphs", "graph_count"),) + tuple(
            a for a in AXES if a[1] != "graph_count"):
        b, a = getattr(before, name), getattr(after, name)
        if b is not None or a is not None:
            parts.append(f"{words} {whole(b)} -> {whole(a)}")
    if before.cold_compile_s is not None and after.cold_compile_s is not None:  # regional
        parts.append(f"cold compile {before.cold_compile_s:.2f} s -> "
                     f"{after.cold_compile_s:.2f} s")
    return ", ".join(parts)


def change_text(found: Change) -> str:
    """'fewer returns to Python per call; more graphs' (what the status rests on)."""
    parts = []
    if found.better:
        parts.append("better: " + ", ".join(found.better))
    if found.worse:
        parts.append("worse: " + ", ".join(found.worse))
    if found.fewer_findings:
        parts.append("fewer kernel findings")
    return "; ".join(parts) or "nothing changed"
