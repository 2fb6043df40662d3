"""The one result object every stage fills in and every reporter renders.

Plain dataclasses only: reporters read these, they never run a model. ``to_dict`` gives the
JSON document described in docs/json-schema.md; bump ``SCHEMA_VERSION`` on any breaking change.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .frames import Frame

SCHEMA_VERSION = "1.11"


def whole(value: float | None) -> str:
    """A per-call average as read: 48, not 48.0; 2.5 stays 2.5; None is "-"."""
    if value is None:
        return "-"
    return str(int(value)) if value == int(value) else f"{value:g}"


# --- raw records: what one Dynamo pass (or a trace file) produced, uninterpreted ------------

@dataclass
class CodeEvent:
    """One (original code -> transformed code) pair seen by the bytecode hook."""

    name: str
    file: str
    first_line: int
    compile_id: str | None


@dataclass
class FrameMetric:
    """The fields of one ``CompilationMetrics`` row that breakscan uses."""

    compile_id: str | None
    name: str | None
    file: str | None
    first_line: int | None
    graph_op_count: int | None
    fail_type: str | None
    fail_reason: str | None
    fail_file: str | None
    fail_line: int | None
    compile_s: float | None = None  # the whole frame's compile (Dynamo + backend), seconds


@dataclass
class RawCapture:
    """Everything one Dynamo pass produced, uninterpreted."""

    explain: Any | None  # torch._dynamo.backends.debugging.ExplainOutput
    explain_error: str | None
    graph_break_logs: list[str]
    recompile_logs: list[str]
    code_events: list[CodeEvent]
    metrics: list[FrameMetric]
    dynamo_log: list[str]
    model_output: str
    seconds: float
    notes: list[str] = field(default_factory=list)


@dataclass
class RawFailure:
    """An exception a compiled call raised, kept as data: its class, its text, its traceback."""

    exception: str  # the class name, e.g. "TorchRuntimeError"
    text: str  # str(exc): Dynamo's message, with its "from user code:" stack
    traceback: list[Frame]  # the Python traceback, outermost first


@dataclass
class ModuleConstant:
    """A tensor attribute of the model's modules that holds a constant: a 0-d value or a
    handful of integers (a kernel size, a stride) that no call changes. Used in ``if``, pad
    amounts or slices, it breaks the graph at every use (its value needs the host)."""

    file: str  # the file of the class that creates it
    cls: str  # the module class, e.g. "EncodecConv1d"
    attr: str  # the attribute, e.g. "stride"
    kind: str  # buffer | parameter | attribute
    value: Any  # the Python value: int, float, bool, or a list of ints
    line: int | None  # the line that creates it (usually in __init__), None when not found
    code: str = ""
    instances: int = 1  # modules of this class holding it
    classes: list[str] = field(default_factory=list)  # the class and its bases, by name


@dataclass
class BreakRecord:
    """One graph-break log record, parsed from Dynamo's `graph_breaks` artifact."""

    gb_id: str | None
    gb_type: str
    explanation: str
    hints: list[str]
    context: str
    header_file: str | None
    header_line: int | None
    user_stack: list[Frame]
    duplicate: bool = False  # Dynamo's short form: "user stack suppressed due to duplicate"
    frame_skipped: bool = False  # the frame fell back to eager instead of resuming
    wrapper_gb_id: str | None = None  # e.g. GB7000 "graph break in loop" around the real cause
    wrapper_gb_type: str | None = None
    raw: str = ""
    # "The branch condition involves a tensor computed as follows:": the lines that computed
    # the tested value, origin first; graph inputs name values that crossed an earlier break.
    provenance: list[Frame] = field(default_factory=list)
    graph_inputs: list[str] = field(default_factory=list)  # e.g. "L_stack0_"
    skip_kind: str | None = None  # how Dynamo fell back to eager (see breaklog.SKIP_KINDS)


@dataclass
class GraphInfo:
    """One FX graph Dynamo handed to the backend."""

    index: int
    compile_id: str | None
    op_count: int  # call_function + call_method + call_module nodes
    call_function_count: int  # what explain counts
    ops: list[str]
    source_lines: list[str]  # "file:line" the graph's nodes come from, in order, unique
    input_shapes: list[list[int | str] | None]  # a dynamic dimension: its symbol, e.g. "s0"
    break_reason: str | None  # why Dynamo ended this graph (None: end of frame)


