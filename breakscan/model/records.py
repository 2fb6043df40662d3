"""The records one capture and its analysis produce: what Dynamo (or a trace file) recorded,
uninterpreted (``FrameMetric``; the rest of the raw capture is ``raw.py``'s), and what the
analysis makes of it (graphs, compiled frames, root-cause breaks, the compile error, lint
findings, explain's counts, recompiles). Plain dataclasses, filled by ``capture``, ``analyse``, ``recompiles`` and ``trace``, held by a
:class:`~breakscan.model.result.ScanResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..frames import Frame


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
    calls_per_call: float | None = None  # how often it runs per model call (run-time counts)
    # With --kernels: what Inductor made of this graph (None without it).
    inductor: GraphKernels | None = None


@dataclass
class IRNode:
    """One op of a Dynamo graph as the IR view shows it: ``%relu: f32[2, 8] = relu(%conv)``."""

    name: str
    op: str
    text: str
    dtype: str | None  # "f32"; None for a non-tensor value
    shape: list[int | str] | None
    file: str | None  # the line it came from (the innermost frame of its stack trace)
    line: int | None
    kernels: list[str] = field(default_factory=list)  # the kernels it ended up in
    inputs: list[str] = field(default_factory=list)  # the nodes it reads


@dataclass
class Kernel:
    """What one post-fusion scheduler node of Inductor launches."""

    name: str  # Inductor's scheduler-node name, e.g. "op3" or "op9_op10_op11"
    kind: str  # fused (code Inductor generated) | extern (a library call) | fallback (ATen)
    op: str | None  # an extern call's or a fallback's op, e.g. "aten.sort.stable"
    phase: str  # forward | backward
    ir_nodes: list[str]  # the scheduler nodes fused into it
    aten_ops: list[str]  # the ATen ops it computes
    graph_nodes: list[str]  # the Dynamo graph nodes those ops came from
    lines: list[str]  # "file:line" of those ops, in graph order
    reductions: int = 0


@dataclass
class Fallback:  # an op Inductor had no lowering for and ran as an ATen call
    op: str
    file: str | None
    line: int | None


@dataclass
class FusionStop:  # Inductor's "cannot fuse A with B: reason", with the user's lines
    first: str
    second: str
    reason: str
    first_lines: list[str]
    second_lines: list[str]
    first_ops: list[str] = field(default_factory=list)  # the ATen ops of each side
    second_ops: list[str] = field(default_factory=list)
    kind: str | None = None  # "cast", "layout", "reduction" (user can act on it) or None


@dataclass
class GraphKernels:
    """One graph compiled by Inductor: its IR, kernels, fallbacks and where fusion stopped.

    ``kernel_count`` is Inductor's own ``generated_kernel_count`` for this compile (on CPU one
    per C++ kernel body, so a fused kernel may count more than one); ``kernels`` lists what runs.
    """

    ir: str
    nodes: list[IRNode]
    kernel_count: int | None
    kernels: list[Kernel]
    fallbacks: list[Fallback]
    fusion_stops: list[FusionStop]
    compile_s: float
    error: str | None = None  # Inductor failed on this graph


@dataclass
class KernelFinding:
    """A kernel rule (BS2xx) seen in one graph, at the user's line."""

    rule: str  # e.g. "BS201"
    category: str  # fallback | dtype_cast | layout_copy | broadcast | host_sync_in_graph
    graph: int
    file: str | None
    line: int | None
    message: str  # what was seen, e.g. "`aten.sort.stable` has no Inductor lowering"
    kernel: str | None = None  # the kernel it concerns, when one


@dataclass
class RawInductorGraph:  # one Inductor compile of a captured graph, before the IR is joined in

    index: int
    kernel_count: int
    kernels: list[Kernel]
    fallback_ops: list[str]
    fusion_stops: list[FusionStop]
    seconds: float
    error: str | None = None


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
    # disable or change the call); None when the break is in the user's code or stack.
    user_frame: Frame | None = None
    # Where the break's condition is tested, when that differs from where its value comes from:
    # a branch on a value computed elsewhere is reported at the origin (``file``/``line``), and
    # each branch that tests it is a site.
    sites: list[Frame] = field(default_factory=list)
    # Breaks that exist only because this one made Dynamo skip their enclosing function (a
    # comprehension compiled alone that broke there): they go when this break is fixed.
    follow_on: list[Frame] = field(default_factory=list)
    # Dynamo's records at this construct that its own hint class says follow from an earlier
    # break (CAUSED_BY_EARLIER_GRAPH_BREAK), e.g. "GB0092 Reconstruction failure" when it
    # cannot rebuild a comprehension's iterator after a break inside it: context, not a root.
    follow_on_records: list[str] = field(default_factory=list)
    # For a break on a constant kept in a tensor (category tensor_constant): the attributes, in
    # the class that creates them; the root's file:line is where the first one is created.
    constants: list[ModuleConstant] = field(default_factory=list)
    # What Dynamo did about this break when it fell back to eager, and why.
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
    registry_title: str | None = None  # the id's title in the installed registry
    # A registry id no family lists, by id or by what the break is (rules/categories.is_new):
    # a break type new in this torch, reported with Dynamo's own text and hints.
    new_in_torch: bool = False
    hint_classes: list[str] = field(default_factory=list)  # USER_ERROR, FUNDAMENTAL…
    caused_by: str | None = None  # "file:line" of the earlier break it follows from

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
    backend: str | None = None  # None: the capture raised; else the --time backend that did

    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no line outside torch)"


@dataclass
class StaticFinding:
    """A pattern that breaks (or recompiles), found by reading the source (``breakscan lint``)."""

    rule: str  # rule id from the catalogue (breakscan/rules/), e.g. "BS001"
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
