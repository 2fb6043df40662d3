"""Recompiles across input shapes: call the compiled model with each input set and record
every recompile with Dynamo's guard-failure reason.

Runs ``torch.compile(fn, backend=<recording eager backend>)``: guards and recompiles are
Dynamo's, so no inductor compile is needed. When shapes caused recompiles, the same sets are
replayed with ``dynamic=True`` to *show* whether that removes them, instead of just advising it.
Reading the recompile records and wording the advice is :mod:`breakscan.analysis.recompiles`.
"""

from __future__ import annotations

from typing import Any, Callable

from ..analysis.recompiles import (hit_limit, limit_advice, parse_recompile_message,
                                   specialised_note, suggest_dynamic, suggest_partial)
from ..errors import running_model
from ..model.records import Recompile, RecompileReport


def _run_sets(fn: Callable[..., Any], sets: list[tuple[Any, ...]], *, training: bool,
              dynamic: bool | None) -> tuple[int, list[Recompile], list[str]]:
    """Compile once, call with each input set; (graphs, recompiles, frames that hit the limit)."""
    import torch

    from ..dynamo.session import dynamo_session, read_metrics

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
            shapes = [list(a.shape) for a in args if isinstance(a, torch.Tensor)]
            with running_model(f"compiled call with input shapes {shapes}"):
                compiled(*args)
            for text in session.recompile_logs[seen:]:
                record = parse_recompile_message(text)
                if record is not None:
                    record.input_set = index
                    recompiles.append(record)
        for m in read_metrics(session.notes):
            if hit_limit(m):  # read_metrics names the row from the frame's earlier compiles
                limit_hits.append(f"{m.name or '?'} ({m.file or '?'}:{m.first_line or '?'})")
    return len(graphs), recompiles, limit_hits


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

    from ..dynamo.session import recompile_limit

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
                report.suggestion = suggest_partial(report, specialised, base_recompiles,
                                                    dyn_recompiles)
            else:
                report.dynamic_graph_count = dyn_graphs
                report.dynamic_recompile_count = len(dyn_recompiles)
                report.dynamic_helps = len(dyn_recompiles) < len(recompiles)
                report.suggestion = suggest_dynamic(report, recompiles, dyn_recompiles)
        else:
            report.suggestion = specialised_note(report, specialised) + \
                " dynamic=True was not replayed: it cannot change that."
    if limit_hits:
        report.suggestion = " ".join(filter(None, [report.suggestion, limit_advice(
            limit_hits, report.recompile_limit, recompiles)]))
    return report
