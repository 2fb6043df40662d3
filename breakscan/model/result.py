"""The one result object every stage fills in and every reporter renders: ``ScanResult`` (what
it is about, its summary, and the records of ``records`` and ``verdicts``), a model's run
(``ModelRun``) and a comparison of two (``Comparison``).

Plain dataclasses only: reporters read these, they never run a model. ``to_dict`` gives the
JSON document described in docs/json-schema.md; bump ``SCHEMA_VERSION`` on any breaking change.
:meth:`ScanResult.start` is where every result (a scan, a program run, a trace's rank) begins.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..frames import Frame
from .compile_time import CompileTime, RepeatedBlock
from .records import (CompiledFrame, CompileError, Discrepancy, ExplainCounts, GraphInfo,
                      KernelFinding, RecompileReport, RootBreak, StaticFinding)
from .verdicts import (ABTiming, Correctness, ExpectedCheck, Fix, GateResult, ModelStateReport,
                       TimingReport)

SCHEMA_VERSION = "1.25"


def whole(value: float | None) -> str:
    """A per-call average as read: 48, not 48.0; 2.5 stays 2.5; None is "-"."""
    if value is None:
        return "-"
    return str(int(value)) if value == int(value) else f"{value:g}"


@dataclass
class Summary:
    graph_count: int
    graph_break_count: int  # root-cause breaks
    break_records: int
    op_count: int
    frames_skipped: int
    recompile_count: int = 0  # over --vary-batch/--shapes input sets (0 when not exercised)
    # At run time, per model call (the compiled model called again after warm-up, eager
    # backend): what the unique counts above hide when a graph or a break repeats in a loop.
    graph_calls_per_call: float | None = None  # compiled-graph calls
    eager_gaps_per_call: float | None = None  # returns to Python mid-frame (a break fired)
    frames_run_eagerly_per_call: float | None = None  # calls of frames Dynamo skipped
    runtime_calls: int = 0  # the calls these averages are over (0: not measured)
    # --kernels: kernels launched per model call (each graph's kernels × its calls per call)
    kernels_per_call: float | None = None


@dataclass
class ProgramRegion:
    """One callable the program compiled, and what it did over the run."""

    name: str  # the model's class or the function's name
    kind: str  # module | function
    compiled_at: Frame | None  # the user's line that called torch.compile
    calls: int  # times the program called it
    graph_calls: int  # compiled-graph calls inside those calls
    eager_gaps: int  # returns to Python mid-frame (resume functions run)
    frames_run_eagerly: int  # calls of frames Dynamo skipped
    graph_calls_per_call: float | None = None
    eager_gaps_per_call: float | None = None
    frames_run_eagerly_per_call: float | None = None
    kernels_per_call: float | None = None  # with --kernels: kernels launched per call of it


@dataclass
class ProgramReport:
    """``breakscan run``: the program, how it ended and its compiled regions."""

    command: list[str]
    exit_code: int | None  # None: it did not finish (timed out, interrupted)
    capture_only: bool  # every backend was swapped for "eager"
    seconds: float
    regions: list[ProgramRegion]
    error: str | None = None  # the exception that ended it


@dataclass
class RankSummary:
    """``breakscan trace``: one rank's counts, from its own trace file."""

    rank: int | None
    file: str
    graphs: int
    breaks: int  # root-cause breaks
    break_records: int
    frames_skipped: int
    recompiles: int
    compile_s: float  # the sum of its frames' compile times
    records: int  # trace records read
    truncated: int  # records cut short (a killed job)
    other: dict[str, int] = field(default_factory=dict)  # record kinds breakscan does not use


@dataclass
class LaterCall:
    """The same compiled model's second call (after an eager call), for comparison."""

    graph_count: int
    graph_break_count: int  # root-cause breaks on that call
    explain_graph_count: int | None
    explain_graph_break_count: int | None
    first_only: int  # breaks of the first call that this call no longer hits
    later_only: int  # breaks only this call hits
    # first_only breaks whose graph split this call still runs: the code Dynamo compiled
    # around them on the first call is cached and reused.
    kept_splits: int = 0


@dataclass
class InputSpec:
    name: str
    shape: list[int] | None
    dtype: str | None
    kind: str = "tensor"  # tensor | other


