"""Where a compiled call's time goes, from ``torch.profiler``: the share of wall time outside
compiled graphs (the Python between graphs that the breaks force) and, per compiled region, the
gaps before its graphs (what ``impact`` turns into each break's cost).

Inductor marks each compiled-graph call and Dynamo each compiled region's run with a profiler
event; other backends mark no graphs.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .call import synchronize

PROFILED_CALLS = 10
_CALL_MARK = "breakscan: model call"
_GRAPH_MARK = "## Call CompiledFxGraph"
_REGION_MARK = "Torch-Compiled Region: "


@contextlib.contextmanager
def _quiet_stderr_fd():
    """The profiler's C++ side prints start/stop lines straight to fd 2: park them."""
    import os
    import tempfile

    try:
        saved = os.dup(2)
    except OSError:  # no real fd 2 (embedded interpreters)
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


@dataclass
class OutsideGraphs:
    """Where each compiled call's time went, from the profiler (inductor marks its graphs)."""

    share: float | None  # of wall time outside compiled graphs (None: the backend marks none)
    inside_s: float = 0.0  # per call, inside compiled graphs
    wall_s: float = 0.0  # per call, the whole profiled call (the profiler's overhead included)
    # Per call, the Python time before each graph that a resume function runs, keyed by the
    # code of the region (compile id -> code) the graph belongs to: the gap a break caused.
    gaps: dict[str, float] = field(default_factory=dict)  # compile id -> seconds per call


def _gaps(events: list[Any]) -> dict[str, float]:
    """Microseconds of Python between consecutive graph calls within each model call, keyed by
    the compile id of the innermost compiled region the next graph runs in."""
    graphs = sorted((e.time_range.start, e.time_range.end) for e in events
                    if e.name.startswith(_GRAPH_MARK))
    regions = [(e.time_range.start, e.time_range.end, e.name[len(_REGION_MARK):])
               for e in events if e.name.startswith(_REGION_MARK)]
    calls = [(e.time_range.start, e.time_range.end) for e in events if e.name == _CALL_MARK]
    gaps: dict[str, float] = {}
    for call_start, call_end in calls:
        inside = [g for g in graphs if call_start <= g[0] and g[1] <= call_end]
        for (_, previous_end), (start, _) in zip(inside, inside[1:]):
            around = [r for r in regions if r[0] <= start <= r[1]]
            if start > previous_end and around:
                innermost = min(around, key=lambda r: r[1] - r[0])
                gaps[innermost[2]] = gaps.get(innermost[2], 0.0) + start - previous_end
    return gaps


def outside_graphs(call: Callable[[], Any], device: torch.device, backend: str) -> OutsideGraphs:
    """The share of wall time outside compiled graphs, and the gaps between them, via the
    profiler.

    Inductor marks each compiled-graph call with a "## Call CompiledFxGraph … ##" event and
    Dynamo each compiled frame's run with a "Torch-Compiled Region: <compile id>" event; other
    backends mark no graphs, so the share is None for them. Profiler overhead counts as outside
    time: read the share as an upper bound.
    """
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU]
    with _quiet_stderr_fd(), profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(PROFILED_CALLS):
            with record_function(_CALL_MARK):
                call()
        synchronize(device)
        wall = time.perf_counter() - start
    events = list(prof.events())
    graph_us = [e.time_range.end - e.time_range.start for e in events
                if e.name.startswith(_GRAPH_MARK)]
    if not graph_us and backend != "inductor":
        return OutsideGraphs(share=None)  # this backend does not mark its graphs
    inside = sum(graph_us) / 1e6
    return OutsideGraphs(share=max(0.0, 1.0 - inside / wall), inside_s=inside / PROFILED_CALLS,
                         wall_s=wall / PROFILED_CALLS,
                         gaps={cid: us / 1e6 / PROFILED_CALLS
                               for cid, us in _gaps(events).items()})
