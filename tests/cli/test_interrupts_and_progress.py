"""Long work, through the real CLI: a signal, Ctrl-C or a killed breakscan ends every child and
keeps what was finished (partial reports, verified fixes, the check's finished targets), and
the live status line shows where a long stage is."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, QUICK, ROOT, SAMPLES, ctrl_c_reaches_it, run_on_terminal

ITEM = f"{SAMPLES}/item_logging.py:LogInsideForward"


# -- interruption -------------------------------------------------------------------------------

M = FIXTURES / "models" / "misbehaving.py"


def _start(tmp_path, *args: str) -> subprocess.Popen:
    """The real CLI in the background, its temporary folders under ``tmp_path``."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    return subprocess.Popen([sys.executable, "-m", "breakscan", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_reaches_it)


def _stage_seen(tmp_path, stage: str):
    return lambda: any(stage in e.read_text() for e in tmp_path.glob("breakscan-*/events.jsonl"))


def _signal_when(proc: subprocess.Popen, tmp_path, ready, signum: int) -> None:
    """Send ``signum`` once ``ready()`` (the scan reached the stage that sleeps)."""
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ready():
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signum)


def _interrupt(tmp_path, signum: int, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Start the real CLI on a model that sleeps after its first call, signal it once the
    child is in its eager run, and return what it did (and how long it took to stop)."""
    import time

    proc = _start(tmp_path, f"{M}:SleepsOnLaterCalls", "-s", "2,3", *args)
    _signal_when(proc, tmp_path, _stage_seen(tmp_path, "eager run"), signum)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took


@pytest.mark.parametrize("signame, code", [("SIGTERM", 143), ("SIGINT", 130), ("SIGHUP", 129)])
def test_a_signal_ends_the_scan_with_a_partial_report(tmp_path, signame, code):
    import signal

    result, took = _interrupt(tmp_path, getattr(signal, signame))
    assert result.returncode == code, result.stderr
    assert took < 2.0
    assert f"breakscan: interrupted ({signame}) during eager run" in result.stderr
    assert "Traceback" not in result.stderr
    assert "PARTIAL REPORT: the scan stopped during eager run" in result.stdout
    assert "graphs 1 · root-cause breaks 0" in result.stdout  # the first call's capture
    assert list(tmp_path.glob("breakscan-*")) == []  # temporary folder removed
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in ps  # no scan process left behind


def test_an_interrupted_json_report_is_still_written(tmp_path):
    import signal

    dest = tmp_path / "scan.json"
    result, _ = _interrupt(tmp_path, signal.SIGTERM, "-f", "json", "-o", str(dest))
    assert result.returncode == 143
    doc = json.loads(dest.read_text())
    assert doc["partial"] and doc["stopped_at"] == "eager run"
    assert doc["error"] == "interrupted (SIGTERM) during eager run"


def _config(folder, *targets: tuple[str, str]):
    """A pyproject.toml with one [[tool.breakscan.targets]] entry per (target, shape)."""
    entries = "".join(f'[[tool.breakscan.targets]]\ntarget = "{target}"\n'
                      f'input-shape = ["{shape}"]\n' for target, shape in targets)
    config = folder / "pyproject.toml"
    config.write_text(f"[tool.breakscan]\n{entries}")
    return config


def test_check_stops_at_the_interrupted_target(tmp_path):
    import signal

    config = _config(tmp_path, (f"{M}:SleepsOnLaterCalls", "2,3"), (ITEM, "8,16"))
    proc = _start(tmp_path, "check", "-j", "1", "--config", str(config), "-f", "json")
    _signal_when(proc, tmp_path, _stage_seen(tmp_path, "eager run"), signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    (model,) = json.loads(out)["models"]  # one at a time (-j 1): the second target never ran
    assert model["exit_code"] == 143 and model["partial"]
    assert "breakscan: interrupted (SIGTERM) during eager run" in err


def test_a_killed_breakscan_takes_its_child_along_and_leaves_no_folder(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from breakscan.process.leftovers import remove_stale_work

    env = dict(os.environ, TMPDIR=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-m", "breakscan",
                               f"{FIXTURES / 'models' / 'misbehaving.py'}:HangsOnNewBatch",
                               "-s", "3,4", "--timeout", "120"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    owner = None
    while time.monotonic() < deadline and owner is None:
        found = [json.loads(p.read_text()) for p in tmp_path.glob("breakscan-*/owner.json")]
        owner = next((o for o in found if o.get("child")), None)
        time.sleep(0.2)
    assert owner is not None
    time.sleep(2)  # the child is in its scan
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    time.sleep(2.5)
    with pytest.raises(ProcessLookupError):
        os.kill(owner["child"], 0)
    assert list(tmp_path.glob("breakscan-*"))  # SIGKILL left its folder...
    remove_stale_work(str(tmp_path))
    assert not list(tmp_path.glob("breakscan-*"))  # ...which a later run removes


def test_fix_interrupted_keeps_what_was_verified_and_writes_nothing(tmp_path):
    """SIGTERM while a fix is being verified: exit 143, the fix marked interrupted, the file
    untouched even with --write."""
    import shutil
    import signal

    model = tmp_path / "slow_fix.py"
    shutil.copy(M, model)
    before = model.read_text()
    proc = _start(tmp_path, f"{model}:SlowToFix", "-s", "2,3", "--fix", "--write", "--backend",
                  "eager", "-f", "json")
    copied = lambda: bool(list(tmp_path.glob("breakscan-*/breakscan-fix-*")))  # noqa: E731
    _signal_when(proc, tmp_path, copied, signal.SIGTERM)  # the fix's rewritten copy sleeps
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "breakscan: interrupted (SIGTERM)" in err and "Traceback" not in err
    doc = json.loads(out)
    assert doc["fixes"] and "interrupted (SIGTERM)" in doc["fixes"][-1]["reason"]
    assert model.read_text() == before and not list(tmp_path.glob("*.breakscan.bak"))
    assert list(tmp_path.glob("breakscan-*")) == []  # the fix's rewritten copy went too


def test_compare_interrupted_reports_and_exits_130(tmp_path):
    import signal

    proc = _start(tmp_path, "compare", f"{M}:SleepsOnLaterCalls", ITEM, "-s", "2,3",
                  "--backend", "eager")
    _signal_when(proc, tmp_path, _stage_seen(tmp_path, "eager run"), signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "breakscan: interrupted (SIGINT) during eager run" in err
    assert list(tmp_path.glob("breakscan-*")) == []


# -- progress on long work ----------------------------------------------------------------------

def test_a_timing_shows_its_runs_live():
    """`timing (compiled) 12 runs, 0.8/2 s`: runs so far and seconds of the budget (the count is
    adaptive, so there is no total); the stage recorded for a stopped scan stays the bare name."""
    import re

    screen = run_on_terminal(f"{M}:SleepsEveryCall", "-s", "2,3", "--time", "--backend", "eager")
    for variant in ("eager", "compiled"):
        seen = re.findall(rf"· timing \({variant}\) (\d+) runs, (\d\.\d)/2 s · ", screen)
        assert seen, screen[-2000:]
        runs = [int(n) for n, _ in seen]
        assert runs == sorted(runs) and 0.0 <= max(float(s) for _, s in seen) <= 2.0


def test_fix_and_check_show_which_fix_and_which_target_live(tmp_path):
    screen = run_on_terminal(f"{SAMPLES}/print_in_forward.py:PrintInForward", "-s", "8,16",
                             "--fix", *QUICK)
    assert "· fix 1/1: print_guard · explain · " in screen, screen[-2000:]
    assert "fix BS003 print_guard: verified" in screen
    config = _config(tmp_path, (ITEM, "8,16"))
    screen = run_on_terminal("check", "--config", str(config), cwd=tmp_path)
    assert f"· check 1/1: {ITEM} · explain · check" in screen, screen[-2000:]
