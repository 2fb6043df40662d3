"""What a new user met in the first hour (issue "Defects found by a new user"): interruption,
output files that are not regular files, the pytest plugin, messages and labels, CI formats.
Each case goes through the real CLI (or pytester for the plugin)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from conftest import FIXTURES, QUICK, ROOT, SAMPLES, ctrl_c_reaches_it, run_cli, run_on_terminal

ITEM = f"{SAMPLES}/item_logging.py:LogInsideForward"


# -- output files that are not regular files ----------------------------------------------------

def test_output_into_a_fifo_writes_into_it(tmp_path):
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    proc = run_cli(ITEM, "-s", "8,16", "-f", "json", "-o", str(fifo))
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a pipe, not replaced by a file
    assert json.loads(received[0])["summary"]["graph_count"] == 2


def test_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "reports" / "scan.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    proc = run_cli(ITEM, "-s", "8,16", "-f", "json", "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["summary"]["graph_count"] == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_output_onto_a_character_device_is_not_replaced(tmp_path):
    fake_null = tmp_path / "fakenull"
    os.mknod(fake_null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    for dest in (fake_null, "/dev/null"):
        proc = run_cli(ITEM, "-s", "8,16", "-f", "json", "-o", str(dest))
        assert proc.returncode == 0, proc.stderr
        assert stat.S_ISCHR(os.stat(dest).st_mode), dest


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


# -- messages and labels ------------------------------------------------------------------------

def test_every_help_text_shows_its_brackets_verbatim():
    """`[tool.breakscan]` and other bracketed words are text, never rich markup to be eaten."""
    import re

    import typer

    from breakscan.cli.application import app

    group = typer.main.get_command(app)
    seen = 0
    for name, command in [("", group), *group.commands.items()]:
        texts = [command.help or ""] + [getattr(p, "help", "") or "" for p in command.params]
        if name == "":
            texts += [c.get_short_help_str(limit=1000) for c in group.commands.values()]
        shown = " ".join(run_cli(*([name] if name else []), "--help").stdout.split())
        for text in texts:
            for token in re.findall(r"\[[^\]]+\]", text):
                seen += 1
                assert token in shown, (name, token)
    assert seen >= 3  # [tool.breakscan] in check's docstring and --config, at least


def test_op_labels_name_the_method_without_a_made_up_receiver():
    from breakscan import scan

    doc = scan(ITEM, input_shapes=["8,16"]).to_dict()  # analysis, not the CLI: in-process
    (gap,) = [d for d in doc["discrepancies"] if d["topic"] == "op_count"]
    assert "(here: .mean())" in gap["reason"] and "x.mean()" not in gap["reason"]


def test_a_refused_fix_title_does_not_repeat_and_diffs_name_user_paths(tmp_path, monkeypatch):
    """A fix refused before any rewrite shows its id once; a diff of a file outside the working
    directory names its real path, never a chain of ../ up to it. Both are decided when fixes
    are planned (in the parent, before any verification), so they are planned here."""
    import io
    import shutil

    from rich.console import Console

    from breakscan import scan
    from breakscan.fixes.plan import plan_fixes
    from breakscan.report import terminal
    from breakscan.result import ModelRun

    work = tmp_path / "elsewhere"
    work.mkdir()
    model = tmp_path / "models" / "branchy.py"
    model.parent.mkdir()
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    monkeypatch.chdir(work)
    target = f"{model}:TensorIf"
    (plan,) = [p for p in plan_fixes(target, scan(target, input_shapes=["8,16"]))
               if p.fix.fix_id == "torch_where"]
    assert plan.fix.diff.startswith(f"--- a/{model}\n") and "../" not in plan.fix.diff
    # A break in a file outside the target's folder or package: refused before any rewrite, so
    # the title is the id itself.
    outer = tmp_path / "app" / "outer.py"
    outer.parent.mkdir()
    outer.write_text(f"import sys\nsys.path.insert(0, {str(model.parent)!r})\n"
                     "from branchy import TensorIf as Outer\n")
    target = f"{outer}:Outer"
    result = scan(target, input_shapes=["8,16"])
    result.fixes = [p.fix for p in plan_fixes(target, result)]
    assert result.fixes and all(f.reason and f.reason.startswith("refused: source fixes rewrite "
                                                                 "only files of the target's")
                                for f in result.fixes)
    console = Console(file=io.StringIO(), width=100, highlight=False)
    terminal.render_runs([ModelRun(target=target, result=result)], console)
    (head,) = [line for line in console.file.getvalue().splitlines()
               if "BS002 torch_where" in line]
    assert head.count("torch_where") == 1, head


# -- CI formats ---------------------------------------------------------------------------------

def test_recompile_gate_failures_carry_file_and_line_in_github_and_sarif(monkeypatch):
    """The reporters are the subject: the scan and its gate run in this process."""
    from breakscan.options import GateOptions, ScanOptions
    from breakscan.report import render_file_format
    from breakscan.process.runner import run_model

    run = run_model(f"{SAMPLES / 'shape_branch.py'}:ShapeBranch",
                    ScanOptions(input_shapes=["8,16"], vary_batch="2,4,16"),
                    GateOptions(max_recompiles=0), isolated=False)
    assert run.exit_code == 1
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    github = render_file_format([run], "github", single=True)
    errors = [line for line in github.splitlines() if "recompile" in line]
    assert errors and all(line.startswith("::error file=sample_models/shape_branch.py,line=")
                          for line in errors), github
    assert any("line=30," in line for line in errors)  # the guard's line: if x.shape[0] > 8
    monkeypatch.delenv("GITHUB_WORKSPACE")
    monkeypatch.chdir(ROOT)
    sarif = json.loads(render_file_format([run], "sarif", single=True))
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "recompile"]
    assert results and all(r["level"] == "error" for r in results)
    loc = results[-1]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "sample_models/shape_branch.py"


def test_github_paths_are_relative_to_the_workspace_from_anywhere(tmp_path):
    proc = run_cli(ITEM, "-s", "8,16", "-f", "github", cwd=tmp_path,
                   env={"GITHUB_WORKSPACE": str(ROOT)})
    assert "file=sample_models/item_logging.py,line=30," in proc.stdout, proc.stdout


def test_a_branch_on_a_shape_gets_one_consistent_message():
    """Lint, recompile check and --fix agree: two code paths need two graphs, and dynamic=True,
    shown not to help, is recommended nowhere."""
    model = FIXTURES / "models" / "fix_cases.py"
    proc = run_cli(f"{model}:WidthBranch", "-s", "8,16", "--shapes", "8,16", "--shapes", "8,32",
                   "--fix", *QUICK, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    report = doc["recompiles"]
    branch_line = [n for n, t in enumerate(model.read_text().splitlines(), 1)
                   if t.strip() == "if x.shape[1] == 16:"][0]
    assert report["recompiles"][0]["guard_lines"] == [f"{model}:{branch_line}"]
    assert report["dynamic_helps"] is False
    assert "two code paths need two graphs" in report["suggestion"]
    (finding,) = [f for f in doc["static"] if f["category"] == "shape_branch"]
    assert "dynamic=True does not remove it" in finding["message"]
    assert "use `dynamic=True`" not in finding["message"]
    assert not [f for f in doc["fixes"] if f["fix_id"] == "dynamic"]


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