@dataclass
class CompiledFrame:
    """A code object Dynamo processed (bytecode hook + compilation metrics)."""

    compile_id: str | None
    name: str
    file: str
    first_line: int
    is_resume: bool
    resume_line: int | None
    graph_op_count: int | None
    skipped: bool = False
    fail_type: str | None = None
    fail_reason: str | None = None
    fail_file: str | None = None
    fail_line: int | None = None
    break_index: int | None = None  # index into ScanResult.breaks this frame resumes after


@dataclass
class RootBreak:
    """A root-cause break: one source location, however many records and graphs it caused."""

    owner: str  # user | third_party | torch
    category: str
    gb_id: str | None
    gb_type: str
    file: str
    line: int
    code: str
    function: str
    call_chain: list[Frame]
    explanation: str
    hints: list[str]
    suggestion: str
    doc_url: str | None
    records: int  # raw graph-break log records attributed to this location
    explain_reasons: int  # how many of explain's break reasons point here
    resume_functions: list[str]
    frame_skipped: bool = False
    cause_category: str | None = None  # for frame_skipped: the category of the break inside
    wrapper_gb_id: str | None = None
    sources: list[str] = field(default_factory=list)  # which channels saw it: log, explain, metrics
    # Which captured calls hit it: "every" (first and later), "first_only" (a lazy init, a
    # warning issued once), "later_only" (a path the first call does not take).
    calls: str = "every"
    # For a break inside a library: the user's own line that calls into it (where to wrap,
    # disable or change the call); None when the break is in the user's code or no user frame
    # is on the stack.
    user_frame: Frame | None = None
    # Where the break's condition is tested, when that differs from where its value comes from:
    # a branch on a value computed elsewhere is reported at the origin (``file``/``line``), and
    # each branch that tests it is a site.
    sites: list[Frame] = field(default_factory=list)
    # Breaks that exist only because this one made Dynamo skip their enclosing function: a
    # comprehension (its own frame on Python 3.11) that Dynamo then compiled alone and that
    # broke there. They go when this break is fixed, so they are not root causes of their own.
    follow_on: list[Frame] = field(default_factory=list)
    # For a break on a constant kept in a tensor (category tensor_constant): the attributes, in
    # the class that creates them; the root's file:line is where the first one is created.
    constants: list[ModuleConstant] = field(default_factory=list)
    # What Dynamo did about this break and why, when it fell back to eager: a whole frame
    # skipped (``frame_skipped``) or the rest of a function run eagerly.
    skip_cause: str | None = None
    skip_kind: str | None = None  # loop | whole_frame | rest_of_frame | metrics
    # At run time, per model call: how often this break sent the compiled model back to Python
    # (its resume function ran, or the frame it made Dynamo skip ran eagerly). None: not measured.
    fires_per_call: float | None = None
    fires: int | None = None  # breakscan run: how many times it fired over the whole program
    # With --time: the measured time outside compiled graphs per call spent in this break's
    # gaps, and the compile time of the extra frames it created (None: not timed).
    cost_s_per_call: float | None = None
    compile_cost_s: float | None = None
    ranks: list[int] = field(default_factory=list)  # breakscan trace: the ranks it appears on

    @property
    def root_category(self) -> str:
        """The break's own category: for a skipped frame, the break that caused the skip."""
        return self.cause_category if self.frame_skipped and self.cause_category \
            else self.category

    @property
    def graph_splits(self) -> int:
        """Frames this break cut: one per record (a nested break cuts every enclosing frame)."""
        return max(self.records, self.explain_reasons, 1)

    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class CompileError:
    """The compiled model raised where the eager model did not: ``torch.compile`` fails on it.

    Not a graph break: nothing falls back to eager, the user's compiled call crashes (on every
    call). ``file``/``line`` is the user's or the library's line that triggers it, never torch's.
    """

    message: str  # the error's first line, e.g. "RuntimeError when making fake tensor call"
    exception: str  # the exception's class, e.g. "TorchRuntimeError"
    file: str | None
    line: int | None
    call_chain: list[Frame]  # outermost first, torch's frames left out
    code: str = ""  # the source line at file:line
    explanation: str = ""  # Dynamo's "Explanation:" line, when it gave one
    owner: str = "user"  # user | third_party (whose line file:line is)

    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no line outside torch)"


