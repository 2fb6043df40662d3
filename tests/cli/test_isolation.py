"""Each scan runs in a child process: hangs, crashes and exits end the scan, not breakscan.

What the stages before the failure found is kept and written, marked partial; Dynamo state never
leaks from one model's scan into the next. Here through the real CLI; a crash seen through the
Python API (`scan_isolated`) is in tests/scan/test_isolation_scan.py, the atomic report write in
tests/unit/test_isolation_unit.py.
"""

from __future__ import annotations

import json
import re
import os
import textwrap
import time

from conftest import FIXTURES, ROOT, SAMPLES, locate, run_cli, shown

M = FIXTURES / "models" / "misbehaving.py"


def test_hang_after_explain_times_out_with_a_partial_json_report(tmp_path):
    dest = tmp_path / "scan.json"
    dest.write_text("previous report\n")
    start = time.monotonic()
    proc = run_cli(f"{M}:HangsOnNewBatch", "-s", "8,4", "--vary-batch", "8,16",
                   "--timeout", "20", "-f", "json", "-o", str(dest))
    elapsed = time.monotonic() - start
    assert proc.returncode == 3
    assert elapsed < 20 + 10  # the limit, plus the parent's own start-up
    _, line = locate("time.sleep(3600)", M)
    (error,) = proc.stderr.strip().splitlines()
    assert error == (f"breakscan: error: timed out after 20 s during recompiles at {shown(M)}:{line} in "
                     "forward; the model may hang (raise --timeout if it is just slow)")
    doc = json.loads(dest.read_text())  # the old file was replaced by the partial report
    assert (doc["partial"], doc["stopped_at"]) == (True, "recompiles")
    assert doc["error"] == error.removeprefix("breakscan: error: ")
    assert doc["summary"]["graph_count"] == 1 and doc["recompiles"] is None
    assert "PARTIAL REPORT: the scan stopped during recompiles" in proc.stdout


def test_crash_before_any_result_still_writes_a_report(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli(f"{M}:Segfaults", "-s", "2,3", "-f", "json", "-o", str(dest))
    assert proc.returncode == 3
    doc = json.loads(dest.read_text())
    (model,) = doc["models"]
    assert (model["exit_code"], model["stage"], model["partial"], model["result"]) == \
        (3, "explain", False, None)
    assert "SIGSEGV" in model["error"]


def test_timeout_kills_the_processes_the_model_started(tmp_path):
    pidfile = tmp_path / "helper.pid"
    proc = run_cli(f"{M}:SpawnsAndHangs", "-s", "2,3", "--timeout", "20",
                   env={"BREAKSCAN_TEST_PIDFILE": str(pidfile)})
    assert proc.returncode == 3 and "timed out after 20 s during explain" in proc.stderr
    helper = pidfile.read_text()
    time.sleep(0.5)
    # Gone (or a zombie waiting for init to reap it): the whole group was killed, not just the
    # scan process.
    stat = f"/proc/{helper}/stat"
    assert not os.path.exists(stat) or open(stat).read().split(")")[1].split()[0] in "ZX"


def test_check_isolates_every_model(tmp_path):
    """A hanging model fails alone; a model that flips Dynamo config does not change the next."""
    config = tmp_path / "pyproject.toml"
    config.write_text(textwrap.dedent(f"""
        [tool.breakscan]
        timeout = 120
        [[tool.breakscan.targets]]
        target = "{M}:HangsOnNewBatch"
        input-shape = ["3,4"]
        timeout = 20
        [[tool.breakscan.targets]]
        target = "{M}:SetsDynamoConfig"
        input-shape = ["3,4"]
        [[tool.breakscan.targets]]
        target = "{SAMPLES}/item_logging.py:LogInsideForward"
        input-shape = ["8,16"]
    """))
    proc = run_cli("check", "--config", str(config), "-f", "json")
    assert proc.returncode == 3  # the most severe of the runs
    hang, flips, item = json.loads(proc.stdout)["models"]
    assert hang["exit_code"] == 3 and "timed out after 20 s during explain" in hang["error"]
    # capture_scalar_outputs=True turns .item() into a graph op: no break in that model ...
    assert flips["exit_code"] == 0 and flips["result"]["summary"]["graph_break_count"] == 0
    # ... but the next model starts with Dynamo's defaults again and its .item() breaks.
    assert item["exit_code"] == 0 and item["result"]["summary"]["graph_break_count"] == 1
    assert item["result"]["breaks"][0]["category"] == "item"


def test_scan_never_writes_into_the_users_folder(tmp_path):
    model = tmp_path / "model.py"
    model.write_text((SAMPLES / "item_logging.py").read_text())
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    proc = run_cli(f"{model}:LogInsideForward", "-s", "8,16", "-q", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before  # no __pycache__


def test_a_timeout_while_dynamo_traces_names_the_line_it_traced():
    """Issue 45 §5: Dynamo tracing a `while True:` loop in forward: the Python stack holds only
    Dynamo's frames, so the line comes from what Dynamo was tracing, and says so."""
    _, line = locate("x = x + 1  # traced forever", M)
    proc = run_cli(f"{M}:TracesForever", "-s", "2,2", "--timeout", "15", "-q")
    assert proc.returncode == 3
    error = proc.stderr.strip().splitlines()[-1]
    assert re.fullmatch(rf"breakscan: error: timed out after 15 s during \w[\w -]* at "
                        rf"{re.escape(shown(M))}:{line} in forward \(Dynamo was tracing it\); "
                        rf"the model may hang \(raise --timeout if it is just slow\)", error), error
