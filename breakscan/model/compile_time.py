"""Where compile time goes (``--compile-time``): a cold and a warm compile of the model, each
compiled frame's phases from Dynamo's own compilation metrics, and what breaks, restarts and
recompiles add.

The phases of a frame nest in Dynamo's metrics (the whole frame ⊇ the backend ⊇ Inductor ⊇ its
code generation); here they are split into disjoint parts that add up to the frame's total:
Dynamo (tracing, guards, bytecode: total - backend), AOT autograd (backend - Inductor), Inductor
(lowering and scheduling: Inductor - code generation) and code generation. A field the installed
torch does not record is None, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FrameCompile:
    """One compiled frame (one compile id) of one compile run."""

    compile_id: str | None  # Dynamo's "frame/recompile", e.g. "1/0"
    name: str  # the code object's name (a resume function: torch_dynamo_resume_in_forward_at_7)
    file: str
    line: int  # the code object's first line
    total_s: float  # Dynamo's entire_frame_compile_time_s
    dynamo_s: float | None = None  # tracing, guards, bytecode: total - backend
    restart_s: float | None = None  # tracing thrown away when a break restarted the frame
    aot_s: float | None = None  # AOT autograd: backend - Inductor
    inductor_s: float | None = None  # Inductor's lowering and scheduling: Inductor - codegen
    codegen_s: float | None = None  # Inductor's code generation and kernel compiles
    ops: int | None = None  # graph_op_count
    guards: int | None = None  # guard_count
    restarts: int = 0  # how many times tracing restarted (one per break met while tracing)
    recompile: bool = False  # a recompile of a frame compiled before (compile id "N/k", k > 0)
    recompile_reason: str | None = None  # the guard that failed, in Dynamo's words
    cache_hits: int | None = None  # Inductor's FX-graph cache, local: hits
    cache_misses: int | None = None
    # The root-cause break this frame exists because of (a resume function after it, a frame
    # compiled again after it): an index into ScanResult.breaks; None: the model's own frame.
    break_index: int | None = None


@dataclass
class CompileRun:
    """One compile of the model: Dynamo reset, then the first call (and the other input sets)."""

    kind: str  # "cold" (an empty Inductor cache folder) or "warm" (the same folder, kept)
    wall_s: float  # the compiled calls' wall time, compile included
    frames: list[FrameCompile] = field(default_factory=list)
    # Instructions executed while compiling (torch's compile-time instruction counter): a count
    # that does not depend on the machine's load. None where the counter is unavailable.
    instructions: int | None = None

    @property
    def frames_s(self) -> float:
        return round(sum(f.total_s for f in self.frames), 6)

    @property
    def cache_hits(self) -> int | None:
        found = [f.cache_hits for f in self.frames if f.cache_hits is not None]
        return sum(found) if found else None

    @property
    def cache_misses(self) -> int | None:
        found = [f.cache_misses for f in self.frames if f.cache_misses is not None]
        return sum(found) if found else None


@dataclass
class CompileTime:
    """The cold and warm compiles, and the waste in the cold one."""

    backend: str
    cold: CompileRun
    warm: CompileRun | None = None
    input_sets: int = 1  # the first call's inputs, and each --vary-batch / --shapes set
    notes: list[str] = field(default_factory=list)

    @property
    def restart_s(self) -> float:
        """Tracing thrown away by restarts, cold (each frame's own, counted once)."""
        return round(sum(f.restart_s or 0.0 for f in self.cold.frames), 6)

    @property
    def recompile_s(self) -> float:
        """The cold compile time of recompiles (frames compiled again for other inputs)."""
        return round(sum(f.total_s for f in self.cold.frames if f.recompile), 6)

    @property
    def breaks_s(self) -> float:
        """The cold compile time of the frames that exist because of a break (recompiles of
        them included once, in ``recompile_s`` too)."""
        return round(sum(f.total_s for f in self.cold.frames if f.break_index is not None), 6)

    def cost_of(self, break_index: int) -> float:
        """The cold compile time of the frames that exist because of one break."""
        return round(sum(f.total_s for f in self.cold.frames if f.break_index == break_index), 6)

    def top_frames(self, count: int = 5) -> list[FrameCompile]:
        return sorted(self.cold.frames, key=lambda f: -f.total_s)[:count]


@dataclass
class RepeatedBlock:
    """An ``nn.Module`` class called twice or more per model call (transformer layers, UNet
    blocks): compiling it alone (regional compilation) compiles its code once for every call."""

    name: str  # the class's qualified name
    file: str  # where the class is defined
    line: int
    instances: int  # how many of its instances the call ran
    calls: int  # how many times it was called in one model call
    parameters: int  # parameters of one instance
