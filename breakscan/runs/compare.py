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


from ..model.result import Comparison, ModelRun
from ..model.jobs import OutputsRequest
from ..model.verdicts import OutputsCheck
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
    outputs = run_isolated(OUTPUTS_JOB, OutputsRequest(a, b, options), target=a, limits=limits,
                           returns=OutputsCheck)
    if outputs.error:
        return Comparison(run_a, run_b, weights_shared=False, outputs=None,
                          note=f"outputs not compared: {outputs.error}"), outputs
    found = outputs.result
    return Comparison(run_a, run_b, weights_shared=found.weights_shared,
                      outputs=found.correctness, note=found.note, ab=found.ab), outputs
