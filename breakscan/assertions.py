"""Graph-break assertions for test suites (used by the pytest plugin, usable on their own).

    import breakscan
    breakscan.assert_max_graph_breaks(model, (x,), max_breaks=0)

fails with the same facts the CLI reports: category, file:line, source line and the fix.
"""

from __future__ import annotations

from typing import Any

from .gate import evaluate
from .options import GateOptions
from .result import ScanResult
from .verdicts import GateResult


class GraphBreakError(AssertionError):
    """A model broke the graph more than allowed; the message is the readable report."""

    def __init__(self, message: str, result: ScanResult):
        super().__init__(message)
        self.result = result


def format_failure(name: str, result: ScanResult, gate: GateResult) -> str:
    s = result.summary
    lines = [f"breakscan: {name} failed its graph-break gate: "
             + "; ".join(f"{c.name} {c.actual} > limit {c.limit}" for c in gate.failed()),
             f"graphs {s.graph_count}, root-cause breaks {s.graph_break_count}, "
             f"break records {s.break_records}, frames skipped {s.frames_skipped}"
             + (f"; per call: graph calls {s.graph_calls_per_call:g}, returns to Python "
                f"{s.eager_gaps_per_call:g}" if s.runtime_calls else "")]
    for rank, brk in enumerate(result.breaks, 1):
        fires = f", fires {brk.fires_per_call:g}× per call" \
            if brk.fires_per_call is not None else ""
        lines += [f"  {rank}. {brk.category} ({brk.gb_id or brk.gb_type}) at "
                  f"{brk.file}:{brk.line} in {brk.function}(){fires}",
                  f"       {brk.code}",
                  f"       fix: {brk.suggestion}"]
    return "\n".join(lines)


def assert_max_graph_breaks(model: Any, inputs: Any = (), *, max_breaks: int | None = None,
                            max_graphs: int | None = None, max_graph_calls: int | None = None,
                            fail_on: str | list[str] | None = None, fullgraph: bool = False,
                            train: bool = False, dynamic: bool | None = None,
                            **input_kwargs: Any) -> ScanResult:
    """Scan ``model(*inputs, **input_kwargs)`` and raise GraphBreakError past the limits.

    Only the limits given apply; with none at all, ``max_breaks=0``.
    """
    from .pipeline.scan import scan_callable

    limits = GateOptions.for_test(max_breaks=max_breaks, max_graphs=max_graphs,
                                  max_graph_calls=max_graph_calls,
                                  fail_on=fail_on, fullgraph=fullgraph)
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    result = scan_callable(model, *args, train=train, dynamic=dynamic, **input_kwargs)
    gate = evaluate(result, limits)
    result.gate = gate
    if not gate.passed:
        name = type(model).__name__
        raise GraphBreakError(format_failure(name, result, gate), result)
    return result