class Findings(Protocol):
    """What an analysis of the records gives a result (``analysis.analyse.Analysis``)."""

    summary: Summary
    explain: ExplainCounts
    graphs: list[GraphInfo]
    breaks: list[RootBreak]
    frames: list[CompiledFrame]
    discrepancies: list[Discrepancy]


FRESH_FIRST_CALL = "first call of a freshly built model"


@dataclass
class ScanResult:
    target: str
    method: str
    torch_version: str
    python_version: str
    device: str
    training: bool
    inputs: list[InputSpec]
    summary: Summary
    explain: ExplainCounts
    graphs: list[GraphInfo]
    breaks: list[RootBreak]
    frames: list[CompiledFrame]
    discrepancies: list[Discrepancy]
    capture_seconds: float
    recompiles: RecompileReport | None = None
    timings: TimingReport | None = None
    compile_time: CompileTime | None = None  # --compile-time: cold and warm, per frame
    # nn.Module classes called twice or more per call, outermost only (pipeline/blocks.py)
    repeated_blocks: list[RepeatedBlock] = field(default_factory=list)
    gate: GateResult | None = None
    static: list[StaticFinding] = field(default_factory=list)  # lint of the scanned source
    kernel_findings: list[KernelFinding] = field(default_factory=list)  # --kernels (BS2xx)
    fixes: list[Fix] = field(default_factory=list)  # with --fix
    unfixed: list[str] = field(default_factory=list)  # with --fix: "no fix proposed for #N: …"
    notes: list[str] = field(default_factory=list)  # degraded features, private-API gaps
    model_output: str = ""  # what the model printed while it was scanned
    dynamo_log: list[str] = field(default_factory=list)  # Dynamo's own warnings (shown with --verbose)
    # Which call the summary, graphs and explain counts describe (the gate counts it).
    captured_call: str = FRESH_FIRST_CALL
    later_call: LaterCall | None = None
    # What the model's calls change on it (a scheduler's step index, a cache, a table built on
    # first access); None: nothing, or not observed.
    model_state: ModelStateReport | None = None
    # The user's torch.compile settings the scan ran with: backend and mode (the timings),
    # dynamic (capture, run-time counts, recompile check, timings), options (the timings).
    compile_settings: dict[str, Any] = field(default_factory=dict)
    # Dynamo settings the scanned process had changed from their defaults (the model's own
    # ``torch._dynamo.config.X = ...``): never advised again, never tried as a fix.
    dynamo_settings: dict[str, Any] = field(default_factory=dict)
    # torch.compile raised on the model where eager did not (exit 3, every gate fails).
    compile_error: CompileError | None = None
    program: ProgramReport | None = None  # breakscan run: the whole program, not one model
    # Where reports may read source to show it (None: any file the scan ran). A trace names
    # files of someone else's job: only Python files under these folders are shown.
    source_roots: list[str] | None = None
    # The source lines the reports show, read when the result was recorded for another machine
    # (``check --results``): a result read back from a file is shown from these only, and
    # never from a file it names (``report/excerpts.py``). None: read from the files.
    sources: dict[str, SourceExcerpt] | None = None
    ranks: list[RankSummary] = field(default_factory=list)  # breakscan trace: per rank
    rank_differences: list[str] = field(default_factory=list)  # what differs between ranks
    partial: bool = False  # the scan stopped early: only the stages before stopped_at are filled
    stopped_at: str | None = None  # the stage that hung, crashed or raised
    error: str | None = None  # why it stopped (one line)
    # Wall-clock seconds per stage, in the order they ran (load, explain, eager run, ...).
    stages: dict[str, float] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    @classmethod
    def start(cls, target: str, found: Findings, *, torch_version: str,
              captured_call: str = FRESH_FIRST_CALL, method: str = "", device: str = "",
              training: bool = False, inputs: list[InputSpec] | None = None,
              compile_settings: dict[str, Any] | None = None, **facts: Any) -> ScanResult:
        """A result as every kind begins: what it is about (target, method, the torch and
        Python versions, device, training, inputs, which call it describes, the compile
        settings), then what the analysis found and the kind's own ``facts`` (fields)."""
        untested = untested_torch_note(torch_version)
        if untested:
            facts["notes"] = [untested, *facts.get("notes", [])]
        return cls(target=target, method=method, torch_version=torch_version,
                   python_version=sys.version.split()[0], device=device, training=training,
                   inputs=inputs if inputs is not None else [], captured_call=captured_call,
                   compile_settings=compile_settings if compile_settings is not None else {},
                   summary=found.summary, explain=found.explain, graphs=found.graphs,
                   breaks=found.breaks, frames=found.frames,
                   discrepancies=found.discrepancies, **facts)

    @property
    def kind(self) -> str:
        """What was scanned, the one test every renderer asks: ``"model"`` (a scan),
        ``"program"`` (``breakscan run``) or ``"trace"`` (``breakscan trace``)."""
        if self.program is not None:
            return "program"
        return "trace" if self.ranks else "model"

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for brk, raw in zip(data["breaks"], self.breaks):
            brk["graph_splits"] = raw.graph_splits
        for graph in data["graphs"]:
            _flatten_inductor(graph)
        if self.recompiles is None:  # never called with other inputs: not measured, not 0
            data["summary"]["recompile_count"] = None
        if self.compile_time is not None:  # the derived totals, as the reports state them
            _compile_time_totals(data["compile_time"], self.compile_time)
        # Keep the documented key order: identity first, then the facts.
        order = ["schema_version", "target", "method", "torch_version", "python_version", "device",
                 "training", "inputs", "captured_call", "compile_settings", "dynamo_settings", "compile_error", "program", "ranks",
                 "rank_differences", "summary", "explain", "later_call", "model_state",
                 "discrepancies", "breaks", "graphs", "frames", "recompiles", "timings", "compile_time", "repeated_blocks", "static",
                 "kernel_findings", "fixes", "unfixed", "gate", "partial", "stopped_at", "error", "notes", "capture_seconds",
                 "stages", "model_output", "dynamo_log"]
        return {key: data[key] for key in order}


