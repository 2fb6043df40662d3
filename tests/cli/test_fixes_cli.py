"""--fix: every proposed fix is applied in a fresh process and proven, or reported unproven.

Uses the eager backend (the verification logic is the same with inductor; timings are only
reported, never asserted).
"""

from __future__ import annotations

import hashlib
import json
import shutil

from conftest import GAINED, FIXTURES, QUICK, SAMPLES, locate, run_cli, on_torch

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
    assert fix["status"] in GAINED and fix["outputs_match"]
    assert fix["reason"] is None if fix["status"] == "verified" else fix["reason"].startswith(
        "removes the break · ")
    assert (fix["before"]["graph_count"], fix["before"]["breaks"]) == (2, 1)
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)
    # both latencies from the same-process A/B, never one from each process
    ab = fix["ab"]
    assert fix["before"]["compiled_s"] == ab["original"]["value"]
    assert fix["after"]["compiled_s"] == ab["fixed"]["value"] and fix["after"]["speedup"] is None
    _, line = locate('print("hidden norm", h.norm())', model)
    assert fix["line"] == line
    assert "+        if not torch.compiler.is_compiling():" in fix["diff"]
    assert fix["written"] is False
    assert _digest(model) == before  # no --write: untouched


def test_a_verified_fix_is_timed_against_the_original_in_one_process():
    """The headline pair: --fix reports same-process medians, intervals, ratio and verdict."""
    model = f"{SAMPLES}/per_layer_branch.py:PerLayerBranch"
    proc = run_cli(model, "-s", "8,16", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    fix = _by_id(doc["fixes"], "torch_where")
    assert fix["status"] in GAINED and fix["outputs_match"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (3, 1)
    assert (fix["before"]["graph_calls_per_call"], fix["after"]["graph_calls_per_call"]) == (48, 1)
    ab = fix["ab"]
    for side in ("original", "fixed"):
        assert ab[side]["low"] <= ab[side]["value"] <= ab[side]["high"]
    assert ab["blocks"] >= 10 and ab["calls_per_block"] >= 1 and ab["threads"] == 1
    assert ab["backend"] == "eager"  # --backend applies
    if ab["speedup"] is None:  # a side's blocks spread beyond their median (a loaded machine)
        assert ab["verdict"] == "not measured" and ab["unmeasured"]
        return
    assert ab["speedup"]["low"] <= ab["speedup"]["value"] <= ab["speedup"]["high"]
    assert abs(ab["speedup"]["value"] - ab["original"]["value"] / ab["fixed"]["value"]) < 1e-9
    expected = ("faster" if ab["speedup"]["low"] > 1 else "slower" if ab["speedup"]["high"] < 1
                else "no measurable difference")
    assert ab["verdict"] == expected  # the verdict follows its own interval
    # Its terminal report: tests/unit/test_kernel_and_fix_reports.py (a recorded --fix).


def test_dynamic_true_verifies_for_a_shape_branch_recompile():
    fix = _by_id(_fixes(f"{SAMPLES}/shape_branch.py:ShapeBranch", "--vary-batch", "2,4,16"),
                 "dynamic")
    assert fix["status"] in GAINED and fix["setting"] == "torch.compile(model, dynamic=True)"
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


def test_torch_where_verifies_and_write_rewrites_the_file_keeps_a_backup_and_the_break_is_gone(
        tmp_path):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    original = model.read_text()
    report = tmp_path / "fix.json"
    proc = run_cli(f"{model}:TensorIf", "-s", "8,16", "--fix", "--write", *FAST, "-f", "json",
                   "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    fix = _by_id(json.loads(report.read_text())["fixes"], "torch_where")
    assert fix["status"] in GAINED and fix["outputs_match"] and fix["max_abs_error"] == 0.0
    assert (fix["after"]["graph_count"], fix["after"]["breaks"]) == (1, 0)
    assert "+        h = torch.where(h.sum() > 0, h * 2, h - 1)" in fix["diff"]
    if fix["status"] == "slower":  # the same-process timing's verdict (seen on torch 2.15,
        # eager backend: torch.where computes both sides): a slower fix is never written
        assert fix["written"] is False and model.read_text() == original
        assert not (tmp_path / "tensor_branch.py.breakscan.bak").exists()
        return
    assert fix["written"] is True
    assert f"breakscan: rewrote {model} (backup beside it: .breakscan.bak)" in proc.stderr
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
    assert (guard["rule"], guard["category"]) == ("BS003", "item") and guard["status"] in GAINED
    assert (guard["after"]["graph_count"], guard["after"]["breaks"]) == (1, 0)
    assert (guard["before"]["eager_gaps_per_call"], guard["after"]["eager_gaps_per_call"]) == \
        (2, 0)  # the line returned to Python twice per call: at the .item() and at the print
    # The setting alone keeps both graphs (the print still breaks) but takes the .item() into
    # the graph: one return to Python per call instead of two. Reported with its numbers.
    setting = _by_id(fixes, "capture_scalar_outputs")
    assert (setting["kind"], setting["setting"]) == (
        "setting", "torch._dynamo.config.capture_scalar_outputs = True")
    assert setting["status"] in GAINED
    assert (setting["before"]["graph_count"], setting["after"]["graph_count"]) == (2, 2)
    assert (setting["before"]["eager_gaps_per_call"],
            setting["after"]["eager_gaps_per_call"]) == (2, 1)
    # An .item() whose value is kept (not only logged) gets no source rewrite: what is planned
    # (in this process; the verification of that setting is tested above).
    from breakscan import scan
    from breakscan.fixes.plan import plan_fixes

    target = f"{SAMPLES}/item_logging.py:LogInsideForward"
    kept = plan_fixes(target, scan(target, input_shapes=["8,16"]))
    assert [p.fix.fix_id for p in kept] == ["capture_scalar_outputs"]


# -- fixes from Dynamo's hints, and at the user's call into a library (fixtures/models/real_code.py)

RC = FIXTURES / "models" / "real_code.py"


def _line(text: str, file=RC) -> int:
    return locate(text, file)[1]


def test_a_setting_a_hint_names_in_other_words_is_tried_and_verified():
    # "Change `torch._dynamo.config.trace_autograd_ops` to `True`"; the break's title shows the
    # value in force (`trace_autograd_ops=False`), which is never tried
    proc = run_cli(f"{RC}:GradPenalty", "-s", "4,16", "--train", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (brk,) = doc["breaks"]
    grad = _line("(g,) = torch.autograd.grad(y, self.fc.weight, create_graph=True)")
    assert (brk["gb_id"], brk["line"]) == ("GB9186", grad)
    settings = [f["setting"] for f in doc["fixes"] if f["kind"] == "setting"]
    assert settings == ["torch._dynamo.config.trace_autograd_ops = True"]
    (fix,) = doc["fixes"]
    assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
    # 2.15 cannot resume after it: the whole forward is skipped (0 graphs, a frame run eagerly)
    before = (0, 1.0) if on_torch("2.15+") else (2, 0.0)
    assert (fix["before"]["graph_count"], fix["before"]["frames_run_eagerly_per_call"]) == before
    assert (fix["after"]["graph_count"], fix["after"]["frames_run_eagerly_per_call"]) == (1, 0.0)


def test_a_setting_named_by_dynamos_hint_is_tried_and_verified():
    proc = run_cli(f"{RC}:LSTMTagger", "-s", "2,5,16", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (fix,) = [f for f in doc["fixes"] if f["fix_id"] == "allow_rnn"]
    assert fix["setting"] == "torch._dynamo.config.allow_rnn = True"
    assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
    assert (fix["before"]["breaks"], fix["after"]["breaks"], fix["after"]["graph_count"]) == \
        (1, 0, 1)
    assert (fix["before"]["eager_gaps_per_call"], fix["after"]["eager_gaps_per_call"]) == (1, 0)
    brk = doc["breaks"][0]
    if on_torch("2.15+"):
        # 2.15 resumes after the LSTM (GB0148, the setting named in its explanation): 2 graphs
        assert (brk["skip_kind"], brk["fires_per_call"]) == (None, 1)
        assert fix["before"]["graph_count"] == 2
        return
    # one graph either way: the gain is the return to Python (the rest of forward ran eagerly
    # after the LSTM break, which has no resume function) that the setting removes
    assert (brk["skip_kind"], brk["fires_per_call"]) == ("rest_of_frame", 1)


def test_a_library_break_gets_fixes_at_the_users_call_each_verified():
    proc = run_cli(f"{RC}:LibraryLoop", "-s", "4,16", "--fix", *FAST, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    fixes = {f["fix_id"]: f for f in json.loads(proc.stdout)["fixes"]}
    line = _line("x = self.scheduler.step(out, t, x)")
    tolist = fixes["tolist_loop"]
    assert tolist["status"] in GAINED and tolist["outputs_match"]
    assert tolist["after"]["graph_count"] < tolist["before"]["graph_count"]
    assert "+        for t in self.scheduler.timesteps.tolist():" in tolist["diff"]
    # the `.tolist()` breaks once before the loop: the report says the remaining break is it
    assert "the break that remains is the rewritten line's own `.tolist()`" in tolist["reason"]
    disable = fixes["disable_call"]
    assert (disable["file"], disable["line"], disable["call"]) == (str(RC), line, "step")
    assert "torch.compiler.disable(self.scheduler.step)(out, t, x)" in disable["diff"]
    assert disable["status"] in GAINED or disable["reason"]  # proven either way, never assumed


def test_no_fix_proposed_says_why():
    """nn.Parameter(...) built in forward: no rewrite or setting applies (a break in a `with`
    block, the old case here, now gets disable_region)."""
    proc = run_cli(f"{SAMPLES}/family_nn_module.py:ParameterInForward", "-s", "8,16", "--fix",
                   *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "no fix proposed for #1 (nn_module at" in proc.stdout


def test_a_fix_in_train_mode_with_dropout_is_verified_from_the_same_random_state():
    """Inductor draws its own random numbers: before, every fix of a train-mode model with
    dropout was 'changes outputs' (compiled vs eager 1.69 apart). Each compared call now starts
    from one seed and Inductor draws eager's (fallback_random), and the report says so."""
    model = f"{SAMPLES}/dropout_branch.py:DropoutBranch"
    proc = run_cli(model, "-s", "8,16", "--train", "--fix", "--max-run-time", "0.1",
                   "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["training"] is True
    timings = doc["timings"]
    assert timings["backend"] == "inductor" and timings["random_comparable"] is True
    assert timings["correctness"]["match"] and timings["correctness"]["scaled_error"] < 1e-5
    fix = _by_id(doc["fixes"], "torch_where")
    assert fix["random"] is True and fix["outputs_match"] is True
    assert fix["status"] in GAINED, fix["reason"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
    assert fix["baseline_error"] is not None and fix["baseline_error"] < 1e-5


SWITCHES = FIXTURES / "models" / "switch_cases.py"


def test_a_scan_without_fix_names_the_switches_as_untried_candidates():
    proc = run_cli(f"{SWITCHES}:SchedulerLoop", "-s", "4,16", "--backend", "eager")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "Switches on the breaks' paths (not tried: --fix verifies each in a fresh process)" \
        in text
    assert "switch:set_begin_index(0)" in text and "Scheduler.set_begin_index(0)" in text
    assert "VERIFIED" not in text and "Fixes (each verified" not in text


