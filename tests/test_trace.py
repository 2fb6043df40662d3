"""`breakscan trace`: TORCH_TRACE files read into the scan's analysis, per rank and across ranks.

A recorded trace fixture (tests/fixtures/traces/step, from tests/fixtures/programs/trace_step.py)
checks the parser: exact record counts, a record kind it does not know, a file cut short. A real
`torchrun --nproc_per_node 2` job (gloo, CPU) whose rank 1 has a smaller last batch checks the
report across ranks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from breakscan.trace.reader import read_rank, records

from conftest import FIXTURES, locate, run_cli

STEP = FIXTURES / "traces" / "step"
STEP_FILE = STEP / "dedicated_log_torch_trace_rank_0_recorded.log"
PROGRAMS = FIXTURES / "programs"


def test_the_recorded_trace_is_read_exactly():
    trace = read_rank(STEP_FILE)
    assert (trace.rank, trace.records, trace.truncated) == (0, 64, 0)
    assert trace.torch_version == "2.13.0+cpu"
    assert len(trace.graph_break_logs) == 2 and len(trace.metrics) == 4
    assert [g.ops for g in trace.graphs] == [["torch.sin"], [], ["torch.sin"], []]
    assert trace.recompiles == [
        ("0/1", ["0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4"]),
        ("1/1", ["1/0: tensor 'y' size mismatch at index 0. expected 8, actual 4"])]
    assert trace.graph_break_logs[0].startswith("Graph break in user code at ")
    assert "Traceback (most recent call last)" not in trace.graph_break_logs[0]


def test_an_unknown_record_kind_is_counted_not_fatal(tmp_path):
    copy = tmp_path / STEP_FILE.name
    text = STEP_FILE.read_text()
    future = ('V1121 19:54:00.000000 4242 torch/_dynamo/new.py:1] {"future_event": {"x": 1}, '
              '"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "00"}\n'
              '\tsome payload\n\tmore payload\n')
    copy.write_text(text + future)
    trace = read_rank(copy)
    assert trace.other["future_event"] == 1 and trace.records == 65
    assert len(trace.graphs) == 4  # everything else read as before


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


def test_records_are_streamed():
    """A generator: the file is read line by line (a 100 MB trace is never held whole)."""
    stream = records(STEP_FILE)
    first = next(stream)
    assert first.kind in ("str", "artifact:torch_version", "dynamo_start")
    stream.close()


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
    assert [r["rank"] for r in report["ranks"]] == [0] and report["schema_version"] == "1.11"


def test_reading_a_trace_imports_no_torch():
    """`breakscan trace` parses and analyses in the CLI's own process: torch is never loaded."""
    code = ("import sys; from breakscan.trace.ranks import trace_report; "
            f"r = trace_report({str(STEP)!r}); print(len(r.breaks), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["1", "False"], out.stderr


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