def _compile_time_totals(data: dict[str, Any], found: CompileTime) -> None:
    data.update(restart_s=found.restart_s, recompile_s=found.recompile_s,
                breaks_s=found.breaks_s)
    for key, run in (("cold", found.cold), ("warm", found.warm)):
        if run is not None:
            data[key].update(frames_s=run.frames_s, cache_hits=run.cache_hits,
                             cache_misses=run.cache_misses)


def _flatten_inductor(graph: dict[str, Any]) -> None:
    """``--kernels``' facts as the graph's own keys (``graphs[].ir``, ``kernel_count``,
    ``kernels``, ``fallbacks``, ...), present (null / empty) without --kernels too."""
    found = graph.pop("inductor", None) or {}
    graph["ir"] = found.get("ir")
    graph["ir_nodes"] = found.get("nodes", [])
    graph["kernel_count"] = found.get("kernel_count")
    for key in ("kernels", "fallbacks", "fusion_stops"):
        graph[key] = found.get(key, [])
    graph["inductor_compile_s"] = found.get("compile_s")
    graph["inductor_error"] = found.get("error")


# The torch releases breakscan's suites run on (CI: 2.13.0, and 2.14.1 in a second venv)
TESTED_TORCH = ("2.13", "2.14", "2.15")


def untested_torch_note(torch_version: str) -> str | None:
    """Once per report, on a torch release the suites do not run on."""
    release = ".".join(torch_version.split("+")[0].split(".")[:2])
    if not release[:1].isdigit() or release in TESTED_TORCH:  # "unknown": a trace without it
        return None
    tested = ", ".join(TESTED_TORCH[:-1]) + " and " + TESTED_TORCH[-1]
    return (f"breakscan is tested on torch {tested}; this is torch "
            f"{torch_version}: what it reads of Dynamo's private state is feature-detected, "
            "and what is missing is named in these notes")


@dataclass
class FixedScan:
    """What a fix's verifying child found with the fix applied."""

    result: ScanResult
    same_outputs: Correctness  # fixed model (eager) vs the original model (eager)
    compiled_outputs: Correctness | None = None  # fixed model compiled vs its eager outputs
    compile_error: str | None = None  # the fixed (or original) model did not compile
    ab: ABTiming | None = None  # original vs fixed in this process (only with a real gain)
    baseline: Correctness | None = None  # the original compiled vs eager, in this process
    random: bool = False  # the model draws random numbers (compiled with fallback_random)
    # The original raises compiled with the timing backend (its scan's compile_error.backend)
    # and this fixed model compiles with it: nothing to time against, a failure removed.
    rescued: bool = False
    # What a switch changes in the model, measured on the switched copy (submodules removed,
    # parameters frozen, modules put in eval mode); empty for other fixes.
    changes: list[str] = field(default_factory=list)
    # A path switch that negates an attribute ("flip"): the value the switched copy now has
    # (its repr), so the code shown sets that value, never `x = not x`.
    set_to: str | None = None
    # The warm-up switch: what its eager call changed on the model (``pipeline/state.py``
    # names), so outputs that differ are put down to the state it left, in those names.
    warmed: list[str] = field(default_factory=list)
    # An escape hatch's fake read off the eager run (fixes/observe.py), with what it rests on.
    observed_fake: str | None = None
    cold_compile_s: tuple[float, float] | None = None  # regional_compile: (whole, block alone)


