"""Issue 36: a model zoo over several machines. Three shards of a small zoo run as separate
processes, one is killed mid-run (SIGKILL, as a lost CI machine) and resumed, the shards'
result files are merged, and the merged report equals a single `breakscan check` of the same
targets: the same verdict, the same numbers per target. Then the zoo's expected counts: PASS,
IMPROVED, FAIL, NEW, MISSING and flaky, and the printed update command, run as printed."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import SAMPLES, run_cli

ZOO = ["item_logging.py:LogInsideForward", "item_logging.py:LogOutsideForward",
       "tensor_branch.py:TensorIf", "tensor_branch.py:TensorWhere"]
SHARDS = {1: ZOO[:2], 2: ZOO[2:3], 3: ZOO[3:]}  # sorted names, contiguous slices of 4 over 3
FLAKY = "tensor_branch.py:TensorIf"  # fails its gate (max-breaks 0), listed as flaky


def _numbers(model: dict) -> tuple:
    """What a merged run must agree on with a single run, per target."""
    result = model["result"]
    summary = result["summary"] if result else {}
    return (model["exit_code"], model["error"], summary.get("graph_count"),
            summary.get("graph_break_count"), summary.get("graph_calls_per_call"),
            [(b["category"], b["line"]) for b in (result or {}).get("breaks", [])],
            result["gate"]["passed"] if result and result.get("gate") else None)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """The zoo scanned once on one machine and once as three shards (shard 1 killed after its
    first target, then resumed)."""
    folder = tmp_path_factory.mktemp("zoo")
    for name in ("tensor_branch.py", "item_logging.py"):
        shutil.copy(SAMPLES / name, folder / name)
    entries = "".join(f'[[tool.breakscan.targets]]\ntarget = "{t}"\ninput-shape = ["8,16"]\n'
                      + ("max-breaks = 0\n" if t == FLAKY else "") for t in ZOO)
    (folder / "pyproject.toml").write_text(f'[tool.breakscan]\nflaky = ["{FLAKY}"]\n' + entries)
    single = run_cli("check", "--no-cache", "-j", "1", "-f", "json", "-o", "single.json",
                     cwd=folder)
    killed = _kill_after_first_target(folder)
    resumed = run_cli("check", "--no-cache", "-j", "1", "--shard", "1/3", "--results",
                      "s1.json", "--resume", "-q", cwd=folder)
    others = [run_cli("check", "--no-cache", "-j", "1", "--shard", f"{k}/3", "--results",
                      f"s{k}.json", "-q", cwd=folder) for k in (2, 3)]
    return folder, single, killed, resumed, others


def _kill_after_first_target(folder):
    """Shard 1 of 3 started as its own process and SIGKILLed as soon as its result file holds
    one finished target (its second is being scanned): what it kept."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    proc = subprocess.Popen([sys.executable, "-m", "breakscan", "check", "--no-cache", "-j", "1",
                             "--shard", "1/3", "--results", "s1.json", "-q"], cwd=folder,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = folder / "s1.json"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= 1:
            break
        time.sleep(0.05)
    running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return running, results.read_bytes()


