"""Impact: how often each break fires at run time, what it costs, and which to fix first.

Unique counts (graphs, break sites) hide repetition: a break in a block that runs 24 times per
call counts once. This stage joins what ran (``capture.run_counted``: graph calls, resume
functions, skipped frames) and, with ``--time``, the measured gaps between compiled graphs
(``measure``) with the analysed breaks, then ranks the breaks by what they cost: measured time
when timed, fires per call × graph splits when not.
"""

from __future__ import annotations

from typing import Callable

from ..frames import Frame, inner_site, is_torch_file, user_frame
from ..messages import RESUME_PREFIX, resume_line
from ..model.raw import CodeKey, RawLaterCall, RawRegion, RawRuntime
from ..model.records import RootBreak
from ..model.result import LaterCall, ProgramRegion, ScanResult
from .analyse import analyse
from .ranking import rank
from .roots import break_at
from .skipped import enclosing_function


def _per_call(count: float, calls: int) -> float:
    return round(count / calls, 2)


def _rest_of_frame(result: ScanResult) -> dict[CodeKey, int]:
    """The compiled frames that run their rest eagerly after a break (no resume function):
    each call of one is a return to Python at that break. Frame code -> break index."""
    found: dict[CodeKey, int] = {}
    for idx, brk in enumerate(result.breaks):
        if brk.skip_kind != "rest_of_frame":
            continue
        # The innermost function on the way that Dynamo compiled as a frame of its own: the
        # break's, or the one its comprehension was inlined into (a folded follow-on record).
        for at in [Frame(brk.file, brk.line, brk.function)] + brk.call_chain[::-1]:
            holders = [f for f in result.frames if not f.skipped and not f.is_resume
                       and f.file == at.file and f.name == at.function
                       and f.first_line <= at.line]
            if holders:
                frame = max(holders, key=lambda f: f.first_line)
                found[(frame.name, frame.file, frame.first_line)] = idx
                break
    return found


def break_of_code(result: ScanResult, key: CodeKey,
                  rest: dict[CodeKey, int] | None = None) -> int | None:
    """Which break a code object's calls count for: a resume function resumes after one, a
    skipped frame was skipped because of one, a frame runs its rest eagerly after one
    (``rest``: :func:`_rest_of_frame`, when the caller has it already)."""
    name, file, _ = key
    line = resume_line(name)
    if line is not None:
        return break_at(result.breaks, file, line)
    skipped = _skipped_by(result, key)
    if skipped is not None:
        return skipped
    return (rest if rest is not None else _rest_of_frame(result)).get(key)


def _skipped_by(result: ScanResult, key: CodeKey) -> int | None:
    """The break that made Dynamo skip this code object (a resume function too), if any."""
    for frame in result.frames:
        if frame.skipped and (frame.name, frame.file, frame.first_line) == key:
            return break_at(result.breaks, frame.fail_file, frame.fail_line)
    return None


def eager_frames(result: ScanResult) -> set[CodeKey]:
    """The frames whose calls are counted besides resume functions: the frames Dynamo skipped
    (each call runs eagerly) and those that run their rest eagerly after a break."""
    return {(f.name, f.file, f.first_line) for f in result.frames if f.skipped} | \
        set(_rest_of_frame(result))


def counted_code(result: ScanResult) -> Callable[[CodeKey], bool]:
    """Which code objects' calls the run-time counts need: resume functions, skipped frames and
    frames that run their rest eagerly."""
    frames = eager_frames(result)
    return lambda key: key in frames or key[0].startswith(RESUME_PREFIX)


