"""Graph-break assertions for test suites (used by the pytest plugin, usable on their own).

    import breakscan
    breakscan.assert_max_graph_breaks(model, (x,), max_breaks=0)

fails with the same facts the CLI reports: category, file:line, source line and the fix. A
model zoo's test module parametrises over ``load_targets()`` and calls ``assert_target``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.result import ModelRun, ScanResult
from ..model.verdicts import GateResult
from ..options import GateOptions
from ..runs.gate import evaluate

if TYPE_CHECKING:
    from ..runs.check import CheckTarget


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
    from ..pipeline.scan import scan_callable

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


def load_targets(config: str | Path = "pyproject.toml") -> list[CheckTarget | ModelRun]:
    """The targets of a config file's [tool.breakscan], for a test module to parametrise over
    (``pytest -n auto`` then spreads them over workers)."""
    from ..config import load_config
    from ..runs.check import config_targets

    return config_targets(load_config(config), config)


def assert_target(entry: CheckTarget | ModelRun) -> ModelRun:
    """Scan and gate one target like ``breakscan check``; an AssertionError that reads like the
    CLI when it fails its gate, cannot be scanned, or its config entry is wrong."""
    from ..runs.check import check_target

    run = entry if isinstance(entry, ModelRun) else check_target(entry)
    if run.error is not None:
        raise AssertionError(f"breakscan: {run.target}: {run.error}")
    gate = run.result.gate if run.result is not None else None
    if gate is not None and not gate.passed:
        raise GraphBreakError(format_failure(run.target, run.result, gate), run.result)
    return run
