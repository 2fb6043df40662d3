"""Reports written by the real CLI: where they go (a pipe, a FIFO, a link, a device; never over
a file the scan reads), what CI reads in them, and text with nothing missing (the reporters on
recorded results: tests/unit/test_reports.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading

import pytest

from breakscan import scan
from breakscan.model.verdicts import Fix

from conftest import FIXTURES, ROOT, SAMPLES, locate, run_cli, tensor_branch_project

ITEM = f"{SAMPLES}/item_logging.py:LogInsideForward"
TARGET = "tensor_branch.py:TensorIf"
RECORDED = next((FIXTURES / "traces").glob("*/*.log"))
# Every command writes its report through one writer (cli/output.py): where a report may go is
# tested on `trace` of a recorded log (milliseconds, no torch) rather than on a scan.
TRACE = ("trace", str(RECORDED))


# -- output files that are not regular files ------------------------------------------------------

def test_output_into_a_fifo_writes_into_it(tmp_path):
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    proc = run_cli(*TRACE, "-f", "json", "-o", str(fifo))
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a pipe, not replaced by a file
    assert json.loads(received[0])["summary"]["graph_count"] == 4


def test_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "reports" / "scan.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    proc = run_cli(*TRACE, "-f", "json", "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["summary"]["graph_count"] == 4


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_output_onto_a_character_device_is_not_replaced(tmp_path):
    fake_null = tmp_path / "fakenull"
    os.mknod(fake_null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    for dest in (fake_null, "/dev/null"):
        proc = run_cli(*TRACE, "-f", "json", "-o", str(dest))
        assert proc.returncode == 0, proc.stderr
        assert stat.S_ISCHR(os.stat(dest).st_mode), dest


# -- never destroy or corrupt a user file ---------------------------------------------------------

@pytest.mark.parametrize("flag", ["-o", "--html", "--write-baseline"])
def test_a_report_never_replaces_the_models_own_file(tmp_path, flag):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    before = model.read_bytes()
    args = ["-f", "json"] if flag == "-o" else []
    proc = run_cli(f"{model}:TensorIf", "-s", "8,16", *args, flag, str(model))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"breakscan: error: refusing to write {flag} {model}: it is "
                                   f"{model}, a file the scan reads; name another file")
    assert model.read_bytes() == before


def test_a_report_never_replaces_a_source_file_the_scan_loaded(tmp_path):
    """nested_break.py imports its helper from nested_helpers.py: that file is read too."""
    for name in ("nested_break.py", "nested_helpers.py"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    helper = tmp_path / "nested_helpers.py"
    before = helper.read_bytes()
    proc = run_cli(f"{tmp_path / 'nested_break.py'}:NestedBreak", "-s", "8,16", "-f", "json",
                   "-o", str(helper))
    assert proc.returncode == 2 and "a file the scan reads" in proc.stderr
    assert helper.read_bytes() == before


def test_check_never_replaces_its_config(tmp_path):
    folder = tensor_branch_project(tmp_path)
    before = (folder / "pyproject.toml").read_bytes()
    proc = run_cli("check", "-f", "json", "-o", "pyproject.toml", cwd=folder)
    assert proc.returncode == 2 and "refusing to write -o pyproject.toml" in proc.stderr
    assert (folder / "pyproject.toml").read_bytes() == before


def test_compare_never_replaces_a_models_file(tmp_path):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    before = model.read_bytes()
    proc = run_cli("compare", f"{model}:TensorIf", f"{model}:TensorWhere", "-s", "8,16",
                   "-f", "json", "-o", str(model))
    assert proc.returncode == 2 and "a file the scan reads" in proc.stderr
    assert model.read_bytes() == before


# -- reports that consumers can always read -------------------------------------------------------

def test_run_to_stdout_in_a_file_format_keeps_the_programs_output_out(tmp_path):
    program = tmp_path / "noisy.py"
    program.write_text('import torch\nprint("::error::from the program")\n'
                       'f = torch.compile(lambda x: x * 2, backend="eager")\n'
                       'print(f(torch.ones(2)).sum().item())\n')
    for fmt in ("json", "github"):
        proc = run_cli("run", "-f", fmt, str(program))
        assert proc.returncode == 0, proc.stderr
        assert "::error::from the program" in proc.stderr
        assert "from the program" not in proc.stdout
        if fmt == "json":
            json.loads(proc.stdout)


def test_a_closed_pipe_ends_quietly_not_with_the_gates_code():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "breakscan",
                             f"{SAMPLES / 'per_layer_branch.py'}:PerLayerBranch", "-s", "8,16"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and err == ""


def test_github_paths_are_relative_to_the_workspace_from_anywhere(tmp_path):
    proc = run_cli(ITEM, "-s", "8,16", "-f", "github", cwd=tmp_path,
                   env={"GITHUB_WORKSPACE": str(ROOT)})
    line = locate("self.last_mean = h.mean().item()", SAMPLES / "item_logging.py")[1]
    assert f"file=sample_models/item_logging.py,line={line}," in proc.stdout, proc.stdout


def test_no_none_leaks_into_text():
    from breakscan.fixes.judge import judge
    from breakscan.model.result import FixedScan
    from breakscan.model.verdicts import Correctness, FixMetrics

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    before = FixMetrics(graph_count=2, breaks=1, recompiles=None, compiled_s=None, speedup=None,
                        graph_calls_per_call=2.0, eager_gaps_per_call=1.0)
    fix = Fix(rule="BS002", fix_id="x", kind="setting", title="t", category="item",
              before=before)
    judge(fix, FixedScan(result=result, same_outputs=Correctness(True, 0.0, None)),
          dynamic=False)
    assert fix.status == "no effect" and "None" not in fix.reason
    proc = run_cli("trace", str(RECORDED.parent), env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "None" not in proc.stdout and "explain reason" not in proc.stdout
