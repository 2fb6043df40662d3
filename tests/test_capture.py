"""Capture and reconciliation facts on live Dynamo, plus the scan's hygiene promises."""

from __future__ import annotations

import hashlib
import logging
import shutil
import textwrap

import torch

from breakscan import scan, scan_callable
from breakscan.frames import owner_of

from conftest import SAMPLES, locate


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
    assert "skip the frame forward()" in gap.reason


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
    result = scan(f"{SAMPLES}/stdlib_call.py:RandomJitter", input_shapes=["8,16"])
    scan(f"{SAMPLES}/item_logging.py:LogInsideForward", input_shapes=["8,16"])
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert any("random" in line for line in result.dynamo_log)  # kept for --verbose
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
