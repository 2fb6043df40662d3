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
        "root_breaks, graph_calls_per_call, recompiles, kernels_per_call, compile_instructions, "
        "compile_s}\n")
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", "-o", "s1.json", "-f", "json",
                   cwd=folder)
    assert proc.returncode == 2 and "s1.json" in proc.stderr


# Issue 42: the shards' files are untrusted, the user's files precious.

SECRET = "tok-9d2e-NEVER-SHOWN"


def _forge(folder, name: str, change) -> str:
    """A copy of shard 2's file (tensor_branch.py:TensorIf, a real break) with ``change``
    applied to its run's fields."""
    line = json.loads((folder / "s2.json").read_text())
    change(line["fields"]["run"]["fields"])
    (folder / name).write_text(json.dumps(line) + "\n")
    return name


def test_merge_shows_no_file_a_results_line_names(zoo, tmp_path):
    """A line naming /proc/self/environ and a private file outside the project (with a root of
    its choosing): neither reaches the terminal (a CI log), the HTML or any other format; the
    merge still shows the real excerpts, carried from the shard, even when the model's file
    on the merging machine says something else."""
    folder = zoo[0]
    private = tmp_path / "keys.py"
    private.write_text("".join(f"key_{n} = '{SECRET}'\n" for n in range(30)))

    def hostile(fields):
        result = fields["result"]["fields"]
        brk = result["breaks"][0]
        result["breaks"] += [dict(brk, fields=dict(brk["fields"], file=path, line=line))
                             for path, line in (("/proc/self/environ", 1), (str(private), 3))]
        result["source_roots"] = ["/"]
        result["sources"] = None
    forged = _forge(folder, "forged_env.json", hostile)
    merge_dir = tmp_path / "merge"
    merge_dir.mkdir()
    for name in ("s1.json", forged, "s3.json", "pyproject.toml", "item_logging.py"):
        shutil.copy(folder / name, merge_dir / name)
    original = (folder / "tensor_branch.py").read_text()  # the same classes, other lines
    (merge_dir / "tensor_branch.py").write_text("# CHANGED_HERE\n" * 10 + original)
    env = {"BREAKSCAN_TEST_SECRET": SECRET}
    shown = ""
    for fmt in ("terminal", "markdown", "json", "sarif", "github", "junit"):
        proc = run_cli("merge", "s1.json", forged, "s3.json", "-f", fmt, "--html", f"{fmt}.html",
                       cwd=merge_dir, env=env)
        assert proc.returncode == 0, proc.stderr
        shown += proc.stdout + proc.stderr + (merge_dir / f"{fmt}.html").read_text()
    assert SECRET not in shown and "key_3" not in shown and "HOME=" not in shown
    assert "CHANGED_HERE" not in shown
    assert "if h.sum() > 0:" in shown  # tensor_branch.py's real line, carried


def test_merge_gates_every_line_again_under_the_config(zoo):
    folder = zoo[0]
    config = (folder / "pyproject.toml").read_text()
    (folder / "tight.toml").write_text(config.replace("[tool.breakscan]\n",
                                                      "[tool.breakscan]\nmax-breaks = 0\n", 1))
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", "--config", "tight.toml", "-q",
                   cwd=folder)
    assert proc.returncode == 1, proc.stderr  # LogInsideForward breaks: tightened, it fails
    forged = _forge(folder, "forged_exit.json", lambda f: (
        f.update(exit_code=0), f["result"]["fields"]["summary"]["fields"].update(
            graph_break_count=99)))
    (folder / "lax.toml").write_text(config.replace("max-breaks = 0\n", "max-breaks = 5\n")
                                     .replace(f'flaky = ["{FLAKY}"]\n', ""))
    proc = run_cli("merge", "s1.json", forged, "s3.json", "--config", "lax.toml", "-f", "json",
                   cwd=folder)
    models = {m["target"]: m for m in json.loads(proc.stdout)["models"]}
    assert proc.returncode == 1 and models[FLAKY]["exit_code"] == 1
    assert models[FLAKY]["result"]["gate"]["checks"][0]["actual"] == 99
    (folder / "other.toml").write_text(config.replace('input-shape = ["8,16"]',
                                                      'input-shape = ["4,16"]'))
    proc = run_cli("merge", "s1.json", "s2.json", "s3.json", "--config", "other.toml",
                   cwd=folder)
    assert proc.returncode == 2 and "4 result(s) made with other scan options than the " \
        "config gives: item_logging.py:LogInsideForward (input_shapes: ['8,16'], the config " \
        "gives ['4,16'])" in proc.stderr