@dataclass
class StaticFinding:
    """A pattern that breaks (or recompiles), found by reading the source (``breakscan lint``)."""

    rule: str  # rule id from the catalogue (breakscan/rules.py), e.g. "BS001"
    category: str  # a break category, or a recompile cause (shape_branch, shape_loop)
    file: str
    line: int
    code: str  # the source line, stripped
    function: str  # where it is, e.g. "Net.forward"
    message: str  # what was seen, e.g. "`.item()` turns a tensor into a Python number"
    # After a scan: "break" (the run broke here), "ran" (the line ran, no break) or
    # "not exercised" (the run never reached it: a break waiting for other inputs).
    # `breakscan lint` alone: "static".
    status: str = "static"


@dataclass
class ExplainCounts:
    """What `torch._dynamo.explain` said, verbatim."""

    available: bool
    graph_count: int | None = None
    graph_break_count: int | None = None
    op_count: int | None = None
    break_reasons: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass
class Discrepancy:
    """A number on which explain and breakscan's own capture differ, and why."""

    topic: str
    explain: int | None
    breakscan: int | None
    reason: str


@dataclass
class Recompile:
    """One recompile: the frame Dynamo compiled again and the guards that failed."""

    function: str
    file: str
    line: int
    reasons: list[str]  # e.g. "tensor 'x' size mismatch at index 0. expected 8, actual 4"
    failed_compile_ids: list[str]
    input_set: int | None  # which input set triggered it
    guard_lines: list[str] = field(default_factory=list)  # user file:line a guard names
    # breakscan run: the user's frames of the call that recompiled, outermost first (the
    # program's line that passed the new input, then the model's lines down to the frame).
    called_from: list[Frame] = field(default_factory=list)
    rank: int | None = None  # breakscan trace: the rank that recompiled


@dataclass
class RecompileReport:
    """What calling the compiled model with several input sets cost (--vary-batch/--shapes)."""

    input_sets: list[list[list[int]]]
    graph_count: int
    recompiles: list[Recompile]
    limit_hits: list[str]
    recompile_limit: int | None
    dynamic_graph_count: int | None = None  # the same sets replayed with dynamic=True
    dynamic_recompile_count: int | None = None
    suggestion: str | None = None
    specialised_sets: list[int] = field(default_factory=list)  # indexes with a size 0/1
    dynamic_replayed: int | None = None  # sets replayed with dynamic=True, when not all
    dynamic_helps: bool | None = None  # the replay had fewer recompiles (None: not replayed)


@dataclass
class Timing:
    """Steady-state latency of one variant (torch.utils.benchmark, adaptive run count)."""

    median_s: float
    iqr_s: float  # spread: interquartile range of the per-run times
    runs: int
    threads: int
    # The spread stayed above 10 % of the median for the whole time budget: the number may move
    # between runs (a loaded machine, too little time); never hidden, never silently trusted.
    noisy: bool = False


@dataclass
class Correctness:
    """Compiled outputs vs eager (torch.testing.assert_close, dtype-appropriate tolerances)."""

    match: bool
    max_abs_error: float | None
    max_rel_error: float | None
    message: str | None = None


@dataclass
class TimingReport:
    """Eager vs torch.compile vs fullgraph=True on the scanned device (--time)."""

    device: str
    threads: int
    backend: str
    mode: str | None
    eager: Timing | None = None
    compiled: Timing | None = None
    fullgraph: Timing | None = None
    compile_s: float | None = None  # wall time of the first compiled call
    fullgraph_compile_s: float | None = None
    compile_error: str | None = None
    fullgraph_error: str | None = None  # why fullgraph=True did not compile (the first break)
    speedup: float | None = None  # eager median / compiled median
    correctness: Correctness | None = None
    outside_share: float | None = None  # share of each compiled call outside compiled graphs
    graph_s_per_call: float | None = None  # time inside compiled graphs per call (see below)
    # The profiled share applied to the compiled median: time inside + outside = the median.
    outside_s_per_call: float | None = None
    load_average: float | None = None  # the machine's 1-minute load average when timing ended
    notes: list[str] = field(default_factory=list)

    @property
    def noisy(self) -> list[str]:
        """The variants whose timing is noisy (see :attr:`Timing.noisy`)."""
        return [name for name, t in (("eager", self.eager), ("torch.compile", self.compiled),
                                     ("fullgraph=True", self.fullgraph)) if t and t.noisy]


