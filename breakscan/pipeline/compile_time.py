"""``--compile-time``: the model compiled cold and warm, each compiled frame's phases read from
Dynamo's compilation metrics, and each frame tied to the break it exists because of.

Cold: Dynamo reset and Inductor's caches (FX graph, AOT autograd, autotuning, kernels) pointed at
an empty temporary folder for the run. Warm: Dynamo reset again, the same folder kept, as a
second start of the user's program finds it. Both run in the scan's own process after the
capture, so Python's and torch's imports and Dynamo's first use are not in either figure (a
user's very first start also pays those); the report says so.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
import time
from typing import Any, Iterator

import torch

from ..analysis.impact import break_of_code
from ..dynamo.backend import compile_model
from ..messages import resume_line
from ..model.compile_time import CompileRun, CompileTime, FrameCompile
from ..model.result import ScanResult
from .call import ModelCall, synchronize
from .outputs import reseed

_CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
_NO_COUNT = 2 ** 63  # the counter's "failed" value (perf events unavailable) reads as 2**64 - 1


@contextlib.contextmanager
def _cache_folder(folder: str) -> Iterator[None]:
    """Inductor's on-disk caches in ``folder`` for the run (read per use, from the environment),
    the user's setting restored after."""
    before = os.environ.get(_CACHE_ENV)
    os.environ[_CACHE_ENV] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_CACHE_ENV, None)
        else:
            os.environ[_CACHE_ENV] = before


@functools.lru_cache(maxsize=1)
def _counter_counts() -> bool:
    """Does torch's instruction counter count on this machine? It needs Linux perf events; where
    they are refused it returns -1 and writes C++ errors to the process's stderr, so it is tried
    once here with file descriptor 2 sent to /dev/null."""
    counter = getattr(torch._C, "_instruction_counter", None)
    if counter is None:
        return False
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        handle = counter.start()
        value = counter.end(handle)
    except Exception:
        return False
    finally:
        os.dup2(saved, 2)
        os.close(null)
        os.close(saved)
    return handle >= 0 and 0 <= value < _NO_COUNT


@contextlib.contextmanager
def _instruction_counter() -> Iterator[list[int | None]]:
    """torch's compile-time instruction counter for the block (``config.
    record_compile_time_instruction_count``), when this torch has it and the machine lets it
    count (Linux perf events); yields a one-item list filled with the count or None."""
    found: list[int | None] = [None]
    counter = getattr(torch._dynamo.utils, "CompileTimeInstructionCounter", None)
    config = torch._dynamo.config
    if counter is None or not hasattr(config, "record_compile_time_instruction_count") or \
            not _counter_counts():
        yield found
        return
    counter.clear()
    with torch._dynamo.config.patch(record_compile_time_instruction_count=True):
        yield found
    value = counter.value()
    found[0] = value if 0 < value < _NO_COUNT else None


def _calls(call: ModelCall, input_sets: list[tuple[Any, ...]], mode: str | None) -> float:
    """Compile the model and make its first call, then one call per other input set; the wall
    time of it all (compiles included)."""
    torch._dynamo.reset()
    clear = getattr(torch._dynamo.utils, "clear_compilation_metrics", None)
    if clear is not None:
        clear()
    target = compile_model(call.fn, call.compile_only, backend="inductor", mode=mode,
                           dynamic=call.dynamic, options=call.compile_options)
    grad = contextlib.nullcontext() if call.training else torch.no_grad()
    start = time.perf_counter()
    with grad:
        call.fresh()
        reseed()
        target(*call.args, **call.kwargs)
        for args in input_sets:
            target(*args)
    synchronize(call.device)
    return time.perf_counter() - start


def _phase(value: Any) -> float | None:
    return round(float(value), 6) if isinstance(value, (int, float)) else None


