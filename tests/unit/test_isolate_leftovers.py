"""The parent's side of what a job leaves behind (`process/isolate.py`, `process/leftovers.py`).

A child that said it was done has its result used even when it then hung and was killed at the
timeout; a process carrying the child's work folder in its environment is found and killed,
though it is in a session of its own and no descendant of this process's children; what could
not be ended is named in the result's notes. Through the real CLI: tests/cli/test_leftovers.py.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from breakscan.model.jsondata import dumps
from breakscan.process.isolate import _outcome
from breakscan.process.leftovers import WORK_VARIABLE, end_processes, work_mark

from conftest import recorded_runs


def _finished_child(work, result) -> None:
    (work / "result.json").write_text(dumps(result))
    (work / "events.jsonl").write_text('{"stage": "run-time counts"}\n{"done": true}\n')
    (work / "stderr").write_text("")


def test_a_result_saved_before_the_timeout_is_used(tmp_path):
    result = recorded_runs("gate_runs")[0].result
    _finished_child(tmp_path, result)
    run = _outcome("m.py:M", tmp_path, -9, timed_out=True, timeout=5.0, seconds=5.0)
    assert (run.error, run.exit_code, run.partial) == (None, 0, False)
    assert run.result.summary == result.summary


def test_what_could_not_be_ended_is_named(tmp_path):
    result = recorded_runs("gate_runs")[0].result
    _finished_child(tmp_path, result)
    run = _outcome("m.py:M", tmp_path, 0, timed_out=False, timeout=None, seconds=1.0,
                   left_running=["pid 4242 (sleep 3600)"])
    assert run.result.notes[-1] == "left running: pid 4242 (sleep 3600) (breakscan could not " \
                                   "end it)"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_detached_process_with_the_work_folder_in_its_environment_is_killed(tmp_path):
    sleeper = subprocess.Popen(["sleep", "3600"], start_new_session=True,
                               env={**os.environ, WORK_VARIABLE: str(tmp_path)})
    other = subprocess.Popen(["sleep", "3600"], start_new_session=True,
                             env={**os.environ, WORK_VARIABLE: f"{tmp_path}-other"})
    try:
        assert end_processes(None, work_mark(tmp_path)) == []
        assert sleeper.wait(timeout=5) == -9
        assert other.poll() is None  # another run's process is left alone
    finally:
        for process in (sleeper, other):
            process.kill()
            process.wait()
