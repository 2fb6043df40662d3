"""The model's failure is the model's, in whatever stage it comes: exit 3 and one line naming the
model's line, never exit 4 ("internal error in breakscan"), which is for breakscan's own bugs.

Each model in tests/fixtures/models/fails_later.py passes the capture and fails later: in the
eager timing runs of ``--time`` (a train-mode layer-drop path that leaves ``hidden = None``), in
the compiled timing runs (with ``--kernels``: Inductor's timed compile is the inspected one),
with a ``--vary-batch`` input set, or in a ``--fix`` verification. One CLI run per stage; which
exception counts as whose is in tests/unit/test_model_failures.py.
"""

from __future__ import annotations

import json

from conftest import FIXTURES, QUICK, locate, run_cli

F = FIXTURES / "models" / "fails_later.py"


def _one_line_error(proc) -> str:
    assert proc.returncode == 3, proc.stderr
    assert "internal error" not in proc.stderr + proc.stdout
    (line,) = proc.stderr.strip().splitlines()  # one line, no traceback
    return line


def test_layer_drop_in_training_fails_the_eager_timing_with_exit_3(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{F}:LayerDropInTraining", "-s", "3,4", "--train", "--time", *QUICK,
                   "-f", "json", "-o", str(dest))
    _, line = locate("hidden = layer(hidden)", F)
    assert _one_line_error(proc) == (
        "breakscan: error: timing the eager model failed: TypeError: linear(): argument "
        f"'input' (position 1) must be Tensor, not NoneType at {F}:{line}")
    doc = json.loads(dest.read_text())  # what finished is kept, marked partial
    assert (doc["partial"], doc["stopped_at"]) == (True, "timing (eager)")
    assert doc["training"] and doc["summary"]["graph_count"] == 1


def test_a_failure_in_the_compiled_timing_with_kernels_is_exit_3():
    proc = run_cli(f"{F}:FailsOnLaterCompiledCalls", "-s", "3,4", "--time", "--kernels",
                   "--max-run-time", "0.1")
    _, line = locate('raise RuntimeError(f"compiled call {model.compiled_calls}: the cache is '
                     'full")', F)
    assert _one_line_error(proc) == (
        "breakscan: error: timing the compiled model (inductor) failed: RuntimeError: compiled "
        f"call 10: the cache is full at {F}:{line}")
    assert "PARTIAL REPORT: the scan stopped during timing (compiled)" in proc.stdout


def test_a_failure_with_another_batch_size_is_exit_3():
    proc = run_cli(f"{F}:FailsOnOtherBatch", "-s", "8,4", "--vary-batch", "8,16")
    _, line = locate('raise ValueError(f"batch {x.shape[0]}: this model was built for a batch '
                     'of 8")', F)
    assert _one_line_error(proc) == (
        "breakscan: error: compiled call with input shapes [[16, 4]] failed: ValueError: batch "
        f"16: this model was built for a batch of 8 at {F}:{line}")


def test_a_fixed_model_that_fails_later_fails_that_fix_only(tmp_path):
    """The rewritten copy fails in its verifying child after the child's scan: the fix says so
    with the model's line, and the scan (the original model's) ends normally."""
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{F}:FailsWhenFixed", "-s", "3,4", "--fix", *QUICK, "-f", "json",
                   "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr + proc.stdout
    (fix,) = json.loads(dest.read_text())["fixes"]
    assert fix["status"] in ("not tried", "not applicable")
    _, line = locate('raise RuntimeError("the rewritten model fails on its second eager call")',
                     F)
    # The line in the rewritten copy (a breakscan-fix-* folder): one lower, under the new guard.
    reason = fix["reason"]
    assert "failed: RuntimeError: the rewritten model fails on its second eager call at " \
        in reason and "/breakscan-fix-" in reason
    assert reason.endswith(f"/{F.name}:{line + 1}")