def _frame(row: Any) -> FrameCompile | None:
    """One compilation-metrics row as a frame's compile (None: not a compiled frame)."""
    total = _phase(getattr(row, "entire_frame_compile_time_s", None))
    name = getattr(row, "co_name", None)
    if total is None or not name:
        return None
    backend = _phase(getattr(row, "backend_compile_time_s", None))
    inductor = _phase(getattr(row, "inductor_compile_time_s", None))
    codegen = _phase(getattr(row, "code_gen_time_s", None))
    compile_id = str(getattr(row, "compile_id", "") or "") or None
    recompile = bool(compile_id and "/" in compile_id and
                     compile_id.split("/")[1].split("_")[0] not in ("", "0"))
    restarts = getattr(row, "restart_reasons", None)

    def minus(whole: float | None, part: float | None) -> float | None:
        if whole is None:
            return None
        return round(max(whole - (part or 0.0), 0.0), 6)

    return FrameCompile(
        compile_id=compile_id, name=name, file=getattr(row, "co_filename", "") or "",
        line=getattr(row, "co_firstlineno", 0) or 0, total_s=total,
        dynamo_s=minus(total, backend), restart_s=_phase(getattr(
            row, "dynamo_time_before_restart_s", None)),
        aot_s=minus(backend, inductor) if backend is not None else None,
        inductor_s=minus(inductor, codegen) if inductor is not None else None,
        codegen_s=codegen if inductor is not None else None,
        ops=getattr(row, "graph_op_count", None), guards=getattr(row, "guard_count", None),
        restarts=len(restarts) if isinstance(restarts, (set, list, tuple)) else 0,
        recompile=recompile, recompile_reason=getattr(row, "recompile_reason", None),
        cache_hits=getattr(row, "inductor_fx_local_cache_hit_count", None),
        cache_misses=getattr(row, "inductor_fx_local_cache_miss_count", None))


def _run(kind: str, call: ModelCall, input_sets: list[tuple[Any, ...]],
         mode: str | None) -> CompileRun:
    with _instruction_counter() as counted:
        wall = _calls(call, input_sets, mode)
    getter = getattr(torch._dynamo.utils, "get_compilation_metrics", None)
    rows = list(getter()) if getter is not None else []
    frames = [f for f in (_frame(r) for r in rows) if f is not None]
    return CompileRun(kind=kind, wall_s=round(wall, 6), frames=frames, instructions=counted[0])


def first_inductor_use(mode: str | None = None) -> None:
    """Inductor's one-time costs in this process (its imports, the C++ compiler's checks) paid
    on a throwaway function, so that the next cold compile measured is the model's alone."""
    with tempfile.TemporaryDirectory(prefix="breakscan-compile-") as folder, \
            _cache_folder(folder):
        torch.compile(lambda x: torch.relu(x) + 1, backend="inductor", mode=mode)(torch.ones(4))
    torch._dynamo.reset()


def measure_compile_time(call: ModelCall, mode: str | None = None,
                         input_sets: list[tuple[Any, ...]] | None = None, *,
                         warm: bool = True) -> CompileTime:
    """The model compiled cold, then warm, with Inductor (torch.compile's default backend, the
    one whose phases Dynamo records; ``mode`` and the user's options as given); the other
    ``input_sets`` (``--vary-batch``/``--shapes``) are called after the first call, so their
    recompiles are in both runs."""
    sets = list(input_sets or [])
    notes = ["cold: Dynamo reset and Inductor's caches in an empty folder; warm: Dynamo reset, "
             "the caches kept. Both in the scan's process after the capture: imports and "
             "Dynamo's first use (paid once by a program's first start) are in neither"]
    with tempfile.TemporaryDirectory(prefix="breakscan-compile-") as folder, \
            _cache_folder(folder):
        cold = _run("cold", call, sets, mode)
        again = _run("warm", call, sets, mode) if warm else None
    if cold.instructions is None:
        notes.append("torch's compile-time instruction counter is unavailable here (it needs "
                     "Linux perf events): the phase times are the figures")
    torch._dynamo.reset()
    call.fresh()  # the stages after it start from the model as built, as they did before
    backend = "inductor" + (f", mode={mode}" if mode else "")
    return CompileTime(backend=backend, cold=cold, warm=again, input_sets=1 + len(sets),
                       notes=notes)


def attribute_frames(result: ScanResult, found: CompileTime) -> None:
    """Each frame that exists or is wasted because of a break, tied to it: a resume function
    (it resumes after the break) and a frame Dynamo skipped at the break (its tracing is thrown
    away). The model's own compiled frames stay unattributed, whatever breaks in them."""
    skipped = {(f.name, f.file, f.first_line) for f in result.frames if f.skipped}
    for run in (found.cold, found.warm):
        if run is None:
            continue
        for frame in run.frames:
            key = (frame.name, frame.file, frame.line)
            if resume_line(frame.name) is not None or key in skipped:
                frame.break_index = break_of_code(result, key)