@dataclass
class Interval:
    """A median (seconds per call) or a ratio, with its 95 % bootstrap confidence interval."""

    value: float
    low: float
    high: float


@dataclass
class ABTiming:
    """The original and the fixed model compiled and timed in one process, interleaved in
    alternating blocks with the same inputs and thread count (``--fix``, verified fixes)."""

    original: Interval  # seconds per call: median over blocks, 95 % interval
    fixed: Interval
    speedup: Interval  # original / fixed (> 1: the fix is faster)
    verdict: str  # faster | slower | no measurable difference (the interval straddles 1)
    blocks: int  # block pairs timed
    calls_per_block: int
    threads: int
    backend: str
    noisy: bool = False  # a variant's block times spread more than 10 % of their median


@dataclass
class FixMetrics:
    """The numbers a fix is judged by, before or after it."""

    graph_count: int
    breaks: int  # root-cause breaks
    recompiles: int | None  # over the --vary-batch/--shapes sets (None: not exercised)
    compiled_s: float | None  # compiled median latency (a verified fix: from its A/B timing)
    speedup: float | None  # eager median / compiled median (the scan's own; None after a fix)
    graph_calls_per_call: float | None = None  # at run time (see Summary)
    eager_gaps_per_call: float | None = None
    frames_run_eagerly_per_call: float | None = None


# What trying a fix showed, in the words every report uses.
FIX_STATUSES = {
    "verified": "tried: fewer graphs or returns to Python, same outputs, not slower",
    "slower": "tried: removes the break, but the model is measurably slower (no gain)",
    "no effect": "tried: graphs, graph calls, returns to Python and recompiles unchanged",
    "makes it worse": "tried: more graphs, graph calls, returns to Python or recompiles",
    "breaks compilation": "tried: with it, torch.compile fails on the model",
    "changes outputs": "tried: the outputs differ from the original model's",
    "not applicable": "tried: it cannot be applied to this model (the reason says why)",
    "not tried": "a candidate (--fix tries it), refused, or its check did not finish",
}


@dataclass
class Fix:
    """One proposed fix and whether it verified: a setting, or a rewrite of the user's source."""

    rule: str  # catalogue id, e.g. "BS003"
    fix_id: str  # print_guard | torch_where | capture_scalar_outputs | ... (see fixes.py)
    kind: str  # setting | source
    title: str
    category: str
    file: str | None = None  # the break it targets (source fixes: the file rewritten)
    line: int | None = None
    setting: str | None = None  # e.g. "torch._dynamo.config.capture_scalar_outputs = True"
    diff: str | None = None  # unified diff of a source fix
    verified: bool = False  # tried and worth applying: same outputs, a real gain, not slower
    reason: str | None = None  # why it is not verified (refused, outputs differ, no gain, ...)
    # Whether it was tried and what it did: see FIX_STATUSES.
    status: str = "not tried"
    before: FixMetrics | None = None
    after: FixMetrics | None = None
    outputs_match: bool | None = None  # fixed model's outputs vs the original's (same weights)
    max_abs_error: float | None = None
    call: str | None = None  # disable_call: the library function whose call is wrapped
    written: bool = False  # applied to the user's file (--fix --write)
    backup: str | None = None  # where the original was saved when written
    source_sha256: str | None = None  # a source fix: the file's content when it was planned
    ab: ABTiming | None = None  # verified fixes: original vs fixed, timed in one process

    def __post_init__(self) -> None:
        if self.verified and self.status == "not tried":  # built as verified (a recorded result)
            self.status = "verified"


