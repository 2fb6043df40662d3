"""Recompiles read from Dynamo's text, and what to do about them: the ``recompiles`` log
parsed (guard failures, the user lines a guard names), a program's or a trace's recompiles with
the call that triggered each, and the advice from what the recompile check showed.

Torch-free: :mod:`breakscan.pipeline.recompiles` runs the compiled model and calls these;
``breakscan trace`` reads a job's recompiles with them.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from typing import Any

from ..frames import Frame, is_torch_file, is_user_file, module_ast
from ..model.records import Recompile, RecompileReport
from ..rules.bs035_recompile_limit import RULE as RECOMPILE_LIMIT
from ..rules.recompiles import SHAPE_BRANCH

_HEADER = re.compile(r"Recompiling function (?P<fn>\S+) in (?P<file>.+):(?P<line>\d+)")
_REASON = re.compile(r"^\s*-\s*(?P<cid>\d+/\d+):\s*(?P<reason>.+?)\s*$")
_GUARD_SOURCE = re.compile(r"#\s*(?P<file>[^\s#]+):(?P<line>\d+) in (?P<fn>\w+)")
_LIMIT = re.compile(r"recompile_limit|cache_size_limit|cache size limit|recompile limit", re.I)


def parse_recompile_message(text: str) -> Recompile | None:
    """Parse the ``recompiles`` artifact: header line, then ``- 0/0: <guard failure>`` lines."""
    header = _HEADER.search(text)
    if not header:
        return None
    matches = [m for m in map(_REASON.match, text.splitlines()) if m]
    reasons = list(dict.fromkeys(m.group("reason") for m in matches))  # each failure once
    failed = list(dict.fromkeys(m.group("cid") for m in matches))
    return Recompile(function=header.group("fn"), file=header.group("file"),
                     line=int(header.group("line")), reasons=reasons,
                     failed_compile_ids=failed, input_set=None,
                     guard_lines=guard_source_lines(reasons))


def _resolve(fragment: str) -> str | None:
    """Dynamo shortens paths in guard comments ("ork/main/model.py"): find the loaded file."""
    if os.path.isabs(fragment):
        return fragment
    if os.path.isfile(fragment):  # relative to the working folder, as Dynamo prints it
        return os.path.abspath(fragment)
    tail = fragment.split("/", 1)[1] if "/" in fragment else fragment
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(fragment) and path.endswith(os.sep + tail):
            return path
    return None


def guard_source_lines(reasons: list[str]) -> list[str]:
    """User ``file:line`` s a guard names (the shape branch that specialised), torch's dropped."""
    found: list[str] = []
    for reason in reasons:
        for m in _GUARD_SOURCE.finditer(reason):
            path = _resolve(m.group("file"))
            if path and not is_torch_file(path):
                loc = f"{path}:{m.group('line')}"
                if loc not in found:
                    found.append(loc)
    return found


def hit_limit(metric: Any) -> bool:
    """A compilation-metrics row that says the frame hit Dynamo's recompile limit."""
    return bool(_LIMIT.search(f"{metric.fail_type or ''} {metric.fail_reason or ''}"))


def program_recompiles(logs: list[str], stacks: list[list[tuple[str, int, str]]],
                       metrics: list[Any], graph_count: int,
                       limit: int | None) -> RecompileReport:
    """``breakscan run`` (and ``breakscan trace``): every recompile of the run, with its guard
    failures, the user lines its guards name, and the user's frames of the call that recompiled
    (``limit``: Dynamo's recompile limit)."""
    recompiles: list[Recompile] = []
    for index, text in enumerate(logs):
        record = parse_recompile_message(text)
        if record is None:
            continue
        stack = stacks[index] if index < len(stacks) else []
        record.called_from = [Frame(file, line, fn) for file, line, fn in stack
                              if is_user_file(file)]
        recompiles.append(record)
    hits = [f"{m.name or '?'} ({m.file}:{m.first_line})" for m in metrics if hit_limit(m)]
    report = RecompileReport(input_sets=[], graph_count=graph_count, recompiles=recompiles,
                             limit_hits=hits, recompile_limit=limit)
    reasons = [r for rec in recompiles for r in rec.reasons]
    advice = []
    if any("size mismatch" in r for r in reasons):
        advice.append("An input changed size. With torch's default (automatic dynamic "
                      "shapes) the recompiled graph takes that dimension as dynamic and later "
                      "sizes reuse it, so one recompile per compiled variant of a frame is "
                      "expected (sizes that keep recompiling mean dynamic=False or code that "
                      "specialises on the size); to avoid even that one, compile with "
                      "dynamic=True or call torch._dynamo.mark_dynamic(x, dim) before the first "
                      "call, or keep the size fixed (drop_last=True, padding).")
    if any("requires_grad mismatch" in r for r in reasons):
        advice.append("A frame was called with inputs that do and do not require grad (the "
                      "first layer's input and the later layers', say): Dynamo compiles it "
                      "once for each. It compiles as a frame of its own only because a break "
                      "cut it out of its caller's graph: fix that break and it is inlined.")
    if hits:
        advice.append(limit_advice(hits, limit, recompiles))
    report.suggestion = " ".join(advice) or None
    return report


_HINT = re.compile(r"\(HINT: (?P<hint>.+)\)\s*$")


