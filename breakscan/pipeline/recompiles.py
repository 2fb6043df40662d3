"""Recompiles across input shapes: call the compiled model with each input set and record
every recompile with Dynamo's guard-failure reason.

Runs ``torch.compile(fn, backend=<recording eager backend>)``: guards and recompiles are
Dynamo's, so no inductor compile is needed. When shapes caused recompiles, the same sets are
replayed with ``dynamic=True`` to *show* whether that removes them, instead of just advising it.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from typing import Any, Callable

from ..frames import Frame, is_torch_file, is_user_file
from ..errors import as_model_error
from ..result import Recompile, RecompileReport

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


def _run_sets(fn: Callable[..., Any], sets: list[tuple[Any, ...]], *, training: bool,
              dynamic: bool | None) -> tuple[int, list[Recompile], list[str]]:
    """Compile once, call with each input set; (graphs, recompiles, frames that hit the limit)."""
    import torch

    from ..dynamo.hooks import dynamo_session, read_metrics

    graphs: list[str] = []

    def recording_backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable[..., Any]:
        graphs.append(str(torch._guards.CompileContext.current_compile_id()))
        return gm.forward

    recompiles: list[Recompile] = []
    limit_hits: list[str] = []
    with dynamo_session(training=training) as session:
        compiled = torch.compile(fn, backend=recording_backend, dynamic=dynamic)
        for index, args in enumerate(sets):
            seen = len(session.recompile_logs)
            try:
                compiled(*args)
            except Exception as exc:
                shapes = [list(a.shape) for a in args if isinstance(a, torch.Tensor)]
                raise as_model_error(exc, f"compiled call with input shapes {shapes}") from exc
            for text in session.recompile_logs[seen:]:
                record = parse_recompile_message(text)
                if record is not None:
                    record.input_set = index
                    recompiles.append(record)
        for m in read_metrics(session.notes):
            if _LIMIT.search(f"{m.fail_type or ''} {m.fail_reason or ''}"):
                last = recompiles[-1] if recompiles else None  # the metric row may lack a name
                name = m.name or (last.function if last else "?")
                where = f"{m.file}:{m.first_line}" if m.file else \
                    (f"{last.file}:{last.line}" if last else "?")
                limit_hits.append(f"{name} ({where})")
    return len(graphs), recompiles, limit_hits


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
    hits = [f"{m.name or '?'} ({m.file}:{m.first_line})" for m in metrics
            if _LIMIT.search(f"{m.fail_type or ''} {m.fail_reason or ''}")]
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
        advice.append(f"The recompile limit (torch._dynamo.config.recompile_limit = {limit}) "
                      f"was hit: {', '.join(hits)} now runs eagerly.")
    report.suggestion = " ".join(advice) or None
    return report


def _specialised_sets(sets: list[tuple[Any, ...]]) -> list[int]:
    """Input sets with a size 0 or 1 where another set has a different size.

    Dynamo always specialises sizes 0 and 1 (dynamic=True or not), so such a set compiles its
    own graph whatever ``dynamic`` says: replaying it with dynamic=True can only confirm that.
    """
    import torch

    shapes = [[tuple(a.shape) for a in args if isinstance(a, torch.Tensor)] for args in sets]
    out = []
    for index, these in enumerate(shapes):
        for i, shape in enumerate(these):
            for d, size in enumerate(shape):
                varies = any(len(other) > i and len(other[i]) > d and other[i][d] != size
                             for other in shapes)
                if size in (0, 1) and varies and index not in out:
                    out.append(index)
    return out


def check_recompiles(fn: Callable[..., Any], sets: list[tuple[Any, ...]], *,
                     training: bool = False, dynamic_check: bool = True,
                     on_stage: Callable[[str], None] | None = None,
                     dynamic: bool | None = None) -> RecompileReport:
    """Exercise ``fn`` over ``sets`` as ``torch.compile(dynamic=dynamic)`` would, then (when
    the user's setting is not ``dynamic=True`` already) try ``dynamic=True``.

    The dynamic=True replay leaves out input sets with a specialised size 0 or 1 (Dynamo never
    makes those dynamic) and is skipped when fewer than two sets remain or ``dynamic_check`` is
    off (``--no-dynamic-check``).
    """
    import torch

    from ..dynamo.hooks import recompile_limit

    graphs, recompiles, limit_hits = _run_sets(fn, sets, training=training, dynamic=dynamic)
    report = RecompileReport(
        input_sets=[[list(a.shape) for a in args if isinstance(a, torch.Tensor)] for args in sets],
        graph_count=graphs, recompiles=recompiles, limit_hits=limit_hits,
        recompile_limit=recompile_limit())
    specialised = _specialised_sets(sets)
    report.specialised_sets = specialised
    if recompiles and dynamic:
        report.suggestion = ("compiled with dynamic=True already (--dynamic true): these "
                             "recompiles come from guards dynamic shapes cannot lift (a branch "
                             "on a size, a size 0 or 1); see the guards above.")
    elif recompiles and not dynamic_check:
        report.suggestion = "dynamic=True was not tried (--no-dynamic-check)."
    elif recompiles:
        replay = [args for i, args in enumerate(sets) if i not in specialised]
        if len(replay) >= 2:
            if on_stage:
                on_stage("recompiles (dynamic=True replay)")
            dyn_graphs, dyn_recompiles, _ = _run_sets(fn, replay, training=training,
                                                      dynamic=True)
            if len(replay) < len(sets):  # the graphs the specialised sets need anyway
                base, base_recompiles, _ = _run_sets(fn, replay, training=training, dynamic=None)
                report.dynamic_replayed = len(replay)
                report.dynamic_graph_count = dyn_graphs
                report.dynamic_recompile_count = len(dyn_recompiles)
                report.dynamic_helps = len(dyn_recompiles) < len(base_recompiles)
                report.suggestion = _suggest_partial(report, specialised, base_recompiles,
                                                     dyn_recompiles)
            else:
                report.dynamic_graph_count = dyn_graphs
                report.dynamic_recompile_count = len(dyn_recompiles)
                report.dynamic_helps = len(dyn_recompiles) < len(recompiles)
                report.suggestion = _suggest(report, recompiles, dyn_recompiles)
        else:
            report.suggestion = _specialised_note(report, specialised) + \
                " dynamic=True was not replayed: it cannot change that."
    if limit_hits:
        report.suggestion = (report.suggestion or "") + (
            f" The recompile limit (torch._dynamo.config.recompile_limit = "
            f"{report.recompile_limit}) was hit: {', '.join(limit_hits)} now runs eagerly.")
    return report


def _specialised_note(report: RecompileReport, specialised: list[int]) -> str:
    shapes = "; ".join(" ".join("x".join(map(str, s)) for s in report.input_sets[i])
                       for i in specialised)
    return (f"Dynamo always specialises sizes 0 and 1: the input set(s) {shapes} compile their "
            "own graph with or without dynamic=True (use torch._dynamo.mark_unbacked(x, dim) "
            "or keep sizes >= 2 if that matters).")


def _suggest_partial(report: RecompileReport, specialised: list[int],
                     base: list[Recompile], dyn: list[Recompile]) -> str:
    note = _specialised_note(report, specialised)
    if len(dyn) < len(base):
        return (f"{note} Over the other {report.dynamic_replayed} set(s), dynamic=True helps "
                f"(verified: {len(base)} -> {len(dyn)} recompiles); or call "
                "torch._dynamo.mark_dynamic(x, dim) on the varying dimension.")
    return (f"{note} Over the other {report.dynamic_replayed} set(s), dynamic=True does not "
            f"help ({len(dyn)} recompile(s) remain): Python code specialises on the shape.")


def _suggest(report: RecompileReport, recompiles: list[Recompile],
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
    from ..frames import module_ast

    branches = [f for f in findings if f.category == "shape_branch"]
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
    specialised = _specialised_note(report, report.specialised_sets) + " " \
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