def apply_later_call(result: ScanResult, raw: RawLaterCall,
                     executed: dict[str, set[int]]) -> None:
    """Which calls each break appears on; add the breaks only later calls hit.

    ``result`` describes the first call (summary, graphs, explain and the gate stay on it);
    ``raw`` is the same compiled model's second call; ``executed`` the lines the eager run (a
    later call too) ran in the breaks' files. A first-call break recurs when it is logged again
    (its frame compiled anew), when its line ran eagerly (or its function, a hook, was handed
    on again: :func:`_handed_on`), or when the compiled code ran it (its own resume function, or
    its frame's eager rest, ran on the second call). One that does not
    recur is ``first_only``; when its graph split still runs on the second call (the code Dynamo
    compiled around it on the first call is cached) it counts in ``kept_splits``. A break
    logged only on the later call is ``later_only``.
    """
    later = analyse(raw.capture)
    again = {(b.file, b.line) for b in later.breaks}
    if raw.counter_error is not None:
        result.notes.append(f"breakscan's later-call counter failed, not the model (it ran "
                            f"when called again): {raw.counter_error}; a break is taken as "
                            "recurring when its line ran eagerly")
    rest = _rest_of_frame(result)
    resumed = {(key[1], resume_line(key[0])) for key, n in raw.python_calls.items() if n}
    rested = {rest[key] for key, n in raw.python_calls.items() if n and key in rest}
    _, _, fires = _tally(result, raw.python_calls, rest)
    recompiled = {(e.name, e.file) for e in raw.capture.code_events}
    kept = 0
    for idx, brk in enumerate(result.breaks):
        where = (brk.file, brk.line)
        if where in again or where in resumed or idx in rested:
            recurs = True
        elif (site := inner_site(brk)) is not None and site.file in executed:
            recurs = site.line in executed[site.file]  # the lock a cached_property takes once
        elif not is_torch_file(brk.file):
            recurs = brk.line in executed.get(brk.file, ()) or _handed_on(brk, executed)
        else:  # a line of torch's own wrappers (wrap_inline) that eager code does not run:
            # it recurs unless a frame of its call chain compiled anew without it
            chain = {(f.function.rpartition(".")[2], f.file) for f in brk.call_chain}
            recurs = not chain & recompiled
        brk.calls = "every" if recurs else "first_only"
        kept += not recurs and bool(fires.get(idx))
    first = {(b.file, b.line) for b in result.breaks}
    extra = [b for b in later.breaks if (b.file, b.line) not in first]
    for brk in extra:
        brk.calls = "later_only"
    result.breaks.extend(extra)
    graphs = 0 if raw.error else raw.graphs_run  # a call that raised: as explain, no graphs
    result.later_call = LaterCall(
        graph_count=graphs,
        graph_break_count=sum(b.calls != "first_only" for b in result.breaks),
        explain_graph_count=None if raw.error else graphs,
        explain_graph_break_count=None if raw.error else graphs - 1,
        first_only=sum(b.calls == "first_only" for b in result.breaks), later_only=len(extra),
        kept_splits=kept)


def _handed_on(brk: RootBreak, executed: dict[str, set[int]]) -> bool:
    """The break's line is in a function the forward never entered, reached from a line that
    every call runs (``h.register_hook(self._record)``): Dynamo traced the function where it was
    handed on, and the function runs later (a gradient hook: in backward). Every call hands it
    on again, so the break's path is not a one-time one though its line ran in no forward."""
    fn = enclosing_function(brk.file, brk.line)
    if fn is None or len(brk.call_chain) < 2:
        return False
    parent = brk.call_chain[-2]
    ran = executed.get(brk.file, set())
    body = range(fn.body[0].lineno, (fn.end_lineno or fn.lineno) + 1)
    return parent.line in executed.get(parent.file, ()) and not any(n in ran for n in body)


def _tally(result: ScanResult, python_calls: dict[CodeKey, int],
           rest: dict[CodeKey, int]) -> tuple[int, int, dict[int, int]]:
    """Counted Python calls, read: (returns to Python mid-frame, calls of skipped frames,
    fires per break index)."""
    skipped = {(f.name, f.file, f.first_line) for f in result.frames if f.skipped}
    gaps = sum(n for key, n in python_calls.items()
               if resume_line(key[0]) is not None or key in rest)
    compiled = getattr(python_calls, "compiled", {})  # after its compiles hit the limit
    eagerly = sum(n - compiled.get(key, 0) for key, n in python_calls.items() if key in skipped)
    fires: dict[int, int] = {}
    for key, count in python_calls.items():
        # A skipped resume function fires twice: the break it resumes after, and the break
        # that made Dynamo skip it (its rest runs eagerly).
        for idx in {break_of_code(result, key, rest), _skipped_by(result, key)} - {None}:
            # a nested break resumes every enclosing frame: count it once
            fires[idx] = max(fires.get(idx, 0), count)
    return gaps, eagerly, fires


def _could_fire(brk: RootBreak) -> bool:
    """A break whose firing is counted (a resume function, a skipped frame, a rest of frame
    run eagerly): not counted means it did not fire in the calls counted."""
    return bool(brk.resume_functions) or brk.frame_skipped or brk.skip_kind == "rest_of_frame"