def test_three_shards_killed_resumed_and_merged_equal_one_check(zoo):
    folder, single, (was_running, kept), resumed, others = zoo
    assert single.returncode == 0, single.stderr  # only the flaky target fails its gate
    assert [m["exit_code"] for m in json.loads((folder / "single.json").read_text())[
        "models"]] == [0, 0, 1, 0]
    assert was_running, "shard 1 finished before it could be killed"
    assert kept.count(b"\n") == 1  # the first target kept, the one being scanned lost
    first = json.loads(kept)["fields"]["run"]["fields"]["target"]
    assert first == ZOO[0]
    # --resume scanned only the target it had lost, and kept the finished one byte for byte
    assert resumed.returncode == 0, resumed.stderr
    assert f"--resume: 1 target(s) kept from s1.json ({ZOO[0]})" in resumed.stderr
    assert (folder / "s1.json").read_bytes().startswith(kept)
    assert [p.returncode for p in others] == [0, 0], [p.stderr for p in others]

    merged = run_cli("merge", "s1.json", "s2.json", "s3.json", "-f", "json", "-o", "all.json",
                     "--write-durations", "durations.json", cwd=folder)
    assert merged.returncode == single.returncode, merged.stderr
    one = json.loads((folder / "single.json").read_text())
    everything = json.loads((folder / "all.json").read_text())
    assert [m["target"] for m in everything["models"]] == ZOO
    assert [_numbers(m) for m in everything["models"]] == [_numbers(m) for m in one["models"]]
    assert (everything["exit_code"], everything["passed"]) == (one["exit_code"], one["passed"])
    origins = {m["target"]: m["origin"] for m in everything["models"]}
    assert {t: o["shard"] for t, o in origins.items()} == {
        t: f"{k}/3" for k, names in SHARDS.items() for t in names}
    assert all(o["machine"] and o["torch"] and o["python"] for o in origins.values())
    # every shard's seconds per target, as the next sharded run's --durations
    durations = json.loads((folder / "durations.json").read_text())
    assert sorted(durations) == ZOO and all(v > 1 for v in durations.values())
    # every other format from the merged shards, as from one machine
    junit = run_cli("merge", "s1.json", "s2.json", "s3.json", "-f", "junit", cwd=folder)
    assert junit.returncode == 0 and "<failure" not in junit.stdout, junit.stdout
    assert '<skipped message="flaky: max_breaks: 1 &gt; limit 0"' in junit.stdout


