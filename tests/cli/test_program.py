"""`breakscan run`: whole programs, run unchanged, with every compiled region counted.

Each test runs the real CLI on a real program (the sample training loop and small programs in
tests/fixtures/programs) and checks exact facts: regions, calls, graph calls, fires, recompiles
and how the program ended. `--capture-only` keeps them fast (eager backend); one test keeps the
user's own backend. The Python API's run in the test's own process
(`breakscan.run_program`) is in tests/scan/test_program_scan.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (FIXTURES, ROOT, SAMPLES, ctrl_c_reaches_it, locate, program_expectations,
                      run_cli, shown)

PROGRAMS = FIXTURES / "programs"
ECHO = PROGRAMS / "echo_program.py"


def _report(path: Path) -> dict:
    data = json.loads(path.read_text())  # an unfinished run: {"exit_code", "error", "result"}
    return data["result"] if "exit_code" in data else data


def _line(file: Path, text: str) -> int:
    return locate(text, file)[1]


@pytest.mark.parametrize("program,facts", program_expectations(),
                         ids=[p.name for p, _ in program_expectations()])
def test_sample_program_matches_its_docstring(tmp_path, program, facts):
    out = tmp_path / "run.json"
    args = facts["args"].split()
    proc = run_cli("run", "--capture-only", "-f", "json", "-o", str(out), str(program), *args)
    assert proc.returncode == 0, proc.stderr
    assert "loss" in proc.stdout  # the program's own output goes through
    report = _report(out)
    program_section, summary = report["program"], report["summary"]
    assert program_section["exit_code"] == 0 and program_section["capture_only"] is True
    assert program_section["command"] == ["python", str(program), *args]
    assert len(program_section["regions"]) == int(facts["regions"])
    region = program_section["regions"][0]
    assert region["kind"] == "module"
    assert region["calls"] == int(facts["calls"])
    compile_line = next(i for i, text in enumerate(program.read_text().splitlines(), 1)
                        if text.strip().startswith("compiled = torch.compile(model"))
    assert region["compiled_at"]["line"] == compile_line
    assert summary["graph_count"] == int(facts["graphs"])
    assert summary["graph_break_count"] == int(facts["breaks"])
    for key in ("graph_calls_per_call", "eager_gaps_per_call", "frames_run_eagerly_per_call"):
        if key in facts:
            assert summary[key] == float(facts[key]), key
    assert region["graph_calls"] == round(int(facts["calls"]) *
                                          float(facts["graph_calls_per_call"]))
    assert summary["recompile_count"] == int(facts["recompiles"])
    if "limit_hit" in facts:  # the frame that hit the recompile limit, then ran eagerly
        (hit,) = report["recompiles"]["limit_hits"]
        assert hit.startswith(f"{facts['limit_hit']} ({program}:")
        assert "(GB0039)" in report["recompiles"]["suggestion"]
        assert "allow_unspec_int_on_nn_module" in report["recompiles"]["suggestion"]
    if "break_at" in facts:
        brk = report["breaks"][0]
        assert brk["line"] == _line(program, facts["break_at"])
        assert brk["fires"] == int(facts["fires"])
        assert brk["fires_per_call"] == float(facts["fires_per_call"])
        # The last, smaller batch recompiles the model's frame; the report names the guard and
        # the program's line whose call recompiled.
        last = [r for r in report["recompiles"]["recompiles"]
                if facts["last_batch_guard"] in r["reasons"]]
        assert last and last[0]["function"] == "forward"
        call = _line(program, "loss = F.mse_loss(compiled(x), y)")
        assert any(f["line"] == call for f in last[0]["called_from"])


def test_fixed_twin_has_no_breaks_and_no_recompiles_and_gates_clean(tmp_path):
    bad = SAMPLES / "train_loop.py"
    fixed = SAMPLES / "train_loop_fixed.py"
    gate = ("--max-breaks", "0", "--max-recompiles", "0", "--max-graph-calls", "1")
    failed = run_cli("run", "--capture-only", "-q", *gate, str(bad))
    assert failed.returncode == 1, failed.stderr
    assert "FAIL: max_breaks 1 > limit 0; max_recompiles 7 > limit 0; max_graph_calls 12 > " \
        "limit 1" in failed.stdout
    passed = run_cli("run", "--capture-only", "-q", *gate, str(fixed))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "root-cause breaks 0" in passed.stdout and "recompiles 0" in passed.stdout


def test_program_runs_unchanged(tmp_path):
    """Its own argv (flags after the script, `--` kept for it), __main__, cwd, environment,
    stdin, sys.path[0] and stdout are what `python echo_program.py ...` gives it."""
    proc = run_cli("run", "--capture-only", str(ECHO), "--calls", "2", "--", "x", "--y",
                   cwd=PROGRAMS, env={"BS_PROGRAM_VAR": "kept"}, input="from stdin\n")
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[0])
    seen.pop("pid")
    assert seen == {"argv": [str(ECHO), "--calls", "2", "--", "x", "--y"], "name": "__main__",
                    "cwd": str(PROGRAMS), "env": "kept", "stdin": "from stdin",
                    "path0": str(PROGRAMS)}
    assert proc.stdout.splitlines().count("inside step") == 2
    assert "program: exit 0 · 1 compiled region" in proc.stdout


def test_quiet_keeps_the_program_output_in_the_report(tmp_path):
    out = tmp_path / "run.json"
    proc = run_cli("run", "--capture-only", "-q", "-f", "json", "-o", str(out), str(ECHO),
                   "--calls", "2")
    assert proc.returncode == 0, proc.stderr
    assert "inside step" not in proc.stdout
    report = _report(out)
    assert report["model_output"].count("inside step") == 2
    brk = report["breaks"][0]
    assert (brk["line"], brk["fires"], brk["fires_per_call"]) == \
        (_line(ECHO, 'print("inside step")  # the break: fires once per call'), 2, 1.0)
    assert report["program"]["regions"][0]["name"] == "step"


def test_module_form(tmp_path):
    proc = run_cli("run", "-m", "progpkg.serve", "--port", "0", "--max-requests", "3",
                   cwd=PROGRAMS)
    assert proc.returncode == 0, proc.stderr
    assert f"argv0={PROGRAMS / 'progpkg' / 'serve.py'} name=__main__ port=0" in proc.stdout
    assert "python -m progpkg.serve --port 0 --max-requests 3" in proc.stdout
    assert "root-cause breaks 1" in proc.stdout
    missing = run_cli("run", "-m", "progpkg.nothing_here", cwd=PROGRAMS)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"breakscan: error: -m progpkg.nothing_here: no such module from {PROGRAMS}; run from "
        "the folder that holds it, or install it (pip install -e .)"]


def test_two_models_and_one_function_are_three_regions(tmp_path):
    out = tmp_path / "run.json"
    proc = run_cli("run", "-f", "json", "-o", str(out), str(PROGRAMS / "three_regions.py"))
    assert proc.returncode == 0, proc.stderr
    regions = {r["name"]: r for r in _report(out)["program"]["regions"]}
    assert set(regions) == {"Encoder", "Decoder", "score"}
    counts = {name: (r["calls"], r["graph_calls"], r["eager_gaps"])
              for name, r in regions.items()}
    # Encoder: 2 graphs around its print, 3 calls; Decoder (model.compile()): 1 graph, 2 calls;
    # score: 3 graphs around its two prints, 4 calls.
    assert counts == {"Encoder": (3, 6, 3), "Decoder": (2, 2, 0), "score": (4, 12, 8)}
    three = PROGRAMS / "three_regions.py"
    assert regions["Decoder"]["compiled_at"]["line"] == _line(three,
                                                              'decoder.compile(backend="eager")')
    fires = {b["code"]: (b["fires"], b["fires_per_call"]) for b in _report(out)["breaks"]}
    assert fires['print("encoded")  # one break per call'] == (3, 1.0)
    assert fires['print("scored")  # two breaks per call'] == (4, 1.0)


def test_user_backend_is_kept_unless_capture_only():
    program = PROGRAMS / "custom_backend.py"
    kept = run_cli("run", str(program))
    assert "my_backend compiled 1 graph(s)" in kept.stdout
    assert "capture-only" not in kept.stdout
    swapped = run_cli("run", "--capture-only", str(program))
    assert "my_backend compiled 0 graph(s)" in swapped.stdout
    assert "--capture-only (eager backend)" in swapped.stdout
    assert 'swapped for "eager"' in swapped.stdout


def test_compiled_optimizer_step_break_counts_and_says_it_is_torchs():
    program = PROGRAMS / "compiled_optimizer.py"
    proc = run_cli("run", "-f", "json", str(program))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    brk = report["breaks"][0]
    assert (brk["category"], brk["line"], brk["fires"]) == \
        ("explicit_break", _line(program, "optimizer.step()"), 3)
    assert "torch itself calls `torch._dynamo.graph_break()`" in brk["suggestion"]


def test_program_that_raises_is_a_partial_report_with_exit_3(tmp_path):
    out = tmp_path / "run.json"
    proc = run_cli("run", "--capture-only", "-f", "json", "-o", str(out), str(ECHO),
                   "--raise-error")
    assert proc.returncode == 3
    line = _line(ECHO, 'raise ValueError("the program\'s own failure")')
    assert proc.stderr.strip().splitlines()[-1] == (
        f"breakscan: error: the program raised ValueError: the program's own failure at "
        f"{shown(ECHO)}:{line} in main")
    assert "Traceback" in proc.stderr  # the program's own traceback, as Python prints it
    report = _report(out)
    assert report["partial"] is True and report["program"]["exit_code"] == 1
    assert report["breaks"][0]["fires"] == 3  # what ran before the failure is reported


def test_program_exit_status_is_reported(tmp_path):
    proc = run_cli("run", "--capture-only", "-q", str(ECHO), "--exit", "4")
    assert proc.returncode == 3
    assert proc.stderr.strip() == "breakscan: error: the program exited with status 4"
    assert "program: exit 4" in proc.stdout and "PARTIAL REPORT" in proc.stdout


def test_hanging_program_times_out_with_its_partial_report(tmp_path):
    out = tmp_path / "run.json"
    proc = run_cli("run", "--capture-only", "--timeout", "15", "-f", "json", "-o", str(out),
                   str(ECHO), "--hang")
    assert proc.returncode == 3, proc.stderr
    sleep = _line(ECHO, "time.sleep(0.1)")
    assert proc.stderr.strip().splitlines()[-1] == (
        f"breakscan: error: timed out after 15 s during program at {shown(ECHO)}:{sleep} in main; the "
        "program may hang (raise --timeout if it is just slow)")
    report = _report(out)
    assert report["partial"] is True and report["program"]["exit_code"] is None
    assert report["breaks"][0]["fires"] == 3 and report["program"]["regions"][0]["calls"] == 3


def test_interrupted_program_reports_what_it_compiled():
    """Ctrl-C (SIGINT to breakscan): exit 130, the partial report, no process left behind."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    env["PYTHONFAULTHANDLER"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "breakscan", "run", "--capture-only",
                             str(ECHO), "--hang"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, preexec_fn=ctrl_c_reaches_it)
    deadline = time.monotonic() + 120
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.strip() == "ready" or not line:
            break
    assert lines[-1].strip() == "ready", "".join(lines)
    program_pid = json.loads(lines[0])["pid"]
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # a hang: its stack (PYTHONFAULTHANDLER), then fail
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"breakscan did not end within 60 s of SIGINT:\n{err}")
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "breakscan: interrupted (SIGINT) during program"
    assert "PARTIAL REPORT" in out and "root-cause breaks 1" in out
    with pytest.raises(ProcessLookupError):  # the program's process is gone
        os.kill(program_pid, 0)