def apply_runtime(result: ScanResult, raw: RawRuntime) -> None:
    """Per model call: graph calls, returns to Python, frames run eagerly, each break's fires."""
    if raw.failure is not None:  # torch.compile fails on the model: result.compile_error
        return
    if raw.error is not None or not raw.calls:
        result.notes.append(f"run-time counts not measured: {raw.error}")
        return
    s, calls = result.summary, raw.calls
    gaps, eagerly, fires = _tally(result, raw.python_calls, _rest_of_frame(result))
    s.runtime_calls = calls
    s.graph_calls_per_call = _per_call(raw.graph_calls, calls)
    s.eager_gaps_per_call = _per_call(gaps, calls)
    s.frames_run_eagerly_per_call = _per_call(eagerly, calls)
    for info in result.graphs:
        if info.index < len(raw.each_graph):
            info.calls_per_call = _per_call(raw.each_graph[info.index], calls)
    for idx, brk in enumerate(result.breaks):
        if idx in fires:
            brk.fires_per_call = _per_call(fires[idx], calls)
        elif _could_fire(brk):
            brk.fires_per_call = 0.0  # it broke on the captured call, not in the steady state
    rank(result)


def apply_regions(result: ScanResult, regions: list[RawRegion]) -> list[ProgramRegion]:
    """``breakscan run``: per region, its calls, graph calls, returns to Python and frames run
    eagerly; per break, its fires over the run (``fires``) and per call of the region it fired
    in (``fires_per_call``, summed over regions). The summary's per-call numbers are the worst
    region's, so ``--max-graph-calls N`` means "no region makes more than N graph calls per
    call"."""
    rest = _rest_of_frame(result)
    fires: dict[int, int] = {}
    per_call: dict[int, float] = {}
    out = []
    for region in regions:
        calls = region.calls
        gaps, eagerly, here = _tally(result, region.python_calls, rest)
        for idx, count in here.items():
            fires[idx] = fires.get(idx, 0) + count
            if calls:
                per_call[idx] = per_call.get(idx, 0.0) + count / calls
        out.append(ProgramRegion(
            name=region.name, kind=region.kind, compiled_at=compiled_at(region.compiled_at),
            calls=calls, graph_calls=region.graph_calls, eager_gaps=gaps,
            frames_run_eagerly=eagerly,
            graph_calls_per_call=_per_call(region.graph_calls, calls) if calls else None,
            eager_gaps_per_call=_per_call(gaps, calls) if calls else None,
            frames_run_eagerly_per_call=_per_call(eagerly, calls) if calls else None))
    for idx, brk in enumerate(result.breaks):
        if idx in fires:
            brk.fires, brk.fires_per_call = fires[idx], round(per_call.get(idx, 0.0), 2)
        elif _could_fire(brk):
            brk.fires, brk.fires_per_call = 0, 0.0
    called = [r for r in out if r.calls]
    s = result.summary
    s.runtime_calls = sum(r.calls for r in out)
    if called:
        s.graph_calls_per_call = max(r.graph_calls_per_call or 0.0 for r in called)
        s.eager_gaps_per_call = max(r.eager_gaps_per_call or 0.0 for r in called)
        s.frames_run_eagerly_per_call = max(r.frames_run_eagerly_per_call or 0.0
                                            for r in called)
    rank(result)
    return out


def compiled_at(stack: list[tuple[str, int, str]]) -> Frame | None:
    """The user's line that called ``torch.compile`` (or ``model.compile()``)."""
    return user_frame(Frame(file, line, fn) for file, line, fn in stack)


def apply_costs(result: ScanResult, gaps: dict[CodeKey, float],
                compile_s: dict[CodeKey, float]) -> None:
    """Attribute measured time outside graphs (per call) and compile time to the breaks."""
    cost: dict[int, float] = {}
    compiling: dict[int, float] = {}
    rest = _rest_of_frame(result)
    for key, seconds in gaps.items():
        idx = break_of_code(result, key, rest)
        if idx is not None:
            cost[idx] = cost.get(idx, 0.0) + seconds
    for key, seconds in compile_s.items():
        idx = break_of_code(result, key) if resume_line(key[0]) is not None else None
        if idx is not None:
            compiling[idx] = compiling.get(idx, 0.0) + seconds
    for idx, brk in enumerate(result.breaks):
        brk.cost_s_per_call = cost.get(idx, 0.0)
        brk.compile_cost_s = compiling.get(idx)
    rank(result)
