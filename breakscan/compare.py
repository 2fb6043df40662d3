"""``breakscan compare A B``: a model and its rewritten twin, side by side.

Both targets are scanned and timed in their own child processes with the same options; a third
child loads both, gives B the weights of A (when their parameters have the same names and
shapes) and compares their eager outputs on the same inputs, so "same outputs" is measured, not
assumed.
"""

from __future__ import annotations

from typing import Any

from .result import Comparison, Correctness, ModelRun


def compare_targets(a: str, b: str, scan_kwargs: dict[str, Any], *, timeout: float | None,
                    memory_limit_mb: int | None = None) -> Comparison:
    from .check import run_model
    from .isolate import run_isolated

    run_a = run_model(a, scan_kwargs, None, timeout=timeout, memory_limit_mb=memory_limit_mb)
    run_b = ModelRun(target=b, result=None, error=run_a.error, exit_code=run_a.exit_code,
                     stage=None) if run_a.interrupted else \
        run_model(b, scan_kwargs, None, timeout=timeout, memory_limit_mb=memory_limit_mb)
    if run_a.error or run_b.error:
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note="outputs not compared: a scan did not finish")
    outputs = run_isolated(a, scan_kwargs, timeout=timeout, memory_limit_mb=memory_limit_mb,
                           compare_with=b)
    if outputs.error:
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note=f"outputs not compared: {outputs.error}")
    shared, correctness, note = outputs.result
    return Comparison(run_a, run_b, weights_shared=shared, outputs=correctness, note=note)


def outputs_of_both(a: str, b: str, scan_kwargs: dict[str, Any],
                    on_stage: Any) -> tuple[bool, Correctness | None, str | None]:
    """In the child: (B got A's weights, B's outputs vs A's, why not compared)."""
    from .load import load_target
    from .measure import compare_outputs, eager_outputs

    kwargs = {k: v for k, v in scan_kwargs.items()
              if k not in ("timing", "vary_batch", "shapes", "verbose", "dynamic_check")}
    on_stage("load", None)
    first = load_target(a, **kwargs)
    second = load_target(b, **kwargs)
    second.args, second.kwargs = first.args, first.kwargs
    shared = True
    try:
        second.model.load_state_dict(first.model.state_dict())
    except (RuntimeError, KeyError):
        shared = False  # different parameters: compare anyway, both built from the same seed
    on_stage("eager run", None)
    correctness = compare_outputs(eager_outputs(first), eager_outputs(second))
    note = None if shared else "parameters differ (names or shapes): B kept its own weights"
    return shared, correctness, note