def test_every_reporter_and_the_baseline(tmp_path):
    """File formats written for a program run, and its baseline: three runs (a run writes one
    format plus ``--html``). Every format goes through the same writer, and each format's
    contents are checked on a recorded program result in tests/unit/test_reports.py."""
    program = str(SAMPLES / "train_loop.py")
    base = tmp_path / "base.json"
    outputs = {fmt: tmp_path / f"run.{fmt}" for fmt in ("json", "sarif", "markdown", "html")}
    first = run_cli("run", "--capture-only", "-f", "json", "-o", str(outputs["json"]), "--html",
                    str(outputs["html"]), "--max-breaks", "0", "--write-baseline", str(base),
                    program)
    assert first.returncode == 1 and base.exists(), first.stderr
    same = run_cli("run", "--capture-only", "-f", "sarif", "-o", str(outputs["sarif"]),
                   "--baseline", str(base), program)
    assert same.returncode == 0, same.stderr
    proc = run_cli("run", "--capture-only", "-f", "markdown", "-o", str(outputs["markdown"]),
                   "--max-breaks", "0", program)
    assert proc.returncode == 1, proc.stderr
    text = {fmt: path.read_text() for fmt, path in outputs.items()}
    assert json.loads(text["json"])["program"]["regions"][0]["calls"] == 5
    sarif = json.loads(text["sarif"])
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"][
        "startLine"] == _line(SAMPLES / "train_loop.py", "if not torch.isfinite(h).all():")
    assert "train_loop.py" in text["markdown"] and "Compiled regions" in text["markdown"]
    assert "Compiled regions" in text["html"] and "<script src=" not in text["html"]


