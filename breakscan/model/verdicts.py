"""The records of what breakscan measured and judged: timings (eager, compiled, fullgraph and
the interleaved A/B of a fix), output checks, fixes with their before/after numbers, and the
gate's checks.

Plain dataclasses, filled by ``measure``, ``fixes`` and ``gate``, held by a
:class:`~breakscan.model.result.ScanResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Timing:
    """Steady-state latency of one variant (torch.utils.benchmark, adaptive run count)."""

    median_s: float
    iqr_s: float  # spread: interquartile range of the per-run times
    runs: int
    threads: int
    # The spread stayed above 10 % of the median for the whole time budget, or fewer than 4
    # blocks were timed (no spread to speak of): the number may move between runs (a loaded
    # machine, too little time); never hidden, never silently trusted.
    noisy: bool = False
    blocks: int = 0  # timed blocks the median and IQR come from (0: not recorded)


@dataclass
class Correctness:
    """One output compared with another: each tensor's difference relative to its magnitude."""

    match: bool
    max_abs_error: float | None
    max_rel_error: float | None
    message: str | None = None
    # The largest difference as a share of the tensor's largest magnitude (None: not
    # measurable, e.g. shapes differ); judged against pipeline/outputs.TOLERANCE per dtype.
    scaled_error: float | None = None


@dataclass
class ModelStateReport:
    """What the model's calls change on it (``pipeline/state.py``): attributes, buffers and
    hook dicts by dotted name. Compared runs each start from the state the model was built
    with."""

    every_call: list[str]  # changed by the first call and again by the second
    first_call_only: list[str]  # changed by the first call only (built on first access)
    known: bool = True  # False: only one call was observed (a second never ran)

    def sentence(self) -> str:
        """The one line every report prints."""
        parts = []
        if self.every_call:
            parts.append("the model keeps state between calls: "
                         + quoted_names(self.every_call))
        if self.first_call_only:
            parts.append(("its first call sets " if self.known else "its call changes ")
                         + quoted_names(self.first_call_only))
        how = ("each compared run (eager, compiled, each fix) started from the state it was "
               "built with, call k compared with call k")
        return "; ".join(parts) + f" ({how})"


def quoted_names(paths: list[str], most: int = 6) -> str:
    """`a`, `b` and 3 more: attribute paths as every report names them."""
    shown = ", ".join(f"`{p}`" for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


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
    # why fullgraph=True failed: its first break, or a later call past the recompile limit
    fullgraph_error: str | None = None
    speedup: float | None = None  # eager median / compiled median
    correctness: Correctness | None = None
    # The model draws random numbers: it was compiled with Inductor's fallback_random, so its
    # draws are eager's and its outputs compare (the compiled timings include that too).
    random_comparable: bool = False
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
    # original / fixed (> 1: the fix is faster); None when a side's block times spread more
    # than their median: no ratio is measured then (``unmeasured`` says why)
    speedup: Interval | None
    # faster | slower | no measurable difference (the interval straddles 1) | not measured
    verdict: str
    blocks: int  # block pairs timed
    calls_per_block: int
    threads: int
    backend: str
    noisy: bool = False  # a variant's block times spread more than 10 % of their median
    unmeasured: str | None = None  # why there is no speedup (verdict "not measured")

    def said(self) -> str:
        """The verdict in a few words: 'faster (6.75×)', 'not measured (the fixed timing's
        spread (IQR) is 1.8× its median)'."""
        if self.speedup is None:
            return f"{self.verdict} ({self.unmeasured})"
        return f"{self.verdict} ({self.speedup.value:.2f}×)"


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
    kernels_per_call: float | None = None  # with --kernels: kernels launched per model call
    kernel_findings: int | None = None  # with --kernels: the kernel rules' findings (BS2xx)
    # regional_compile: the cold compile's frames, seconds, in the fix's process (whole model
    # before, the repeated block alone after)
    cold_compile_s: float | None = None


# What trying a fix showed, in the words every report uses.
FIX_STATUSES = {
    "verified": "tried: fewer eager frames, graph calls, returns to Python, graphs, recompiles or "
                "kernels and more of none, not slower (more of one: only when measurably "
                "faster; a kernel rule's rewrite: fewer findings and faster); same outputs",
    "verified: changes semantics": "tried on a switch that changes what the model computes "
                                   "(a submodule removed, parameters frozen, a training "
                                   "behaviour turned off, or other outputs), or a rewrite that "
                                   "changes what is drawn (drop_fork_rng): compiled, the "
                                   "changed model matches its own eager run with a gain as "
                                   "for verified; the reason says what it changes against the "
                                   "original",
    "slower": "tried: fewer of something and more of nothing, but measurably slower (no gain)",
    "no effect": "tried: eager frames, graph calls, returns to Python, graphs, recompiles and "
                 "kernels unchanged",
    "makes it worse": "tried: more eager frames, graph calls, returns to Python, graphs, "
                      "recompiles or kernels, and not measurably faster",
    "breaks compilation": "tried: with it, torch.compile fails on the model",
    "changes outputs": "tried: the outputs differ from the original model's",
    "not applicable": "tried: it cannot be applied to this model (the reason says why)",
    "not tried": "a candidate (--fix tries it), refused, or its check did not finish",
}

# The reason of a switch named by a scan without --fix (status "not tried").
CANDIDATE = "a candidate on the break's path, not tried: --fix verifies it"


@dataclass
class Fix:
    """One proposed fix and whether it verified: a setting, or a rewrite of the user's source."""

    rule: str  # catalogue id, e.g. "BS003"
    fix_id: str  # print_guard | torch_where | capture_scalar_outputs | ... (see fixes.py)
    kind: str  # setting | source | switch | constants | library (a patch of an installed file)
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
    # How far compiling alone moved the original's outputs from eager in the fix's child (a
    # share of the outputs' magnitude): the drift the fix's compiled outputs are judged against.
    baseline_error: float | None = None
    random: bool = False  # the model draws random numbers: compiled with fallback_random
    # The root causes (their ranks, 1-based) the fixed scan no longer has: a setting or switch
    # is tried once per model and credited to each break it removes. None: not known (a
    # source fix moves lines, so its breaks are not matched by line).
    removes: list[int] | None = None
    # A switch: what it changes in what the model computes, against the original (None: it
    # keeps the model's computation, or it is not a switch).
    changes: str | None = None

    def __post_init__(self) -> None:
        if self.verified and self.status == "not tried":  # built as verified (a recorded result)
            self.status = "verified"



@dataclass
class Check:
    """One CI gate check: ``actual`` must be <= ``limit``."""

    name: str  # max_breaks, max_graphs, max_recompiles, max_graph_calls, fail_on:<category>, fullgraph, baseline:*
    limit: int | float  # max_compile_time: seconds
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
class ExpectedCheck:
    """One target against the zoo's expected counts (``--expected``): ``PASS`` (as expected),
    ``FAIL`` (a count went up, or it no longer scans), ``IMPROVED`` (a count went down: fails
    too unless improvements are allowed, so the file never goes stale), ``NEW`` (not in the
    file). ``changes`` says what moved, e.g. "graphs 3 -> 2"."""

    status: str
    changes: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)  # this run's, as the file records them
    fails_gate: bool = True  # whether this status fails the run (allowed improvements do not)


@dataclass
class OutputsCheck:
    """What ``compare``'s outputs child found: whether B got A's weights, B's outputs against
    A's, why they were not compared (or what else to know), and both compiled models timed
    interleaved in that process."""

    weights_shared: bool
    correctness: Correctness | None
    note: str | None = None
    ab: ABTiming | None = None
