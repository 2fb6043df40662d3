"""--fix: every proposed fix is applied in a fresh process and proven, or reported unproven.

Uses the eager backend (the verification logic is the same with inductor; timings are only
reported, never asserted).
"""

from __future__ import annotations

import hashlib
import json
import shutil

from conftest import FIXTURES, QUICK, SAMPLES, locate, run_cli

FAST = QUICK


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fixes(target: str, *args: str) -> list[dict]:
    proc = run_cli(target, "-s", "8,16", "--fix", *FAST, *args, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["fixes"]


def _by_id(fixes: list[dict], fix_id: str) -> dict:
    (fix,) = [f for f in fixes if f["fix_id"] == fix_id]
    return fix


def test_print_guard_verifies_and_leaves_the_users_file_alone():
    model = SAMPLES / "print_in_forward.py"
    before = _digest(model)
    fix = _by_id(_fixes(f"{model}:PrintInForward"), "print_guard")
    assert (fix["rule"], fix["kind"], fix["category"]) == ("BS003", "source", "print")
    assert fix["verified"] and fix["reason"] is None and fix["outputs_match"]
    assert (fix["before"]["graph_count"], fix["before"]["breaks"]) == (2, 1)
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)
    assert fix["after"]["compiled_s"] > 0 and fix["after"]["speedup"] > 0
    _, line = locate('print("hidden norm", h.norm())', model)
    assert fix["line"] == line
    assert "+        if not torch.compiler.is_compiling():" in fix["diff"]
    assert fix["written"] is False
    assert _digest(model) == before  # no --write: untouched


def test_capture_scalar_outputs_verifies_for_item():
    fixes = _fixes(f"{SAMPLES}/item_logging.py:LogInsideForward")
    fix = _by_id(fixes, "capture_scalar_outputs")
    assert (fix["kind"], fix["setting"]) == (
        "setting", "torch._dynamo.config.capture_scalar_outputs = True")
    assert fix["verified"] and (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)


def test_torch_where_verifies_for_a_two_branch_tensor_if():
    fix = _by_id(_fixes(f"{SAMPLES}/tensor_branch.py:TensorIf"), "torch_where")
    assert fix["verified"] and fix["outputs_match"] and fix["max_abs_error"] == 0.0
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)
    assert "+        h = torch.where(h.sum() > 0, h * 2, h - 1)" in fix["diff"]


def test_dynamic_true_verifies_for_a_shape_branch_recompile():
    fix = _by_id(_fixes(f"{SAMPLES}/shape_branch.py:ShapeBranch", "--vary-batch", "2,4,16"),
                 "dynamic")
    assert fix["verified"] and fix["setting"] == "torch.compile(model, dynamic=True)"
    assert fix["after"]["recompiles"] < fix["before"]["recompiles"]


def test_a_branch_with_side_effects_is_refused():
    fix = _by_id(_fixes(f"{FIXTURES}/models/fix_cases.py:BranchWithSideEffect"), "torch_where")
    assert not fix["verified"] and fix["after"] is None
    assert fix["reason"].startswith("refused:") and "self.hits" in fix["reason"]


def test_a_rewrite_that_changes_outputs_is_not_verified():
    fix = _by_id(_fixes(f"{FIXTURES}/models/fix_cases.py:BranchShapesDiffer"), "torch_where")
    assert fix["diff"] and not fix["verified"] and fix["outputs_match"] is False
    assert fix["reason"].startswith("outputs differ from the original model")
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)  # fewer, but wrong


def test_fix_write_rewrites_the_file_keeps_a_backup_and_the_break_is_gone(tmp_path):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    original = model.read_text()
    proc = run_cli(f"{model}:TensorIf", "-s", "8,16", "--fix", "--write", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "written to" in proc.stdout
    backup = tmp_path / "tensor_branch.py.breakscan.bak"
    assert backup.read_text() == original
    assert "torch.where(h.sum() > 0, h * 2, h - 1)" in model.read_text()
    rescan = run_cli(f"{model}:TensorIf", "-s", "8,16", "-q")
    assert "graphs 1 · root-cause breaks 0" in rescan.stdout


def test_write_needs_fix():
    proc = run_cli(f"{SAMPLES}/tensor_branch.py:TensorIf", "-s", "8,16", "--write")
    assert proc.returncode == 2 and "use it with --fix" in proc.stderr


def test_an_item_only_logged_is_guarded_with_its_print():
    fixes = _fixes(f"{FIXTURES}/models/fix_cases.py:ItemOnlyLogged")
    guard = _by_id(fixes, "print_guard")
    # The guard is the print rule's fix (BS003), here removing an .item() break.
    assert (guard["rule"], guard["category"], guard["verified"]) == ("BS003", "item", True)
    assert (guard["after"]["graph_count"], guard["after"]["breaks"]) == (1, 0)
    # The setting alone gains nothing here: the print still breaks. Reported, not hidden.
    setting = _by_id(fixes, "capture_scalar_outputs")
    assert not setting["verified"] and setting["reason"].startswith("no gain: graphs 2 -> 2")
    # An .item() whose value is kept (not only logged) gets no source rewrite: what is planned
    # (in this process; the verification of that setting is tested above).
    from breakscan import scan
    from breakscan.fixes import plan_fixes

    target = f"{SAMPLES}/item_logging.py:LogInsideForward"
    kept = plan_fixes(target, scan(target, input_shapes=["8,16"]))
    assert [p.fix.fix_id for p in kept] == ["capture_scalar_outputs"]