def test_no_output_lands_on_a_file_the_run_reads_or_a_user_file(zoo):
    folder = zoo[0]
    (folder / "notes.json").write_text('{"author": "me", "targets": ["x"]}')
    (folder / "NOTES.md").write_text("# mine\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    cases = [
        (("check", "--results", "NOTES.md"), "refusing to write --results NOTES.md"),
        (("check", "--results", "item_logging.py"), "refusing to write --results"),
        (("check", "--shard", "1/3", "--durations", "s2.json", "--results", "s2.json"),
         "refusing to write --results s2.json: it is the --durations file"),
        (("check", "--results", "r.json", "-f", "json", "-o", "r.json"),
         "-o and --results name one file"),
        (("merge", "s1.json", "s2.json", "s3.json", "--expected", "zoo.json", "-f", "json",
          "-o", "zoo.json"), "refusing to write -o zoo.json: it is the --expected file"),
        (("merge", "s1.json", "s2.json", "s3.json", "--expected", "zoo.json",
          "--write-durations", "zoo.json"), "it is the --expected file"),
        (("merge", "s1.json", "s2.json", "s3.json", "--write-durations", "notes.json"),
         "refusing to rewrite --write-durations notes.json"),
        (("merge", "s1.json", "s2.json", "s3.json", "--expected", "notes.json",
          "--update-expected"), "refusing to rewrite --expected notes.json"),
        (("merge", "s1.json", "s2.json", "s3.json", "--write-durations", "no/such/d.json"),
         "cannot write --write-durations no/such/d.json"),
        (("merge", "s1.json", "s2.json", "s3.json", "--write-durations", "."),
         "--write-durations ."),
    ]
    if not (folder / "zoo.json").exists():
        _expected(folder, "--update-expected")
        before["zoo.json"] = (folder / "zoo.json").read_bytes()
    for args, says in cases:
        proc = run_cli(*args, cwd=folder, timeout=60)
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1, proc.stderr
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert {k: v for k, v in after.items() if k in before} == before


def test_special_files_as_inputs_are_refused_at_once(zoo):
    folder = zoo[0]
    if not (folder / "pipe").exists():
        os.mkfifo(folder / "pipe")
    for args in (("merge", "pipe"), ("merge", "/dev/zero"),
                 ("merge", "s1.json", "s2.json", "s3.json", "--expected", "pipe"),
                 ("check", "--shard", "1/3", "--durations", "/dev/zero")):
        proc = run_cli(*args, cwd=folder, timeout=30)
        assert proc.returncode == 2 and "not a regular file" in proc.stderr, (args, proc.stderr)


def test_a_full_disk_during_merge_is_one_line_and_the_file_unchanged(zoo):
    import resource

    folder = zoo[0]
    (folder / "d.json").write_text('{"old.py:Net": 1.5}\n')

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10, resource.RLIM_INFINITY))

    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    proc = subprocess.run([sys.executable, "-m", "breakscan", "merge", "s1.json", "s2.json",
                           "s3.json", "-q", "--write-durations", "d.json"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith("breakscan: error: cannot write --write-durations d.json: File "
                                "too large (it is unchanged)\n")
    assert (folder / "d.json").read_text() == '{"old.py:Net": 1.5}\n'
    if not (folder / "zoo.json").exists():
        _expected(folder, "--update-expected")
    committed = (folder / "zoo.json").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "breakscan", "merge", "s1.json", "s2.json",
                           "s3.json", "-q", "--expected", "zoo.json", "--update-expected"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=small_disk)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith("breakscan: error: cannot write --expected zoo.json: File too "
                                "large (it is unchanged)\n")
    assert (folder / "zoo.json").read_bytes() == committed