def limit_advice(hits: list[str], limit: int | None, recompiles: list[Recompile]) -> str:
    """The recompile limit hit (GB0039, rule recompile_limit): which frame now runs eagerly,
    the guard that kept failing and where it comes from, Dynamo's own hint for that guard."""
    text = (f"The recompile limit (torch._dynamo.config.recompile_limit = {limit}) was hit "
            f"(GB0039): {', '.join(hits)} now runs eagerly.")
    newest = recompiles[-1] if recompiles else None
    if newest is not None and newest.reasons:
        guard = newest.reasons[0].split("  #")[0].strip()
        where = f" (set by {', '.join(newest.guard_lines)})" if newest.guard_lines else ""
        text += f" The guard that kept failing: `{guard}`{where}."
        hints = [m.group("hint") for m in map(_HINT.search, newest.reasons) if m]
        if hints:
            text += f" Dynamo's hint: {hints[0]}"
    return f"{text} {RECOMPILE_LIMIT.suggestion}"


def specialised_note(report: RecompileReport, specialised: list[int]) -> str:
    """The input sets with a size 0 or 1, which compile their own graph whatever ``dynamic``."""
    shapes = "; ".join(" ".join("x".join(map(str, s)) for s in report.input_sets[i])
                       for i in specialised)
    return (f"Dynamo always specialises sizes 0 and 1: the input set(s) {shapes} compile their "
            "own graph with or without dynamic=True (use torch._dynamo.mark_unbacked(x, dim) "
            "or keep sizes >= 2 if that matters).")


def suggest_partial(report: RecompileReport, specialised: list[int],
                    base: list[Recompile], dyn: list[Recompile]) -> str:
    """Advice when only the sets without a size 0 or 1 were replayed with dynamic=True."""
    note = specialised_note(report, specialised)
    if len(dyn) < len(base):
        return (f"{note} Over the other {report.dynamic_replayed} set(s), dynamic=True helps "
                f"(verified: {len(base)} -> {len(dyn)} recompiles); or call "
                "torch._dynamo.mark_dynamic(x, dim) on the varying dimension.")
    return (f"{note} Over the other {report.dynamic_replayed} set(s), dynamic=True does not "
            f"help ({len(dyn)} recompile(s) remain): Python code specialises on the shape.")


def suggest_dynamic(report: RecompileReport, recompiles: list[Recompile],
                    dyn_recompiles: list[Recompile]) -> str:
    """Advice from what the two runs showed, not from a rule of thumb."""
    branches = sorted({loc for rec in recompiles for loc in rec.guard_lines})
    where = f" The failing guard comes from {', '.join(branches)}." if branches else ""
    if len(dyn_recompiles) < len(recompiles):
        return (f"Compile with dynamic=True (verified: {len(recompiles)} -> {len(dyn_recompiles)} "
                f"recompiles, {report.graph_count} -> {report.dynamic_graph_count} graphs over "
                "these input sets), or call torch._dynamo.mark_dynamic(x, dim) on the varying "
                f"dimension before the first call.{where}")
    tiny = any(d in (0, 1) for shapes in report.input_sets for shape in shapes for d in shape)
    if tiny:
        return (f"dynamic=True does not help here ({len(dyn_recompiles)} recompiles remain): "
                "Dynamo always specialises sizes 0 and 1, so an input set with a size-1 "
                "dimension compiles its own graph; use torch._dynamo.mark_unbacked(x, dim) or "
                f"keep batch sizes >= 2.{where}")
    if any("size mismatch" in r or "size()" in r for rec in recompiles for r in rec.reasons):
        return (f"dynamic=True does not help here ({len(dyn_recompiles)} recompiles remain): "
                "Python code specialises on the shape (a branch like `if x.shape[0] > 8` or a "
                f"loop over `range(x.shape[0])`); make it shape-independent.{where}")
    return ("The failing guards are not about shapes (a global or attribute that changes "
            "between calls): keep such state out of forward.")


def link_shape_branches(report: RecompileReport, findings: list[Any]) -> None:
    """Tie recompiles to the shape branches lint found in the recompiled function, and say one
    consistent thing about them.

    Dynamo's guard text often names no user line (``size mismatch at index 1``); the static
    finding does. A Python branch over a shape has two code paths, so two graphs are expected:
    when the replay showed dynamic=True does not remove the recompile, neither the report nor the
    lint recommends it.
    """
    branches = [f for f in findings if f.category == SHAPE_BRANCH.category]
    linked = []
    for rec in report.recompiles:
        tree = module_ast(rec.file)
        spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.lineno <= rec.line <= (n.end_lineno or n.lineno)] if tree else []
        for finding in branches:
            if os.path.realpath(finding.file) == os.path.realpath(rec.file) and any(
                    a <= finding.line <= b for a, b in spans):
                loc = f"{finding.file}:{finding.line}"
                if loc not in rec.guard_lines:
                    rec.guard_lines.append(loc)
                if finding not in linked:
                    linked.append(finding)
    if not linked or report.dynamic_helps is not False:
        return
    where = ", ".join(f"{os.path.basename(f.file)}:{f.line} `{f.code}`" for f in linked)
    specialised = specialised_note(report, report.specialised_sets) + " " \
        if report.specialised_sets else ""
    report.suggestion = specialised + (
        f"The recompile comes from the Python branch on a shape at {where}: two code paths "
        "need two graphs, which is expected and not a defect. dynamic=True does not remove it "
        f"(verified: {report.dynamic_recompile_count} recompile(s) remain); only making the "
        "branch go (one code path, or a tensor op over the shape) would.")
    for finding in linked:
        finding.message = ("`if` on a tensor's size: each code path is its own compiled graph "
                           "(expected); this scan's recompile check showed dynamic=True does "
                           "not remove it")