@dataclass
class FixedScan:
    """What a fix's verifying child found with the fix applied."""

    result: ScanResult
    same_outputs: Correctness  # fixed model (eager) vs the original model (eager)
    compiled_outputs: Correctness | None = None  # fixed model compiled vs its eager outputs
    compile_error: str | None = None  # the fixed (or original) model did not compile
    ab: ABTiming | None = None  # original vs fixed in this process (only with a real gain)


@dataclass
class Check:
    """One CI gate check: ``actual`` must be <= ``limit``."""

    name: str  # max_breaks, max_graphs, max_recompiles, max_graph_calls, fail_on:<category>, fullgraph, baseline:*
    limit: int
    actual: int | float  # max_graph_calls: an average over the counted calls
    passed: bool
    detail: str = ""  # the breaks behind a failure


@dataclass
class GateResult:
    passed: bool
    checks: list[Check]
    improvements: list[str] = field(default_factory=list)  # against a baseline

    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


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
    gate: GateResult | None = None
    static: list[StaticFinding] = field(default_factory=list)  # lint of the scanned source
    fixes: list[Fix] = field(default_factory=list)  # with --fix
    unfixed: list[str] = field(default_factory=list)  # with --fix: "no fix proposed for #N: …"
    notes: list[str] = field(default_factory=list)  # degraded features, private-API gaps
    model_output: str = ""  # what the model printed while it was scanned
    dynamo_log: list[str] = field(default_factory=list)  # Dynamo's own warnings (shown with --verbose)
    # Which call the summary, graphs and explain counts describe (the gate counts it).
    captured_call: str = "first call of a freshly built model"
    later_call: LaterCall | None = None
    # The user's torch.compile settings the scan ran with: backend and mode (the timings),
    # dynamic (capture, run-time counts, recompile check, timings), options (the timings).
    compile_settings: dict[str, Any] = field(default_factory=dict)
    # torch.compile raised on the model where eager did not (exit 3, every gate fails).
    compile_error: CompileError | None = None
    program: ProgramReport | None = None  # breakscan run: the whole program, not one model
    # Where reports may read source to show it (None: any file the scan ran). A trace names
    # files of someone else's job: only Python files under these folders are shown.
    source_roots: list[str] | None = None
    ranks: list[RankSummary] = field(default_factory=list)  # breakscan trace: per rank
    rank_differences: list[str] = field(default_factory=list)  # what differs between ranks
    partial: bool = False  # the scan stopped early: only the stages before stopped_at are filled
    stopped_at: str | None = None  # the stage that hung, crashed or raised
    error: str | None = None  # why it stopped (one line)
    # Wall-clock seconds per stage, in the order they ran (load, explain, eager run, ...).
    stages: dict[str, float] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for brk, raw in zip(data["breaks"], self.breaks):
            brk["graph_splits"] = raw.graph_splits
        # Keep the documented key order: identity first, then the facts.
        order = ["schema_version", "target", "method", "torch_version", "python_version", "device",
                 "training", "inputs", "captured_call", "compile_settings", "compile_error", "program", "ranks",
                 "rank_differences", "summary", "explain", "later_call",
                 "discrepancies", "breaks", "graphs", "frames", "recompiles", "timings", "static",
                 "fixes", "unfixed", "gate", "partial", "stopped_at", "error", "notes", "capture_seconds",
                 "stages", "model_output", "dynamo_log"]
        return {key: data[key] for key in order}


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

    @property
    def partial(self) -> bool:
        """Stopped early but kept what the finished stages found."""
        return self.error is not None and self.result is not None

    @property
    def interrupted(self) -> bool:
        """Stopped by SIGINT (130), SIGTERM (143) or SIGHUP (129) sent to breakscan."""
        from .errors import INTERRUPT_CODES

        return self.exit_code - 128 in INTERRUPT_CODES

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "exit_code": self.exit_code, "error": self.error,
                "stage": self.stage, "partial": self.partial, "cached": self.cached,
                "result": self.result.to_dict() if self.result else None}


def overall_exit_code(runs: list[ModelRun]) -> int:
    """The most severe code of several runs: 3 (a model failed) > 2 (usage) > 1 (gate) > 0."""
    return max((run.exit_code for run in runs), default=0)


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
