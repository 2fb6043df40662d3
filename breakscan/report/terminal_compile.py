"""The terminal report's compile-time block (``--compile-time``): cold and warm totals, the
costliest compiled frames with their phases, and what breaks, restarts and recompiles add."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..frames import display_path
from ..messages import original_name, resume_line
from ..model.compile_time import CompileRun, CompileTime, FrameCompile
from ..model.result import ScanResult
from .literal import LiteralTable
from .wording import ms


def frame_label(frame: FrameCompile) -> str:
    """``forward() model.py:12``, or for a resume function ``forward() after model.py:17``."""
    resumes = resume_line(frame.name)
    where = f"after {display_path(frame.file)}:{resumes}" if resumes is not None else \
        f"{display_path(frame.file)}:{frame.line}"
    return f"{original_name(frame.name)}() {where}"


def cache_text(run: CompileRun) -> str:
    """What Inductor's FX-graph cache did in a run: "2 misses", "2 hits", or "not recorded"."""
    hits, misses = run.cache_hits, run.cache_misses
    if hits is None and misses is None:
        return "FX-graph cache not recorded"
    parts = [f"{hits} hit(s)" if hits else "", f"{misses} miss(es)" if misses else ""]
    return "FX-graph cache: " + (", ".join(p for p in parts if p) or "not used")


def print_compile_time(result: ScanResult, console: Console) -> None:
    found: CompileTime = result.compile_time
    cold, warm = found.cold, found.warm
    sets = f", {found.input_sets} input sets" if found.input_sets > 1 else ""
    console.print(Text(f"Compile time (backend={found.backend}{sets})", style="bold"))
    console.print(Text(f"  cold {ms(cold.wall_s)} ({len(cold.frames)} frame compile(s): "
                       f"{ms(cold.frames_s)}; {cache_text(cold)})"))
    if warm is not None:
        console.print(Text(f"  warm {ms(warm.wall_s)} ({len(warm.frames)} frame compile(s): "
                           f"{ms(warm.frames_s)}; {cache_text(warm)})"))
    if cold.instructions is not None:
        console.print(Text(f"  instructions spent compiling, cold: {cold.instructions:,}"))
    console.print(_frames_table(result, found.top_frames()))
    if len(cold.frames) > 5:
        console.print(Text(f"  … and {len(cold.frames) - 5} more frame(s) (JSON, Markdown)",
                           style="dim"))
    console.print(Text(f"  of the cold compile: frames that exist because of breaks "
                       f"{ms(found.breaks_s)} · tracing thrown away by restarts "
                       f"{ms(found.restart_s)} · recompiles {ms(found.recompile_s)} (each a "
                       "part of the frames' total; one frame can be in more than one)"))
    for note in found.notes:
        console.print(Text(f"  note: {note}", style="dim"))


def _frames_table(result: ScanResult, frames: list[FrameCompile]) -> LiteralTable:
    """One row per frame: its cold compile, then its phases and why it exists, in words."""
    table = LiteralTable(expand=False, show_edge=False, box=None, padding=(0, 1, 0, 2))
    table.add_column("compile", justify="right")
    table.add_column("frame (cold), its phases", justify="left")
    for frame in frames:
        because = _because(result, frame)
        table.add_row(ms(frame.total_s), f"{frame_label(frame)}"
                      + (f" [{because}]" if because else "") + f"\n{phases(frame)}")
    return table


def phases(frame: FrameCompile) -> str:
    """"Dynamo 52.25 ms (restarts 30.34 ms) · AOT 1.01 s · Inductor 114.39 ms · codegen 8.58 s
    · 3 ops": the phases this torch records, each once."""
    parts = []
    if frame.dynamo_s is not None:
        restart = f" (restarts {ms(frame.restart_s)})" if frame.restart_s else ""
        parts.append(f"Dynamo {ms(frame.dynamo_s)}{restart}")
    for name, value in (("AOT", frame.aot_s), ("Inductor", frame.inductor_s),
                        ("codegen", frame.codegen_s)):
        if value is not None:
            parts.append(f"{name} {ms(value)}")
    if frame.ops is not None:
        parts.append(f"{frame.ops} ops")
    return " · ".join(parts) or "phases not recorded"


def _because(result: ScanResult, frame: FrameCompile) -> str:
    why = []
    if frame.break_index is not None:
        why.append(f"break #{frame.break_index + 1}")
    if frame.recompile:
        why.append("recompile" + (f": {frame.recompile_reason.splitlines()[0][:60]}"
                                  if frame.recompile_reason else ""))
    return "; ".join(why)
