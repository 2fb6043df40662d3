"""Stage 5 — gate: turn a ScanResult into pass/fail checks for CI, with optional baselines.

Thresholds (:class:`breakscan.options.GateOptions`: ``--max-breaks``, ``--max-graphs``,
``--max-recompiles``, ``--max-graph-calls``, ``--max-kernels``, ``--max-compile-time``,
``--max-compile-instructions``, ``--fail-on``, ``--fullgraph``) are absolute. A baseline (``--baseline FILE``) fails only on regressions: a
root-cause break that is not in the baseline, more graphs, more recompiles. Breaks are matched by
category + file + source text, so editing lines above a break does not make it "new".
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..frames import display_path, relative_to
from ..model.records import RootBreak
from ..model.result import ScanResult
from ..model.verdicts import Check, GateResult
from ..options import NO_INPUT_SETS, GateOptions
from ..rules.kernels import KERNEL_RULES

BASELINE_VERSION = 1


def break_key(brk: RootBreak, root: str | None) -> tuple[str, str, str]:
    return (brk.category, relative_to(brk.file, root) if root else brk.file, brk.code.strip())


def _where(brk: RootBreak) -> str:
    when = " (first call only)" if brk.calls == "first_only" else ""
    return f"{brk.category} at {display_path(brk.file)}:{brk.line} `{brk.code}`{when}"


def _kernels_inspected(result: ScanResult) -> bool:
    """Whether ``--kernels`` looked at every graph: a model with no graph counts (no Inductor
    kernel runs, 0 launched per call is a measurement)."""
    if not result.graphs:
        return result.summary.kernels_per_call is not None
    return all(g.inductor is not None for g in result.graphs)


def _kernels_unmeasured(result: ScanResult) -> str:
    """Why no kernel count: ``--kernels`` was not given, or what stopped it."""
    if result.compile_error is not None:
        return "not measured: torch.compile fails on the model"
    if not _kernels_inspected(result):
        return "not measured (run with --kernels)"
    failed = [g.index + 1 for g in result.graphs if g.inductor and g.inductor.error]
    if failed:
        return f"not measured: Inductor failed on graph {', '.join(map(str, failed))}"
    return "not measured: the run-time graph counts are missing (see the report's notes)"


def _kernel_check(result: ScanResult, category: str) -> Check:
    """``--fail-on fallback`` (or another kernel rule's category): its findings fail the gate;
    graphs Inductor was not asked about fail it too (nothing was checked)."""
    measured = _kernels_inspected(result)
    hits = [f for f in result.kernel_findings if f.category == category]
    detail = "; ".join(f"{f.message} at {f.file}:{f.line}" for f in hits)
    return Check(name=f"fail_on:{category}", limit=0, actual=len(hits) if measured else -1,
                 passed=measured and not hits,
                 detail=detail if measured else "not measured (run with --kernels)")


_NO_FRAME = "no compiled frame: forward ran entirely eagerly"


def _skipped(s: Any) -> str:
    return f" ({s.frames_skipped} frame(s) skipped)" if s.frames_skipped else ""


def _graph_count_check(s: Any, most: int) -> Check:
    """``--max-graphs``: nothing compiled (every frame skipped) is not a small graph count."""
    if s.graph_count == 0:
        return Check(name="max_graphs", limit=most, actual=0, passed=False,
                     detail=_NO_FRAME + _skipped(s))
    return Check(name="max_graphs", limit=most, actual=s.graph_count,
                 passed=s.graph_count <= most)


def _fullgraph_check(result: ScanResult, counted: list) -> Check:
    """fullgraph=True's rules, the same on every torch release: no break, no skipped frame,
    and exactly one compiled frame (torch 2.15 fails fullgraph when none compiled; its next
    release requires exactly one). The detail names the rule that failed."""
    s = result.summary
    actual = s.graph_break_count + s.frames_skipped
    if actual:
        return Check(name="fullgraph", limit=0, actual=actual, passed=False,
                     detail="; ".join(_where(b) for b in counted))
    if s.graph_count == 0:
        return Check(name="fullgraph", limit=0, actual=1, passed=False,
                     detail=_NO_FRAME + _skipped(s))
    if s.graph_count > 1:
        return Check(name="fullgraph", limit=0, actual=s.graph_count - 1, passed=False,
                     detail=f"more than one compiled frame: {s.graph_count} graphs with no "
                            f"break between them (a disabled region or a second compiled "
                            f"function splits the model)")
    return Check(name="fullgraph", limit=0, actual=0, passed=True)


def evaluate(result: ScanResult, config: GateOptions) -> GateResult:
    """Run every configured check against one scan."""
    s = result.summary
    checks: list[Check] = []
    # The gate judges the first call (what a user's first compiled call hits); breaks that only
    # later calls hit are reported, not counted.
    counted = [b for b in result.breaks if b.calls != "later_only"]

    def limit(name: str, max_value: int | None, actual: int, detail: str = "") -> None:
        if max_value is not None:
            checks.append(Check(name=name, limit=max_value, actual=actual,
                                passed=actual <= max_value, detail=detail))

    error = result.compile_error
    if error is not None:  # the model does not compile: no threshold can pass it
        checks.append(Check(name="compiles", limit=0, actual=1, passed=False,
                            detail=f"torch.compile fails: {error.exception}: {error.message} at "
                                   f"{error.location()}"))
    limit("max_breaks", config.max_breaks, s.graph_break_count,
          "; ".join(_where(b) for b in counted))
    if config.max_graphs is not None:
        checks.append(_graph_count_check(s, config.max_graphs))
    if config.max_recompiles is not None:
        if result.recompiles is None:
            raise UsageError(NO_INPUT_SETS)  # the API's scan; the CLI checks it first
        limit("max_recompiles", config.max_recompiles, s.recompile_count)
    if config.max_graph_calls is not None:
        # Per model call at run time: a graph that runs in every layer counts every time.
        calls = s.graph_calls_per_call
        checks.append(Check(
            name="max_graph_calls", limit=config.max_graph_calls,
            actual=(int(calls) if calls == int(calls) else calls) if calls is not None else -1,
            passed=calls is not None and calls <= config.max_graph_calls,
            detail="" if calls is not None else "not measured (see the report's notes)"))
    if config.max_kernels is not None:
        launched = s.kernels_per_call
        checks.append(Check(
            name="max_kernels", limit=config.max_kernels,
            actual=(int(launched) if launched == int(launched) else launched)
            if launched is not None else -1,
            passed=launched is not None and launched <= config.max_kernels,
            detail="" if launched is not None else _kernels_unmeasured(result)))
    checks.extend(_compile_checks(result, config))
    kernel_categories = {r.category for r in KERNEL_RULES}
    for category in config.fail_on:
        if category in kernel_categories:
            checks.append(_kernel_check(result, category))
            continue
        hits = [b for b in counted if b.category == category or b.cause_category == category]
        checks.append(Check(name=f"fail_on:{category}", limit=0, actual=len(hits),
                            passed=not hits, detail="; ".join(_where(b) for b in hits)))
    if config.fullgraph:
        checks.append(_fullgraph_check(result, counted))
    improvements: list[str] = []
    if config.baseline is not None:
        checks.extend(_baseline_checks(result, config, improvements))
    return GateResult(passed=all(c.passed for c in checks), checks=checks,
                      improvements=improvements)


def _compile_checks(result: ScanResult, config: GateOptions) -> list[Check]:
    """``--max-compile-time`` (the cold compile's frames, seconds) and
    ``--max-compile-instructions`` (torch's compile-time instruction counter); a figure that
    was not measured fails its check, saying why (nothing was checked)."""
    cold = result.compile_time.cold if result.compile_time is not None else None
    why = ("not measured: torch.compile fails on the model" if result.compile_error else
           "not measured (run with --compile-time)")
    checks = []
    if config.max_compile_time is not None:
        seconds = cold.frames_s if cold is not None else None
        checks.append(Check(name="max_compile_time", limit=config.max_compile_time,
                            actual=seconds if seconds is not None else -1,
                            passed=seconds is not None and seconds <= config.max_compile_time,
                            detail="" if seconds is not None else why))
    if config.max_compile_instructions is not None:
        counted = cold.instructions if cold is not None else None
        unavailable = ("not measured: torch's compile-time instruction counter is unavailable "
                       "here (it needs Linux perf events); gate on --max-compile-time instead")
        checks.append(Check(name="max_compile_instructions",
                            limit=config.max_compile_instructions,
                            actual=counted if counted is not None else -1,
                            passed=counted is not None and
                            counted <= config.max_compile_instructions,
                            detail="" if counted is not None else
                            why if cold is None else unavailable))
    return checks


def _baseline_checks(result: ScanResult, config: GateOptions, improvements: list[str]) -> list[Check]:
    base = config.baseline or {}
    root = config.baseline_root
    note = _settings_note(base, result)
    notes = getattr(result, "notes", None)
    if note and notes is not None and note not in notes:
        notes.append(note)
    known = {(b["category"], b["file"], b["code"]) for b in base.get("breaks", [])}
    current = {break_key(b, root): b for b in result.breaks if b.calls != "later_only"}
    # A newer catalogue may name a known break's family differently (`other` -> `rng`): the
    # same file and source line is the same break, not a new one.
    renamed = {(file, code): category for category, file, code in known - set(current)}
    new = []
    for key, brk in current.items():
        if key in known:
            continue
        old = renamed.pop(key[1:], None)
        if old is None:
            new.append(brk)
        else:
            known.discard((old, *key[1:]))
            improvements.append(f"same break, now {key[0]} (the baseline says {old}) at "
                                f"{key[1]} `{key[2]}`")
    fixed = [k for k in known if k not in current]
    for category, file, code in sorted(fixed):
        improvements.append(f"fixed: {category} at {file} `{code}`")
    checks = [Check(name="baseline:new_breaks", limit=0, actual=len(new), passed=not new,
                    detail="; ".join(f"new {_where(b)}" for b in new))]
    for name, key, actual in (("baseline:graphs", "graph_count", result.summary.graph_count),
                              ("baseline:recompiles", "recompile_count",
                               result.summary.recompile_count)):
        before = base.get(key)
        if before is None:
            continue
        checks.append(Check(name=name, limit=before, actual=actual, passed=actual <= before))
        if actual < before:
            improvements.append(f"{key.replace('_', ' ')} {before} -> {actual}")
    return checks


def _counting_settings(result: ScanResult) -> dict[str, Any]:
    """The settings a result's counts depend on besides the code: torch's version, the
    compile's `dynamic` and `nested_graph_breaks`, Dynamo settings the process changed."""
    compile_settings = getattr(result, "compile_settings", None) or {}
    return {"torch_version": getattr(result, "torch_version", None),
            "dynamic": compile_settings.get("dynamic"),
            "nested_graph_breaks": compile_settings.get("nested_graph_breaks"),
            "dynamo_settings": dict(getattr(result, "dynamo_settings", None) or {})}


def _settings_note(base: dict[str, Any], result: ScanResult) -> str | None:
    """"baseline from torch 2.13.0, this run 2.14.1" (and each setting that differs)."""
    now = _counting_settings(result)
    differ = [name for name in now if name in base and base[name] != now[name]]
    if not differ:
        return None
    said = "; ".join(f"baseline {name} {base[name]!r}, this run {now[name]!r}"
                     for name in differ if name != "torch_version")
    torch_part = (f"baseline from torch {base['torch_version']}, this run {now['torch_version']}"
                  if "torch_version" in differ else "")
    return ("compared with a baseline made differently: "
            + "; ".join(filter(None, [torch_part, said]))
            + " (a difference in the counts may come from that, not from the code)")


def baseline_entry(result: ScanResult, root: str | None) -> dict[str, Any]:
    return {**_counting_settings(result), "graph_count": result.summary.graph_count,
            "recompile_count": result.summary.recompile_count,
            "breaks": [dict(zip(("category", "file", "code"), break_key(b, root)),
                            line=b.line) for b in result.breaks]}


def write_baseline(path: str | os.PathLike[str], results: list[ScanResult]) -> None:
    from ..files import write_atomic

    root = str(Path(path).resolve().parent)
    doc = {"breakscan_baseline": BASELINE_VERSION,
           "targets": {r.target: baseline_entry(r, root) for r in results}}
    write_atomic(path, json.dumps(doc, indent=2) + "\n")
