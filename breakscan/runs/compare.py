"""``breakscan compare A B``: a model and its rewritten twin, side by side.

Both targets are scanned and timed in their own child processes with the same options; a third
child loads both, gives B the weights of A (when their parameters have the same names and
shapes) and compares their eager outputs on the same inputs, so "same outputs" is measured, not
assumed. That child also times both compiled models in one process, interleaved
(``interleaved.time_interleaved``): the only A-vs-B speed comparison the report states. A model
that raises in that child ends ``compare`` as in a scan: exit 3, one line naming its line
(``compare_runs`` returns the child's run beside the comparison).
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import running_model
from ..model.result import Comparison, ModelRun
from ..model.verdicts import ABTiming, Correctness
from ..options import Limits, ScanOptions
from ..process.jobs import OUTPUTS_JOB


def compare_targets(a: str, b: str, options: ScanOptions, limits: Limits = Limits()) -> Comparison:
    """Scan A, then B (unless A was interrupted), then compare their outputs in a third child."""
    return compare_runs(a, b, options, limits)[0]


def compare_runs(a: str, b: str, options: ScanOptions, limits: Limits = Limits()
                 ) -> tuple[Comparison, ModelRun | None]:
    """:func:`compare_targets` and the outputs child's own run (None when it did not run): a
    model that raised there (exit 3, one line naming its line) or breakscan's bug there (exit 4)
    ends ``compare`` with that run's error, as a failed scan does."""
    from ..process.isolate import run_isolated
    from .runner import run_model

    run_a = run_model(a, options, None, limits)
    run_b = ModelRun(target=b, result=None, error=run_a.error, exit_code=run_a.exit_code,
                     stage=None) if run_a.interrupted else run_model(b, options, None, limits)
    if run_a.error or run_b.error:
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note="outputs not compared: a scan did not finish"), None
    outputs = run_isolated(OUTPUTS_JOB, {"a": a, "b": b, "options": options.to_dict()},
                           target=a, limits=limits, returns=list)
    if outputs.error:
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note=f"outputs not compared: {outputs.error}"), outputs
    found = outputs.result
    if len(found) != 4 or not isinstance(found[0], bool) or not isinstance(
            found[1], (Correctness, type(None))) or not isinstance(found[3], (ABTiming, type(None))):
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note="outputs not compared: the check returned no result"), outputs
    shared, correctness, note, ab = found
    return Comparison(run_a, run_b, weights_shared=shared, outputs=correctness, note=note,
                      ab=ab), outputs


def outputs_of_both(request: dict[str, Any], on_stage: Callable[[str, Any], None],
                    on_progress: Any = None
                    ) -> tuple[bool, Correctness | None, str | None, ABTiming | None]:
    """The isolated child's job: (B got A's weights, B's outputs vs A's, why not compared, both
    compiled and timed here, interleaved)."""
    from ..pipeline.interleaved import Variant, time_interleaved
    from ..pipeline.load import REDEFINED_DIFFERENTLY, load_target
    from ..pipeline.outputs import compare_outputs, eager_outputs

    options = ScanOptions.from_dict(request["options"])
    load = options.load_options
    on_stage("load", None)
    first = load_target(request["a"], **load)
    mark = len(REDEFINED_DIFFERENTLY)
    second = load_target(request["b"], **load)
    one_op = sorted(set(REDEFINED_DIFFERENTLY[mark:]))  # B's definitions replaced A's
    second.args, second.kwargs = first.args, first.kwargs
    shared = True
    try:
        second.model.load_state_dict(first.model.state_dict())
    except (RuntimeError, KeyError):
        shared = False  # different parameters: compare anyway, both built from the same seed
    on_stage("eager run", None)
    with running_model("A's eager call"):
        expected = eager_outputs(first)
    with running_model("B's eager call"):
        actual = eager_outputs(second)
    correctness = compare_outputs(expected, actual)
    note = None if shared else "parameters differ (names or shapes): B kept its own weights"
    if one_op:  # torch keeps one definition per operator name in a process
        note = "; ".join(filter(None, [note, (
            f"A and B define custom op {', '.join(one_op)} with different code; one process "
            "holds one definition per name, so A ran B's: the outputs compare the rest of "
            "the models")]))
    ab = None
    if options.timing is not None:
        t = options.timing
        with running_model("timing A and B side by side"):
            ab, _, why = time_interleaved(
                Variant(first.fn, first.args, first.kwargs, dynamic=options.dynamic),
                Variant(second.fn, second.args, second.kwargs, dynamic=options.dynamic),
                device=first.device, training=first.training, backend=t.backend, mode=t.mode,
                threads=t.threads, max_run_time=t.max_run_time,
                compile_options=dict(options.compile_options),
                on_stage=lambda name: on_stage(name, None), on_progress=on_progress)
        if why:
            note = "; ".join(filter(None, [note, f"not timed side by side: {why}"]))
    return shared, correctness, note, ab
