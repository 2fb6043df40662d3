"""`breakscan trace`: TORCH_TRACE files read into the scan's analysis, per rank and across ranks,
through the real CLI (the reader itself: tests/unit/test_trace_reader.py).

A recorded trace fixture (tests/fixtures/traces/step, from tests/fixtures/programs/trace_step.py)
checks the report. A real `torchrun --nproc_per_node 2` job (gloo, CPU) whose rank 1 has a
smaller last batch checks the report across ranks. Traces are untrusted files: what is not a
regular file, has no records or names a non-Python file never hangs, passes or leaks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from breakscan.trace.reader import read_rank

from conftest import FIXTURES, locate, run_cli

STEP = FIXTURES / "traces" / "step"
STEP_FILE = STEP / "dedicated_log_torch_trace_rank_0_recorded.log"
PROGRAMS = FIXTURES / "programs"
RECORDED = next((FIXTURES / "traces").glob("*/*.log"))


def test_a_trace_cut_short_is_read_up_to_the_cut(tmp_path):
    """A killed job leaves its last line half-written: that record is dropped and counted."""
    text = STEP_FILE.read_text()
    lines = text.splitlines(keepends=True)
    last_envelope = max(i for i, line in enumerate(lines) if not line.startswith("\t"))
    cut = "".join(lines[:last_envelope]) + lines[last_envelope][:40]
    copy = tmp_path / STEP_FILE.name
    copy.write_text(cut)
    trace = read_rank(copy)
    assert trace.truncated == 1
    assert trace.records == 63
    proc = run_cli("trace", str(tmp_path), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert any("cut short" in note for note in json.loads(proc.stdout)["notes"])


def test_the_report_of_a_recorded_trace():
    proc = run_cli("trace", str(STEP), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    program = PROGRAMS / "trace_step.py"
    (brk,) = report["breaks"]
    assert (brk["category"], brk["line"], brk["ranks"]) == (
        "print", locate('print("step")  # the break', program)[1], [0])
    assert report["summary"]["graph_count"] == 4
    assert [r["reasons"] for r in report["recompiles"]["recompiles"]] == [
        ["tensor 'x' size mismatch at index 0. expected 8, actual 4"],
        ["tensor 'y' size mismatch at index 0. expected 8, actual 4"]]
    assert [r["rank"] for r in report["ranks"]] == [0] and report["schema_version"] == "1.25"


def test_bad_trace_folders_are_one_line_errors(tmp_path):
    missing = run_cli("trace", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"breakscan: error: {tmp_path / 'nope'}: no such file or folder"
    empty = run_cli("trace", str(tmp_path))
    assert empty.returncode == 2
    assert empty.stderr.strip() == (f"breakscan: error: {tmp_path} holds no trace file (*.log): "
                                    "run the job with TORCH_TRACE=<folder> first")


def test_a_torchrun_job_reports_each_rank_and_what_differs(tmp_path):
    """2 ranks (gloo, CPU) under torchrun: the print breaks on both; only rank 1, whose last
    batch is smaller, recompiles; the gate and the GitHub format work on the trace."""
    traces = tmp_path / "traces"
    program = tmp_path / "ddp_trace.py"
    shutil.copy(PROGRAMS / "ddp_trace.py", program)
    env = dict(os.environ, TORCH_TRACE=str(traces), OMP_NUM_THREADS="1")
    job = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc_per_node", "2", str(program)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert job.returncode == 0, job.stderr[-3000:]
    assert len(list(traces.glob("dedicated_log_torch_trace_rank_*.log"))) == 2
    proc = run_cli("trace", str(traces), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    line = locate('print("hidden", h.shape)  # a graph break on every rank', program)[1]
    printed = [b for b in report["breaks"] if b["line"] == line]
    assert printed and printed[0]["ranks"] == [0, 1] and printed[0]["category"] == "print"
    recompiles = report["recompiles"]["recompiles"]
    assert recompiles and {r["rank"] for r in recompiles} == {1}
    assert any(r["reasons"] == ["tensor 'x' size mismatch at index 0. expected 8, actual 4"]
               for r in recompiles)
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    assert report["ranks"][0]["recompiles"] == 0 and report["ranks"][1]["recompiles"] > 0
    assert any(d.startswith("recompiles differ: rank 0: 0, rank 1: ")
               for d in report["rank_differences"])
    gated = run_cli("trace", str(traces), "--max-recompiles", "0", "-f", "github",
                    "--html", str(tmp_path / "trace.html"))
    assert gated.returncode == 1
    assert "::error" in gated.stdout and "max_recompiles" in gated.stdout
    page = (tmp_path / "trace.html").read_text()
    assert "<h3>Ranks</h3>" in page and "differs between ranks: recompiles differ" in page


# -- traces are untrusted files ----------------------------------------------------------------

def test_a_trace_folder_reads_regular_files_only(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    os.mkfifo(folder / "rank_1_fifo.log")  # would hang a reader
    (folder / "rank_2_zero.log").symlink_to("/dev/zero")  # would grow without end
    (folder / "rank_3_dir.log").mkdir()
    (folder / "rank_4_broken.log").symlink_to(tmp_path / "missing")
    proc = run_cli("trace", str(folder), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"breakscan: error: {folder} holds no trace file (*.log) (skipped: rank_1_fifo.log (a "
        "FIFO), rank_2_zero.log (a device), rank_3_dir.log (a directory), rank_4_broken.log "
        "(a broken link)): run the job with TORCH_TRACE=<folder> first")
    shutil.copy(RECORDED, folder / "rank_0.log")
    proc = run_cli("trace", str(folder), "-f", "json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    notes = json.loads(proc.stdout)["notes"]
    assert "skipped (not regular files): rank_1_fifo.log (a FIFO), rank_2_zero.log (a device), " \
        "rank_3_dir.log (a directory), rank_4_broken.log (a broken link)" in notes


@pytest.mark.parametrize("text", ["", "not a trace\n", "\n\n"])
def test_a_trace_with_no_records_is_a_usage_error_not_a_pass(tmp_path, text):
    (tmp_path / "rank_0.log").write_text(text)
    proc = run_cli("trace", str(tmp_path), "--max-breaks", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"breakscan: error: no TORCH_TRACE records in {tmp_path}"


def test_a_trace_shows_source_only_of_python_files_under_the_source_root(tmp_path):
    from breakscan.frames import source_allowed, source_line, sources_within

    secret = tmp_path / "credentials"
    secret.write_text("token = hunter2\n" * 200)
    os.mkfifo(tmp_path / "pipe.py")
    code = tmp_path / "model.py"
    code.write_text("x = 1\n")
    with sources_within([str(tmp_path)]):
        assert source_line(str(secret), 1) == ""  # not a Python file
        assert not source_allowed(str(tmp_path / "pipe.py"))  # never opened: no hang
        assert source_line(str(code), 1) == "x = 1\n"
    with sources_within([str(tmp_path / "elsewhere")]):
        assert source_line(str(code), 1) == ""  # outside the root
    # A recorded trace whose break names a non-Python file: its lines never reach the report.
    trace = tmp_path / "rank_0.log"
    text = RECORDED.read_text()
    (break_file,) = {part.split('"')[0] for part in text.split('File "')[1:]
                     if part.split('"')[0].endswith("trace_step.py")}
    trace.write_text(text.replace(break_file, str(secret)))
    for fmt in ("terminal", "html"):
        proc = run_cli("trace", str(trace), "--source-root", str(tmp_path), "-f", fmt,
                       env={"COLUMNS": "200"})
        assert proc.returncode == 0, proc.stderr
        assert "hunter2" not in proc.stdout


def test_a_report_into_a_pipe_through_dev_stdout():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m breakscan trace {RECORDED} -f json -o "
                          "/dev/stdout | cat", shell=True, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "cannot write" not in proc.stderr
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout)  # then the summary lines
    assert doc["schema_version"] and "wrote /dev/stdout" in proc.stdout

