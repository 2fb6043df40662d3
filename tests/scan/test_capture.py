"""Capture and reconciliation facts on live Dynamo, plus the scan's hygiene promises."""

from __future__ import annotations

import hashlib
import logging
import shutil
import textwrap

import pytest
import torch

from breakscan import scan, scan_callable
from breakscan.frames import owner_of

from conftest import FIXTURES, SAMPLES, TORCH_RELEASE, locate, on_torch


def test_nested_break_is_one_root_cause_with_its_call_chain():
    result = scan(f"{SAMPLES}/nested_break.py:NestedBreak", input_shapes=["8,16"])
    (brk,) = result.breaks
    helper_file, helper_line = locate("peak = h.abs().max().item()",
                                      SAMPLES / "nested_helpers.py")
    assert (brk.file, brk.line) == (str(helper_file), helper_line)
    assert brk.function == "normalise_and_log"
    # forward (NestedBreak) -> forward (Block) -> normalise_and_log
    chain = [(f.function, f.code) for f in brk.call_chain]
    assert chain == [("forward", "h = self.block(h)"),
                     ("forward", "h = normalise(h) if self.fixed else normalise_and_log(h)"),
                     ("normalise_and_log", "peak = h.abs().max().item()")]
    # each enclosing frame got a resume function at its call site, tied to this break
    assert sorted(brk.resume_functions) == sorted([
        f"torch_dynamo_resume_in_normalise_and_log_at_{helper_line}",
        f"torch_dynamo_resume_in_forward_at_{chain_line(brk, 0)}",
        f"torch_dynamo_resume_in_forward_at_{chain_line(brk, 1)}"])
    assert all(f.break_index == 0 for f in result.frames if f.is_resume)
    # explain disagrees (5 breaks) and breakscan says why, with both numbers
    gap = next(d for d in result.discrepancies if d.topic == "graph_break_count")
    assert (gap.explain, gap.breakscan) == (5, 1)
    assert "cuts 3 frames" in gap.reason


def chain_line(brk, index: int) -> int:
    return brk.call_chain[index].line