@pytest.mark.parametrize("args,message", [
    (("run",), "give a script (breakscan run train.py ...) or a module (breakscan run -m "
               "pkg.module ...)"),
    (("run", "no_such_program.py"), "no_such_program.py: no such file"),
    (("run", "-m", "not a module"), "-m not a module: not a module name (e.g. mypkg.train)"),
    (("run", "sample_models"), "sample_models is not a file (for a package, use -m "
                               "sample_models from its parent folder)"),
])
def test_bad_program_arguments_are_one_line_errors(args, message):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"breakscan: error: {message}"]


def test_breaks_in_a_compiled_backward_pass_count():
    """With compiled autograd the backward pass is compiled (its regions are the backward
    graphs); a gradient hook's `.item()` + print breaks there: twice per backward (two returns
    to Python on that line), 6 times over 3 steps; `loss.backward()` itself breaks the forward
    region once per step."""
    program = PROGRAMS / "compiled_backward.py"
    proc = run_cli("run", "-q", "-f", "json", str(program))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    regions = [(r["name"], r["calls"]) for r in report["program"]["regions"]]
    assert regions[0] == ("train_step", 3)
    assert [name for name, _ in regions[1:]] and \
        all(name.startswith("CompiledAutograd") for name, _ in regions[1:])
    assert sum(calls for _, calls in regions[1:]) == 3  # one backward graph call per step
    fires = {(b["line"], b["gb_id"]): b["fires"] for b in report["breaks"]
             if b["file"] == str(program)}
    hook = _line(program, 'print("grad norm", grad.norm().item())  # breaks inside the '
                          'compiled backward')
    # The hook's line holds two breaks, the .item() and the print: two entries; the resume
    # functions at that line (one code identity) count for the first.
    assert fires == {(hook, "GB0124"): 6, (hook, "GB0059"): None,
                     (_line(program, "loss.backward()"), "GB0123"): 3}


def test_a_recompile_names_the_shape_branch_that_set_its_guard():
    """Dynamo's guard text names no line ("size mismatch at index 0"); the branch on the size in
    the recompiled function does, and the program's call that passed the new size."""
    program = PROGRAMS / "shape_guard.py"
    proc = run_cli("run", "-f", "json", str(program))
    assert proc.returncode == 0, proc.stderr
    recompiles = json.loads(proc.stdout)["recompiles"]
    [rec] = recompiles["recompiles"]
    branch = _line(program, "if x.shape[0] == 8:  # the guard the recompile fails")
    assert rec["reasons"] == ["tensor 'x' size mismatch at index 0. expected 8, actual 4"]
    assert rec["guard_lines"] == [f"{program}:{branch}"]
    assert [f["line"] for f in rec["called_from"]] == [_line(program,
                                                             "model(torch.ones(batch, 4))")]
    assert f"comes from {program}:{branch}: a Python branch on a size" in recompiles["suggestion"]
