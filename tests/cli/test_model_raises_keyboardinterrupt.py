"""A model (or program) whose own code raises KeyboardInterrupt, with no Ctrl-C and no signal
sent, has failed: exit 3 and one line naming the stage and its line, never "interrupted".

Through the real CLI (``scan``'s isolated child, ``run``), and in this process
(``runner.scan_in_process``, ``child.run_here``, ``pipeline.program.run_program``). A SIGINT
that really came (here one the model sends to its own process) still interrupts as before; a
real Ctrl-C to the CLI is tests/cli/test_interrupts_and_progress.py's.
"""

from __future__ import annotations

import json
import signal

import pytest

from conftest import FIXTURES, locate, run_cli, shown

F = FIXTURES / "models" / "raises_keyboard_interrupt.py"


def _line(text: str) -> int:
    return locate(text, F)[1]


FORWARD = "raise KeyboardInterrupt  # the model's own, no signal"
LATER = 'raise KeyboardInterrupt("stop after the first call")  # on the second call'
BUILT = 'raise KeyboardInterrupt("no model today")  # while being built'

CASES = [
    ("RaisesInForward", "during explain, the model raised KeyboardInterrupt", FORWARD),
    ("RaisesAfterFirstCall", "during eager run, the model raised KeyboardInterrupt: stop after "
     "the first call", LATER),
    ("RaisesWhenBuilt", "during load, the model raised KeyboardInterrupt: no model today", BUILT),
]


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in this process (as in a terminal), whatever the test
    run inherited (``pytest … &`` ignores it); put back after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _not_interrupted(call, *args, **kwargs):
    """``call``'s return; a KeyboardInterrupt escaping it fails the test (pytest would stop the
    whole session on it)."""
    try:
        return call(*args, **kwargs)
    except KeyboardInterrupt as exc:
        pytest.fail(f"KeyboardInterrupt escaped {call.__name__}: {exc!r}")


@pytest.mark.parametrize("name, message, at", CASES, ids=[c[0] for c in CASES])
def test_scan_of_a_model_raising_keyboardinterrupt_is_exit_3_at_its_line(name, message, at):
    proc = run_cli(f"{F}:{name}", "-s", "2,3", "-q")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()  # one line, no traceback
    assert line == f"breakscan: error: {message} at {shown(F)}:{_line(at)}"
    assert "interrupted" not in proc.stdout + proc.stderr
    if name == "RaisesAfterFirstCall":  # what the first call captured is kept
        assert "PARTIAL REPORT: the scan stopped during eager run" in proc.stdout


def test_run_of_a_program_raising_keyboardinterrupt_is_exit_3_at_its_line(tmp_path):
    out = tmp_path / "run.json"
    proc = run_cli("run", "--capture-only", "-f", "json", "-o", str(out), str(F))
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    at = _line("raise KeyboardInterrupt  # the program's own, no signal")
    assert lines[-1] == f"breakscan: error: the program raised KeyboardInterrupt at {shown(F)}:{at} in main"
    assert "Traceback" in proc.stderr and "KeyboardInterrupt" in lines[-2]  # as Python prints
    assert "interrupted" not in proc.stderr
    report = json.loads(out.read_text())
    report = report.get("result", report)
    # the status `python script.py` ends with (by SIGINT, as Python ends on KeyboardInterrupt)
    assert report["partial"] is True and report["program"]["exit_code"] == 130
    assert report["summary"]["graph_count"] == 1  # what it compiled before is reported


@pytest.mark.parametrize("name, message, at", CASES, ids=[c[0] for c in CASES])
def test_in_process_scan_of_a_model_raising_keyboardinterrupt_is_exit_3(name, message, at,
                                                                         ctrl_c_raises):
    from breakscan.model.jobs import ScanRequest
    from breakscan.options import ScanOptions
    from breakscan.process.child import run_here
    from breakscan.process.jobs import SCAN_JOB
    from breakscan.runs.runner import scan_in_process

    target, options = f"{F}:{name}", ScanOptions(input_shapes=["2,3"])
    expected = f"{message} at {shown(F)}:{_line(at)}"
    run = _not_interrupted(scan_in_process, target, options)
    assert (run.exit_code, run.error, run.result) == (3, expected, None)
    here = _not_interrupted(run_here, SCAN_JOB, ScanRequest(target, options), target=target)
    assert (here.exit_code, here.error) == (3, expected)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler put back


def test_a_sigint_that_came_still_interrupts_in_process(ctrl_c_raises):
    """The model sends SIGINT to its own process: a real signal, so Ctrl-C's KeyboardInterrupt
    leaves the in-process scan as before."""
    from breakscan.model.jobs import ScanRequest
    from breakscan.options import ScanOptions
    from breakscan.process.child import run_here
    from breakscan.process.jobs import SCAN_JOB
    from breakscan.runs.runner import scan_in_process

    target, options = f"{F}:SignalsItself", ScanOptions(input_shapes=["2,3"])
    with pytest.raises(KeyboardInterrupt):
        scan_in_process(target, options)
    with pytest.raises(KeyboardInterrupt):
        run_here(SCAN_JOB, ScanRequest(target, options), target=target)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_sigint_the_scan_process_got_is_still_interrupted():
    """In the isolated child too: a SIGINT that reached it (not the model's own raise) ends
    the scan as it always did."""
    proc = run_cli(f"{F}:SignalsItself", "-s", "2,3", "-q")
    if proc.returncode == 0:  # the CLI inherited SIGINT ignored (`pytest … &`): no signal came
        pytest.skip("SIGINT is ignored in this test run")
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip() == "breakscan: error: interrupted"


def test_program_run_in_process_tells_its_own_keyboardinterrupt_from_a_signal(tmp_path,
                                                                              ctrl_c_raises):
    from breakscan.options import ProgramOptions
    from breakscan.pipeline.program import run_program

    raises = tmp_path / "raises.py"
    raises.write_text("x = 1\nraise KeyboardInterrupt('done')\n")
    outcome = _not_interrupted(run_program, ProgramOptions(script=str(raises)))
    assert (outcome.exit_code, outcome.error) == (
        130, f"KeyboardInterrupt: done at {shown(raises)}:2 in <module>")
    signalled = tmp_path / "signalled.py"
    signalled.write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\n"
                         "time.sleep(5)\n")
    with pytest.raises(KeyboardInterrupt):
        run_program(ProgramOptions(script=str(signalled)))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
