"""`breakscan check -j N` and its result cache: real scans in parallel child processes, the
runs in the configured order, cache hits, invalidation by a source edit, concurrent runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

from conftest import FIXTURES, SAMPLES, ctrl_c_reaches_it, run_cli

MISBEHAVING = FIXTURES / "models" / "misbehaving.py"


def _project(tmp_path, entries: str, *samples: str):
    """A project folder with copies of some sample files and a pyproject.toml."""
    for name in samples:
        shutil.copy(SAMPLES / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text("[tool.breakscan]\n" + textwrap.dedent(entries))
    return tmp_path


def _target(name: str, shape: str = "8,16", extra: str = "") -> str:
    return f'[[tool.breakscan.targets]]\ntarget = "{name}"\ninput-shape = ["{shape}"]\n{extra}\n'


def _check(folder, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = run_cli("check", "-f", "json", "-o", "out.json", *args, cwd=folder)
    return proc, json.loads((folder / "out.json").read_text())


def test_parallel_check_keeps_the_configured_order_and_the_worst_exit_code(tmp_path):
    folder = _project(tmp_path, _target("tensor_branch.py:TensorIf", extra="max-breaks = 0")
                      + _target("tensor_branch.py:TensorWhere")
                      + _target("tensor_branch.py:NoSuchModel")
                      + _target("item_logging.py:LogInsideForward"),
                      "tensor_branch.py", "item_logging.py")
    proc, doc = _check(folder, "-j", "2", "--no-cache")
    assert proc.returncode == 2, proc.stderr
    assert [m["target"] for m in doc["models"]] == [
        "tensor_branch.py:TensorIf", "tensor_branch.py:TensorWhere",
        "tensor_branch.py:NoSuchModel", "item_logging.py:LogInsideForward"]
    assert [m["exit_code"] for m in doc["models"]] == [1, 0, 2, 0]
    assert doc["exit_code"] == 2
    assert not (folder / ".breakscan_cache").exists()  # --no-cache writes nothing either


def test_each_parallel_scan_gets_its_share_of_the_cores(tmp_path):
    """-j 2: each child runs with cores // 2 threads (OMP_NUM_THREADS, read by torch)."""
    for name in ("reports_threads.py", "reports_threads_2.py"):  # one target per entry
        shutil.copy(FIXTURES / "models" / "reports_threads.py", tmp_path / name)
    folder = _project(tmp_path, _target("reports_threads.py:ReportsThreads")
                      + _target("reports_threads_2.py:ReportsThreads", shape="4,16"))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-m", "breakscan", "check", "-j", "2", "--no-cache",
                           "-f", "json"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    outputs = [m["result"]["model_output"] for m in json.loads(proc.stdout)["models"]]
    expected = max(1, (os.cpu_count() or 1) // 2)
    assert all(f"torch threads: {expected}" in out for out in outputs), outputs


def test_an_unchanged_target_is_answered_from_the_cache(tmp_path):
    folder = _project(tmp_path, _target("nested_break.py:NestedBreak")
                      + _target("tensor_branch.py:TensorIf"),
                      "nested_break.py", "nested_helpers.py", "tensor_branch.py")
    first_proc, first = _check(folder, "-j", "2")
    assert first_proc.returncode == 0, first_proc.stderr
    assert [m["cached"] for m in first["models"]] == [False, False]
    cache = folder / ".breakscan_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    started = time.monotonic()
    again_proc, again = _check(folder, "-j", "2")
    took = time.monotonic() - started
    assert [m["cached"] for m in again["models"]] == [True, True]
    assert [m["result"]["summary"] for m in again["models"]] == \
        [m["result"]["summary"] for m in first["models"]]
    assert took < 30  # no scan ran (a scan alone takes several seconds)
    screen = run_cli("check", cwd=folder).stdout
    assert "no gate (cached)" in screen and "cached: no file, input or setting" in screen

    # The break of NestedBreak is in nested_helpers.py: editing that file (not the target's own)
    # rescans NestedBreak only.
    with open(folder / "nested_helpers.py", "a") as handle:
        handle.write("\n# an edit\n")
    _, edited = _check(folder, "-j", "2")
    assert [m["cached"] for m in edited["models"]] == [False, True]
    # Another option is another question: not answered from the cache.
    (folder / "pyproject.toml").write_text((folder / "pyproject.toml").read_text().replace(
        'target = "tensor_branch.py:TensorIf"\ninput-shape = ["8,16"]',
        'target = "tensor_branch.py:TensorIf"\ninput-shape = ["4,16"]'))
    _, reshaped = _check(folder, "-j", "2")
    assert [m["cached"] for m in reshaped["models"]] == [True, False]
    _, forced = _check(folder, "-j", "2", "--no-cache")
    assert [m["cached"] for m in forced["models"]] == [False, False]


def test_concurrent_checks_share_the_cache_safely(tmp_path):
    folder = _project(tmp_path, _target("tensor_branch.py:TensorIf")
                      + _target("item_logging.py:LogInsideForward"),
                      "tensor_branch.py", "item_logging.py")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    procs = [subprocess.Popen([sys.executable, "-m", "breakscan", "check", "-j", "1", "-q"],
                              cwd=folder, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err
    entries = sorted(p.name for p in (folder / ".breakscan_cache").iterdir())
    assert len([e for e in entries if e.endswith(".json")]) == 2
    assert not [e for e in entries if e.endswith(".tmp")]  # every write was atomic
    _, doc = _check(folder, "-j", "2")
    assert [m["cached"] for m in doc["models"]] == [True, True]


def test_ctrl_c_stops_every_parallel_scan(tmp_path):
    shutil.copy(MISBEHAVING, tmp_path / "misbehaving_2.py")  # one target per entry
    folder = _project(tmp_path, _target(f"{MISBEHAVING}:SleepsOnLaterCalls", "2,3")
                      + _target(f"{tmp_path / 'misbehaving_2.py'}:SleepsOnLaterCalls", "3,3"))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "breakscan", "check", "-j", "2",
                             "--no-cache", "-f", "json"], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_reaches_it)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # both scans in their (sleeping) eager run
        seen = [e for e in tmp_path.glob("breakscan-*/events.jsonl")
                if "eager run" in e.read_text()]
        if len(seen) == 2:
            break
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    models = json.loads(out)["models"]
    assert [m["exit_code"] for m in models] == [130, 130]
    assert all(m["partial"] for m in models)
    assert list(tmp_path.glob("breakscan-*")) == []  # both children gone, folders removed
