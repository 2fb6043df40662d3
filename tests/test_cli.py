"""The real CLI in a subprocess: the forms users type, its outputs and its exit codes."""

from __future__ import annotations

import json

from breakscan.result import SCHEMA_VERSION

from conftest import FIXTURES, SAMPLES, locate, run_cli

ITEM = "sample_models/item_logging.py:LogInsideForward"


def test_bare_form_prints_the_report():
    proc = run_cli(ITEM, "--input-shape", "8,16")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    _, line = locate("self.last_mean = h.mean().item()", SAMPLES / "item_logging.py")
    assert out.splitlines()[:3] == [
        ITEM, "graphs 2 · root-cause breaks 1 · break records 1 · ops 4 · frames skipped 0",
        "per call: graph calls 2 · returns to Python 1"]
    assert f"sample_models/item_logging.py:{line}" in out
    assert "self.last_mean = h.mean().item()" in out
    assert "GB0124" in out and "fix:" in out
    assert "\x1b[" not in out  # no colour when stdout is not a TTY
    assert proc.stderr == ""  # Dynamo's own warnings stay hidden without --verbose
    assert max(len(row) for row in out.splitlines()) <= 100


def test_json_to_a_file_follows_the_schema(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli("sample_models/nested_break.py:NestedBreak", "--input-shape", "8,16",
                   "--dtype", "float32", "--device", "cpu", "--format", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {dest}" in proc.stdout
    doc = json.loads(dest.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert doc["target"].endswith("nested_break.py:NestedBreak")
    assert doc["inputs"] == [{"name": "x", "shape": [8, 16], "dtype": "float32", "kind": "tensor"}]
    assert doc["summary"] == {"graph_count": 6, "graph_break_count": 1, "break_records": 3,
                              "op_count": 7, "frames_skipped": 0,
                              "recompile_count": 0,
                              # the nested break resumes 3 frames: 3 returns to Python per call
                              "graph_calls_per_call": 6, "eager_gaps_per_call": 3,
                              "frames_run_eagerly_per_call": 0, "runtime_calls": 3}
    assert {k: doc["explain"][k] for k in ("graph_count", "graph_break_count", "op_count")} == {
        "graph_count": 6, "graph_break_count": 5, "op_count": 5}
    (brk,) = doc["breaks"]
    assert brk["fires_per_call"] == 1  # once per call, though it cuts three frames
    for key in ("owner", "category", "gb_id", "gb_type", "file", "line", "code", "function",
                "call_chain", "explanation", "hints", "suggestion"):
        assert key in brk
    assert (brk["category"], brk["gb_id"], brk["owner"]) == ("item", "GB0124", "user")
    assert brk["file"].endswith("nested_helpers.py")
    assert len(doc["graphs"]) == 6 and sum(g["op_count"] for g in doc["graphs"]) == 7
    assert {d["topic"] for d in doc["discrepancies"]} >= {"graph_break_count", "op_count"}
    assert doc["recompiles"] is None  # only with --vary-batch/--shapes


def test_json_to_stdout_is_only_json():
    proc = run_cli("sample_models/print_in_forward.py:PrintInForward", "-s", "8,16",
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the model's print did not leak into the document
    assert "hidden norm" in doc["model_output"]
    assert doc["breaks"][0]["category"] == "print"


def test_quiet_prints_only_the_summary():
    proc = run_cli(ITEM, "-s", "8,16", "--quiet")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        ITEM, "graphs 2 · root-cause breaks 1 · break records 1 · ops 4 · frames skipped 0",
        "per call: graph calls 2 · returns to Python 1"]


def test_python_dash_m_and_scan_subcommand_and_method_option():
    proc = run_cli("scan", f"{FIXTURES}/models/variety.py:Plain", "-s", "2,16",
                   "--method", "infer", "--verbose")
    assert proc.returncode == 0, proc.stderr
    assert "print" in proc.stdout and "infer torch.Size([2, 16])" in proc.stdout


def test_model_error_exit_3_and_debug_shows_the_traceback():
    proc = run_cli(ITEM, "-s", "8,15")
    assert proc.returncode == 3
    (line,) = proc.stderr.strip().splitlines()
    assert "mat1 and mat2 shapes cannot be multiplied" in line and "item_logging.py" in line
    debug = run_cli(ITEM, "-s", "8,15", "--debug")
    assert debug.returncode == 3 and "Traceback" in debug.stderr


def test_version():
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("breakscan ")


def test_html_option_writes_a_self_contained_page(tmp_path):
    dest = tmp_path / "report.html"
    proc = run_cli(ITEM, "-s", "8,16", "--html", str(dest), "-q")
    assert proc.returncode == 0, proc.stderr
    page = dest.read_text()
    assert page.startswith("<!DOCTYPE html>") and "LogInsideForward" in page
    assert 'data-key="graph_count"' in page and "<script" not in page
    assert f"wrote HTML report {dest}" in proc.stderr
    same = run_cli(ITEM, "-s", "8,16", "--format", "html")
    assert same.returncode == 0 and same.stdout.startswith("<!DOCTYPE html>")