def test_skipped_frame_is_reported_from_logs_and_metrics():
    result = scan(f"{SAMPLES}/loop_break.py:PrintInLoop", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.frame_skipped and brk.wrapper_gb_id == "GB7000"
    assert set(brk.sources) >= {"log", "metrics"}
    (frame,) = [f for f in result.frames if f.skipped]
    assert frame.name == "forward" and frame.fail_line == brk.line
    assert result.explain.graph_count == 0 and result.explain.graph_break_count == -1
    gap = next(d for d in result.discrepancies if d.topic == "graph_break_count")
    assert "made Dynamo skip the whole function forward() (it ran eagerly)" in gap.reason


def test_leading_break_invisible_to_explain_is_found():
    result = scan(f"{SAMPLES}/print_in_forward.py:LeadingPrint", input_shapes=["8,16"])
    (brk,) = result.breaks
    assert brk.explain_reasons == 0 and brk.sources == ["log"]
    assert result.explain.break_reasons == []
    assert any("invisible to explain" in d.reason for d in result.discrepancies)


def test_graphs_carry_ops_and_source_lines():
    result = scan(f"{SAMPLES}/item_logging.py:LogInsideForward", input_shapes=["8,16"])
    first, second = result.graphs
    _, break_line = locate("self.last_mean = h.mean().item()", SAMPLES / "item_logging.py")
    _, fc2_line = locate("return self.fc2(h)", SAMPLES / "item_logging.py")
    assert first.break_reason.startswith("Unsupported Tensor.item()")
    assert first.ops[:2] == ["linear", "relu"] and ".mean" in first.ops
    assert any(loc.endswith(f"item_logging.py:{break_line}") for loc in first.source_lines)
    assert second.source_lines == [f"{SAMPLES / 'item_logging.py'}:{fc2_line}"]
    assert second.compile_id == "1/0" and second.break_reason is None
    assert [8, 16] in first.input_shapes


def test_break_in_an_installed_package_is_third_party(tmp_path, monkeypatch):
    lib = tmp_path / "site-packages" / "fakelib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(textwrap.dedent("""
        def scale(h):
            return h * float(h.max())
    """))
    model = tmp_path / "proj" / "model.py"
    model.parent.mkdir()
    model.write_text(textwrap.dedent("""
        import torch, fakelib
        class Net(torch.nn.Module):
            def forward(self, x):
                return fakelib.scale(x + 1) - 1
    """))
    monkeypatch.syspath_prepend(str(lib.parent))
    result = scan(f"{model}:Net", input_shapes=["4,4"])
    (brk,) = result.breaks
    assert brk.owner == "third_party" and brk.category == "item"
    assert brk.file == str(lib / "__init__.py") and brk.code == "return h * float(h.max())"
    assert brk.call_chain[0].file == str(model)
    assert owner_of(str(model)) == "user"
    assert owner_of(torch.__file__) == "torch"


def test_scan_callable_on_a_model_in_memory():
    class Net(torch.nn.Module):
        def forward(self, x):
            y = x.cos()
            if y.sum() > 0:
                return y
            return -y

    result = scan_callable(Net(), torch.ones(3))
    assert [b.category for b in result.breaks] == ["data_dependent_branch"]
    assert result.breaks[0].code == "if y.sum() > 0:"


def test_dynamo_noise_stays_off_the_terminal_and_logging_is_restored(capfd):
    dynamo_log = logging.getLogger("torch._dynamo")
    before = (list(dynamo_log.handlers), dynamo_log.propagate, dynamo_log.level)
    # `time.perf_counter()`: Dynamo warns on every compile on 2.13 and 2.14, not once a
    # process (2.15 gives clock reads a break of their own, GB9193, and no warning)
    result = scan(f"{SAMPLES}/stdlib_call.py:TimerInForward", input_shapes=["8,16"])
    scan(f"{SAMPLES}/item_logging.py:LogInsideForward", input_shapes=["8,16"])
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    if TORCH_RELEASE.startswith(("2.13.", "2.14.")):
        assert any("Python builtin" in line for line in result.dynamo_log)  # kept: --verbose
    after = (list(dynamo_log.handlers), dynamo_log.propagate, dynamo_log.level)
    assert after == before


def test_repeated_scans_give_the_same_records():
    # Dynamo de-duplicates break messages per process; breakscan resets that filter.
    first = scan(f"{SAMPLES}/nested_break.py:NestedBreak", input_shapes=["8,16"])
    second = scan(f"{SAMPLES}/nested_break.py:NestedBreak", input_shapes=["8,16"])
    assert first.summary == second.summary


def _tree_digest(folder):
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha256(
        p.read_bytes()).hexdigest()) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_scan_never_writes_into_the_users_folder(tmp_path):
    copy = tmp_path / "models"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _tree_digest(copy)
    scan(f"{copy}/nested_break.py:NestedBreak", input_shapes=["8,16"])
    assert _tree_digest(copy) == before


def test_missing_private_apis_degrade_with_notes(monkeypatch):
    """On a torch without the bytecode hook or compilation metrics the scan still works."""
    monkeypatch.delattr(torch._dynamo.convert_frame, "register_bytecode_hook")
    monkeypatch.delattr(torch._dynamo.utils, "get_compilation_metrics")
    result = scan(f"{SAMPLES}/tensor_branch.py:TensorIf", input_shapes=["8,16"])
    assert [b.category for b in result.breaks] == ["data_dependent_branch"]
    assert result.breaks[0].resume_functions == [] and result.frames == []
    assert any("register_bytecode_hook" in n for n in result.notes)
    assert any("get_compilation_metrics" in n for n in result.notes)


# -- real library code's rules on small models of our own (tests/fixtures/models/real_code.py) ---
# origins, not symptoms; never a root cause in the standard library; the user's line for a break
# inside a library; Dynamo's own cause for falling back to eager. The third-party versions of
# these cases are in tests/slow/test_third_party.py.

RC = FIXTURES / "models" / "real_code.py"
TOYSCHED = FIXTURES / "site-packages" / "toysched" / "__init__.py"


def _scan(name: str, shape: str = "4,16", **kwargs):
    return scan(f"{RC}:{name}", input_shapes=[shape], **kwargs)


def _line(text: str, file=RC) -> int:
    return locate(text, file)[1]


def test_branches_on_one_numpy_value_are_one_root_cause_at_its_origin():
    result = _scan("NumpyOrigin")
    (brk,) = result.breaks
    assert (brk.line, brk.code, brk.category) == (_line("return np.lcm(a, b)"),
                                                  "return np.lcm(a, b)", "data_dependent_branch")
    assert [s.line for s in brk.sites] == [_line("if x.shape[-1] % multiple != 0:"),
                                           _line("if multiple > 8:")]
    assert brk.records == 2 and result.summary.graph_count == 3
    assert "math" in brk.suggestion and "NumPy" in brk.suggestion
    # The lint's finding on that line agrees with the scan.
    (finding,) = [f for f in result.static if f.line == brk.line]
    assert finding.status == "break"
    fixed = _scan("MathOrigin")
    assert (fixed.summary.graph_count, fixed.breaks) == (1, [])


def test_the_standard_library_is_never_the_root_cause():
    result = _scan("StdlibCall")
    (brk,) = result.breaks
    assert (brk.file, brk.line, brk.owner) == (str(RC), _line(
        "width = len(json.dumps(self.settings))"), "user")
    assert any(f.file.endswith("json/encoder.py") for f in brk.call_chain)  # chain kept whole


def test_a_break_inside_a_library_names_the_users_line():
    result = _scan("LibraryLoop")
    (brk,) = result.breaks
    assert (brk.file, brk.owner) == (str(TOYSCHED), "third_party")
    assert brk.code == "scale = self.scale[int(t)]"
    assert (brk.user_frame.file, brk.user_frame.line) == (
        str(RC), _line("x = self.scheduler.step(out, t, x)"))
    assert "real_code.py:" in brk.suggestion and "torch.compiler.disable" in brk.suggestion


@pytest.mark.parametrize("name, kind, words, frames_skipped", [
    ("BreakInTry", "whole_frame", "inside a try block", 1),
    ("BreakInLock", "whole_frame", "could not resume from this break: it skipped", 1),
    ("SkippedFrameLint", "loop", "inside a for/while loop", 1),
    ("LSTMTagger", "rest_of_frame", "ran the rest of the function eagerly", 0),
])
def test_fallback_to_eager_states_dynamos_own_cause(name, kind, words, frames_skipped):
    result = _scan(name, "2,5,16" if name == "LSTMTagger" else "4,16")
    if name == "LSTMTagger" and on_torch("2.15+"):  # 2.15 resumes after the LSTM (GB0148)
        assert [b.skip_kind for b in result.breaks] == [None]
        assert result.summary.graph_count == 2
        return  # rest_of_frame on 2.15: test_statements_45's LoggedScalars
    (brk,) = [b for b in result.breaks if b.skip_kind]
    assert brk.skip_kind == kind and words in brk.skip_cause
    # The summary and the break agree on whether a whole frame ran eagerly.
    assert result.summary.frames_skipped == frames_skipped
    assert brk.frame_skipped == bool(frames_skipped)
    if kind != "loop":
        assert "loop" not in brk.suggestion and "loop" not in brk.skip_cause
