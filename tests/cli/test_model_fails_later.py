"""The model's failure is the model's, in whatever stage it comes: exit 3 and one line naming the
model's line, never exit 4 ("internal error in breakscan"), which is for breakscan's own bugs.

Each model in tests/fixtures/models/fails_later.py passes the capture and fails later: in the
eager timing runs of ``--time`` (a train-mode layer-drop path that leaves ``hidden = None``), in
the compiled timing runs (with ``--kernels``: Inductor's timed compile is the inspected one),
with a ``--vary-batch`` input set, in a ``--fix`` verification, on one of the capture's later or
counted calls only, or in ``compare``'s outputs child. One CLI run per stage; which exception
counts as whose is in tests/unit/test_model_failures.py.
"""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, QUICK, locate, run_cli, shown

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
        f"'input' (position 1) must be Tensor, not NoneType at {shown(F)}:{line}; call 1 with the "
        "same inputs succeeded")
    doc = json.loads(dest.read_text())  # what finished is kept, marked partial
    assert (doc["partial"], doc["stopped_at"]) == (True, "timing (eager)")
    assert doc["training"] and doc["summary"]["graph_count"] == 1


def test_a_failure_in_the_compiled_timing_with_kernels_is_exit_3():
    proc = run_cli(f"{F}:FailsOnLaterCompiledCalls", "-s", "3,4", "--time", "--kernels",
                   "--max-run-time", "0.1")
    _, line = locate('raise RuntimeError(f"compiled call {_CALLS[id(model), \'compiled\']}: '
                     'the cache is "', F)
    assert _one_line_error(proc) == (
        "breakscan: error: timing the compiled model (inductor) failed: RuntimeError: compiled "
        f"call 10: the cache is full at {shown(F)}:{line}; call 1 with the same inputs succeeded")
    assert "PARTIAL REPORT: the scan stopped during timing (compiled)" in proc.stdout


def test_a_failure_with_another_batch_size_is_exit_3():
    proc = run_cli(f"{F}:FailsOnOtherBatch", "-s", "8,4", "--vary-batch", "8,16")
    _, line = locate('raise ValueError(f"batch {x.shape[0]}: this model was built for a batch '
                     'of 8")', F)
    assert _one_line_error(proc) == (
        "breakscan: error: compiled call with input shapes [[16, 4]] failed: ValueError: batch "
        f"16: this model was built for a batch of 8 at {shown(F)}:{line}")


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


@pytest.mark.parametrize("fails_on, call, stage", [
    (3, "the compiled model's later call (call 2)", "later call"),
    (5, "the compiled model's counted call 2 of 3 (call 4)", "run-time counts"),
])
def test_a_model_failing_on_one_later_call_is_exit_3_not_breakscans_counter(
        tmp_path, fails_on, call, stage):
    """The model fails on its 3rd call (the capture's later call) or its 5th (the second of
    the counted calls) only; calling it again would run. Whose failure it is comes from where
    it was raised, the model's line: exit 3, never "breakscan's counter failed" and exit 0."""
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{F}:FailsOnOneLaterCall", "-s", "3,4", "--init-args",
                   json.dumps({"fails_on": fails_on}), "-f", "json", "-o", str(dest))
    _, line = locate('raise RuntimeError(f"call {_CALLS[id(model)]}: the ring buffer wrapped '
                     'around")',
                     F)
    assert _one_line_error(proc) == (
        f"breakscan: error: {call} failed: RuntimeError: call {fails_on}: the ring buffer "
        f"wrapped around at {shown(F)}:{line}; call 1 with the same inputs succeeded")
    doc = json.loads(dest.read_text())
    assert (doc["partial"], doc["stopped_at"]) == (True, stage)
    assert not [n for n in doc["notes"] if "counter failed" in n]
    assert doc["compile_error"] is None  # the model's code failed, not torch.compile


def test_compare_ends_with_exit_3_when_a_model_raises_comparing_outputs(tmp_path):
    """Each scan passes; the outputs child gives B A's weights (a version-1 checkpoint) and B's
    eager call raises on its own line: the comparison is written, then that one line, exit 3."""
    dest = tmp_path / "compare.json"
    proc = run_cli("compare", f"{F}:CheckpointV1", f"{F}:CheckpointV2", "-s", "3,4", *QUICK,
                   "-f", "json", "-o", str(dest))
    _, line = locate('raise ValueError(f"checkpoint version {int(version)}: this model reads '
                     'version 2")', F)
    error = (f"B's eager call failed: ValueError: checkpoint version 1: this model reads "
             f"version 2 at {shown(F)}:{line}")
    assert _one_line_error(proc) == f"breakscan: error: {error}"
    doc = json.loads(dest.read_text())
    assert doc["note"] == f"outputs not compared: {error}"
    assert (doc["a"]["exit_code"], doc["b"]["exit_code"], doc["outputs"]) == (0, 0, None)


def test_torch_compile_failing_on_a_later_call_stays_a_compile_error(tmp_path):
    """Raised while compiling (the later call recompiles and Dynamo's fake tensors reject the
    indexing) is torch.compile failing on the model: the report's compile_error at the model's
    line (exit 3, every gate fails), the scan complete, no one-line error of a failed call."""
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{F}:CompilesFirstCallsOnly", "-s", "3,4", "-f", "json", "-o", str(dest))
    assert proc.returncode == 3, proc.stderr
    assert "error:" not in proc.stderr and "internal error" not in proc.stdout
    doc = json.loads(dest.read_text())
    _, line = locate("keep[rows, cols] = False", F)
    assert not doc["partial"]
    assert (doc["compile_error"]["file"], doc["compile_error"]["line"],
            doc["compile_error"]["exception"]) == (str(F), line, "TorchRuntimeError")