def test_merge_refuses_overlaps_and_missing_targets_naming_them(zoo):
    folder = zoo[0]
    twice = run_cli("merge", "s1.json", "s2.json", "s3.json", "s2.json", cwd=folder)
    assert twice.returncode == 2
    assert twice.stderr == ("breakscan: error: 1 target(s) in more than one result: "
                            "tensor_branch.py:TensorIf (s2.json and s2.json)\n")
    short = run_cli("merge", "s1.json", "s3.json", cwd=folder)
    assert short.returncode == 2
    assert short.stderr == ("breakscan: error: 1 listed target(s) in no result file: "
                            "tensor_branch.py:TensorIf (a shard that did not finish? --resume "
                            "it)\n")
    (folder / "bad.json").write_text('{"not": "a result"}\n' + (folder / "s2.json").read_text())
    bad = run_cli("merge", "s1.json", "bad.json", "s3.json", cwd=folder)
    assert bad.returncode == 2 and bad.stderr.startswith(
        "breakscan: error: bad.json line 1 is not a breakscan check --results entry ("), bad.stderr
    # a last line cut short (a machine lost while writing it) is left out, and said
    cut = folder / "cut.json"
    cut.write_bytes((folder / "s2.json").read_bytes() + b'{"__dataclass__": "ShardEn')
    proc = run_cli("merge", "s1.json", "cut.json", "s3.json", "-q", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert "breakscan merge: cut.json line 2 was cut short (a killed run): left out" in proc.stderr


def _expected(folder, *args):
    return run_cli("merge", "s1.json", "s2.json", "s3.json", "-q", "--expected", "zoo.json",
                   *args, cwd=folder)


def test_expected_counts_pass_improved_fail_new_missing_flaky(zoo):
    folder = zoo[0]
    written = _expected(folder, "--update-expected")
    assert "wrote zoo.json (4 targets)" in written.stderr
    assert "expected counts (zoo.json): 4 PASS" in written.stderr
    document = json.loads((folder / "zoo.json").read_text())
    assert document["targets"]["tensor_branch.py:TensorIf"] == {
        "ok": True, "graphs": 2, "root_breaks": 1, "graph_calls_per_call": 2}
    assert _expected(folder).returncode == 0

    targets = document["targets"]
    targets["item_logging.py:LogOutsideForward"]["graphs"] += 1  # fewer now: IMPROVED
    targets["item_logging.py:LogInsideForward"]["root_breaks"] = 0  # 1 now: FAIL
    targets[FLAKY]["graphs"] = 1  # 2 now: FAIL, but flaky
    del targets["tensor_branch.py:TensorWhere"]  # NEW
    targets["gone.py:Removed"] = {"ok": True, "graphs": 1}  # MISSING
    (folder / "zoo.json").write_text(json.dumps(document))
    proc = _expected(folder)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1
    assert "expected counts (zoo.json): 1 IMPROVED, 2 FAIL, 1 NEW, 1 MISSING" in lines
    graphs = targets["item_logging.py:LogOutsideForward"]["graphs"]
    assert f"  IMPROVED item_logging.py:LogOutsideForward: graphs {graphs} -> {graphs - 1}" \
        in lines
    assert "  FAIL item_logging.py:LogInsideForward: root_breaks 0 -> 1" in lines
    assert f"  FAIL {FLAKY}: graphs 1 -> 2 (flaky: reported, not failing)" in lines
    assert "  NEW tensor_branch.py:TensorWhere: not in the expected file" in lines
    assert "  MISSING gone.py:Removed: not in this run" in lines
    update = lines[-1]
    assert update == ("update the expected counts: breakscan merge s1.json s2.json s3.json -q "
                      "--expected zoo.json --update-expected")
    # the printed command, run as printed, rewrites the file; then everything is as expected
    command = shlex.split(update.split(": ", 1)[1])
    rerun = subprocess.run([sys.executable, "-m", "breakscan", *command[1:]], cwd=folder,
                           capture_output=True, text=True, timeout=300)
    assert "expected counts (zoo.json): 4 PASS" in rerun.stderr, rerun.stderr
    assert rerun.returncode == 0
    assert "gone.py:Removed" not in (folder / "zoo.json").read_text()


def test_allowed_improvements_and_a_flaky_target_alone_pass(zoo):
    folder = zoo[0]
    _expected(folder, "--update-expected")
    document = json.loads((folder / "zoo.json").read_text())
    document["targets"]["item_logging.py:LogOutsideForward"]["graphs"] += 1  # IMPROVED
    document["targets"][FLAKY]["root_breaks"] = 0  # FAIL, flaky
    (folder / "zoo.json").write_text(json.dumps(document))
    assert _expected(folder).returncode == 1  # IMPROVED fails by default
    allowed = _expected(folder, "--allow-improvements")
    assert allowed.returncode == 0, allowed.stderr
    assert any(line.startswith("  IMPROVED item_logging.py:LogOutsideForward: graphs ") and
               line.endswith(" (allowed)") for line in allowed.stderr.splitlines())
    assert "update the expected counts" not in allowed.stderr


def test_resume_and_expected_refuse_what_cannot_work(zoo):
    folder = zoo[0]
    proc = run_cli("check", "--resume", cwd=folder)
    assert (proc.returncode, proc.stderr) == (
        2, "breakscan: error: --resume needs --results FILE (the file to resume)\n")
    proc = run_cli("check", "--shard", "1/3", "--expected", "zoo.json", "--update-expected",
                   cwd=folder)
    assert proc.returncode == 2 and "run it on the merged shards" in proc.stderr
    (folder / "broken.json").write_text('{"breakscan_expected": 1, "targets": {"a": 3}}')
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", "--expected", "broken.json",
                   cwd=folder)
    assert (proc.returncode, proc.stderr) == (
        2, "breakscan: error: --expected broken.json: the entry of 'a' is not {ok, graphs, "
        "root_breaks, graph_calls_per_call, recompiles, kernels_per_call}\n")
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", "-o", "s1.json", "-f", "json",
                   cwd=folder)
    assert proc.returncode == 2 and "s1.json" in proc.stderr
