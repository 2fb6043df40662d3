"""What one Dynamo pass and the compiled calls produced, uninterpreted: the records the capture
fills in the child and the analysis reads (``analyse``, ``impact``). Plain data, no torch, so the
analysis needs neither the capture nor Dynamo to name them; they never leave the process that
made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..frames import Frame
from .records import FrameMetric

CodeKey = tuple[str, str, int]  # (co_name, co_filename, co_firstlineno)


class CallCounts(dict):  # type: ignore[type-arg]
    """Calls per code key (``dict[CodeKey, int]``), and in ``compiled`` how many of them ran
    Dynamo's transformed code. A frame that hit the recompile limit is skipped after its
    compiles: only its calls that ran the original code ran eagerly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compiled: dict[CodeKey, int] = {}


@dataclass
class CodeEvent:
    """One (original code -> transformed code) pair seen by the bytecode hook."""

    name: str
    file: str
    first_line: int
    compile_id: str | None


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
class RawRuntime:
    """The compiled model's steady state, counted: what repeats at run time, uninterpreted."""

    calls: int  # model calls counted
    graph_calls: int  # compiled-graph calls over those calls
    python_calls: CallCounts  # calls of resume functions and of the frames asked for
    error: str | None = None  # why nothing was counted (one line)
    each_graph: list[int] = field(default_factory=list)  # per graph (compile order): its calls
    # The compiled model itself raised (eager did not): torch.compile fails on this model.
    failure: RawFailure | None = None


@dataclass
class RawLaterCall:
    """The compiled model's second call, uninterpreted."""

    capture: RawCapture  # what compiled anew on this call (``explain``: its new graphs only)
    graphs_run: int  # distinct compiled graphs this call ran, old and new
    python_calls: dict[CodeKey, int]  # calls of every code object on this call
    error: str | None = None  # the call raised (one line)
    counter_error: str | None = None  # breakscan's call counter failed (``python_calls`` empty)


@dataclass
class RawRegion:
    """One compiled region of a program and its run-time counts, uninterpreted."""

    name: str
    kind: str  # module | function
    compiled_at: list[tuple[str, int, str]]  # the stack of its torch.compile call
    calls: int
    graph_calls: int
    python_calls: CallCounts  # calls of each code object inside the region
    graph_counts: dict[int, int]  # calls of each graph (by index) inside the region


@dataclass
class RawProgram:
    """What a whole program's compiles and compiled calls produced, uninterpreted."""

    capture: RawCapture  # the records, with ``explain`` built from every graph the program made
    regions: list[RawRegion]
    graph_calls_outside: int  # graph calls made outside any region (none expected)
    recompile_stacks: list[list[tuple[str, int, str]]]  # the stack of each recompile record
