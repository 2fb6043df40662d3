"""What a model leaves running does not hold the scan, nor outlive it.

A thread that is not a daemon, or an atexit handler that never returns, would keep the scan
process from exiting after it saved its result: the scan ends anyway and its result is used. A
process the model detached into a session of its own (out of reach of the process group the
scan kills) is ended with the scan, after a finished scan and after a timeout. Every test kills
what its model left and asserts there was nothing to kill.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

M = FIXTURES / "models" / "leaves_things_running.py"

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie waits for init to reap it: it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.fixture
def started(tmp_path):
    """The pid file the model writes; afterwards every pid in it is killed if still running, and
    the test fails if one was."""
    pidfile = tmp_path / "pids"
    pidfile.touch()
    yield pidfile
    pids = [int(line) for line in pidfile.read_text().split()]
    survivors = [pid for pid in pids if _running(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


def _scan_json(name: str, pidfile: Path, *extra: str) -> tuple[int, dict, str]:
    """Exit code, the JSON report, stderr."""
    proc = run_cli(f"{M}:{name}", "-s", "2,3", "-f", "json", *extra,
                   env={"BREAKSCAN_TEST_PIDFILE": str(pidfile)})
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_a_thread_left_running_does_not_hold_the_finished_scan(started):
    code, doc, stderr = _scan_json("StartsAThread", started, "--timeout", "90")
    assert (code, doc["error"], doc["partial"], stderr) == (0, None, False, "")
    assert doc["summary"]["graph_count"] == 1


def test_an_atexit_handler_that_hangs_does_not_lose_the_result(started):
    code, doc, stderr = _scan_json("HangsAtExit", started, "--timeout", "90")
    assert (code, doc["error"], doc["partial"], stderr) == (0, None, False, "")
    assert doc["summary"]["graph_count"] == 1


def test_a_detached_process_is_ended_with_the_scan(started):
    code, doc, _ = _scan_json("DetachesASleeper", started)
    assert code == 0 and doc["notes"] == []
    (pid,) = [int(line) for line in started.read_text().split()]
    assert not _running(pid)


def test_a_double_forked_daemon_without_our_environment_is_ended(started):
    code, _, _ = _scan_json("DaemonizesASleeper", started)
    assert code == 0
    (pid,) = [int(line) for line in started.read_text().split()]
    assert not _running(pid)


def test_a_timeout_ends_the_detached_process_too(started):
    code, doc, stderr = _scan_json("DetachesThenHangs", started, "--timeout", "20")
    assert code == 3 and "timed out after 20 s during" in stderr
    (pid,) = [int(line) for line in started.read_text().split()]
    assert not _running(pid)