@dataclass
class SourceExcerpt:
    """A file's lines a report shows, carried in a result (see ``ScanResult.sources``)."""

    line_count: int  # the whole file's (a report shows a long file as windows)
    # (first line number, the lines from it on, each with its line end): the whole file, or
    # windows around the lines the result names
    windows: list[tuple[int, list[str]]]


@dataclass
class ModelRun:
    """One model of a run (``breakscan check`` has several): its result, or why it has none."""

    target: str
    result: ScanResult | None
    error: str | None = None
    exit_code: int = 0  # 0 passed, 1 gate failed, 2 usage error, 3 the model failed
    stage: str | None = None  # where an unfinished scan stopped (load, explain, compile, ...)
    detail: str = ""  # traceback or the scan process's last stderr lines (shown with --debug)
    cached: bool = False  # `check`: the stored result of an unchanged target (not rescanned)
    origin: RunOrigin | None = None  # `check --results`: the shard and machine that ran it
    expected: ExpectedCheck | None = None  # against the zoo's expected counts (--expected)
    flaky: bool = False  # listed as flaky: its failure is reported, it does not fail the run
    seconds: float | None = None  # `check`: the target's wall time, its process start included

    @property
    def partial(self) -> bool:
        """Stopped early but kept what the finished stages found."""
        return self.error is not None and self.result is not None

    @property
    def interrupted(self) -> bool:
        """Stopped by SIGINT (130), SIGTERM (143) or SIGHUP (129) sent to breakscan."""
        from ..errors import INTERRUPT_CODES

        return self.exit_code - 128 in INTERRUPT_CODES

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "exit_code": self.exit_code, "error": self.error,
                "stage": self.stage, "partial": self.partial, "cached": self.cached,
                "flaky": self.flaky, "seconds": self.seconds,
                "origin": dataclasses.asdict(self.origin) if self.origin else None,
                "expected": dataclasses.asdict(self.expected) if self.expected else None,
                "result": self.result.to_dict() if self.result else None}


def overall_exit_code(runs: list[ModelRun]) -> int:
    """The most severe code of several runs: 3 (a model failed) > 2 (usage) > 1 (gate) > 0; a
    flaky target's failure is reported, not counted (an interruption always is)."""
    return max((run.exit_code for run in runs if not run.flaky or run.interrupted), default=0)


@dataclass
class RunOrigin:
    """Where a run was made (``check --results``), kept through ``breakscan merge``."""

    shard: str | None  # "2/3", or None for an unsharded check
    machine: str
    torch: str
    python: str
    breakscan: str


@dataclass
class ShardEntry:
    """One line of a ``check --results`` file: a finished target. ``--resume`` reuses it only
    while ``key`` (the result cache's key: target, options, versions, settings) is the same and
    every file in ``files`` still has its hash; ``merge`` only when ``options`` are the scan
    options the config gives the target."""

    key: str
    run: ModelRun
    options: dict[str, Any] | None = None  # ScanOptions.to_dict(); None: the config refused it
    files: dict[str, str] = field(default_factory=dict)  # file -> sha256 of its bytes
    format: int = 2


@dataclass
class Comparison:
    """``breakscan compare A B``: two targets scanned and timed the same way, side by side."""

    a: ModelRun
    b: ModelRun
    weights_shared: bool  # B was given A's weights (same parameter names and shapes)
    outputs: Correctness | None  # B's eager outputs vs A's on the same inputs
    note: str | None = None  # why outputs were not compared
    ab: ABTiming | None = None  # A (original) vs B (fixed), compiled and timed in one process

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "a": self.a.to_dict(), "b": self.b.to_dict(),
                "weights_shared": self.weights_shared,
                "outputs": dataclasses.asdict(self.outputs) if self.outputs else None,
                "note": self.note, "ab": dataclasses.asdict(self.ab) if self.ab else None}
