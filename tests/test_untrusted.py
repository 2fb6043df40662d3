"""Safe with untrusted input (issue 22): the cache, child results and the user's own files.

What breakscan reads back (a restored cache, the isolated child's result) is parsed as data,
never unpickled; a report never replaces a file the scan reads; ``--fix --write`` keeps the
user's file as it was apart from the rewritten lines.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from breakscan import scan
from breakscan.cache import ResultCache
from breakscan.errors import UsageError
from breakscan.fixes.write import write_fixes
from breakscan.jsondata import DataError, dumps, loads
from breakscan.options import ScanOptions
from breakscan.verdicts import Fix

from conftest import FIXTURES as FIXTURES_DIR, SAMPLES, run_cli

TARGET = "tensor_branch.py:TensorIf"


class _Payload:
    """Unpickling this creates the file named in ``path``: proof that code ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _project(tmp_path):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [tool.breakscan]
        [[tool.breakscan.targets]]
        target = "{TARGET}"
        input-shape = ["8,16"]
        max-breaks = 0
    """))
    return tmp_path


# -- 1. no code runs from data ------------------------------------------------------------------

def test_a_crafted_cache_never_runs_code_nor_passes_the_gate(tmp_path):
    folder = _project(tmp_path)
    first = run_cli("check", "-f", "json", cwd=folder)
    assert first.returncode == 1  # TensorIf breaks: max-breaks 0 fails
    cache = folder / ".breakscan_cache"
    (entry,) = cache.glob("*.json")
    marker = tmp_path / "code-ran"
    # An old-style pickle entry under the same key, and a forged JSON entry: no file hashes,
    # no breaks (as a cache restored from another branch could hold).
    (cache / entry.name.replace(".json", ".pkl")).write_bytes(pickle.dumps(_Payload(str(marker))))
    doc = json.loads(entry.read_text())
    doc["__dict__"] = [[k, {} if k == "files" else v] for k, v in doc["__dict__"]]
    entry.write_text(json.dumps(doc))
    again = run_cli("check", "-f", "json", cwd=folder)
    assert not marker.exists()
    assert again.returncode == 1, again.stdout  # rescanned: the break is still there
    (model,) = json.loads(again.stdout)["models"]
    assert model["cached"] is False and model["result"]["summary"]["graph_break_count"] == 1


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A real cache entry of a real scan, and the cache it lives in."""
    folder = tmp_path_factory.mktemp("cache")
    shutil.copy(SAMPLES / "tensor_branch.py", folder / "tensor_branch.py")
    target = f"{folder / 'tensor_branch.py'}:TensorIf"
    options = ScanOptions(input_shapes=("8,16",))
    cache = ResultCache(folder)
    result = scan(target, options)
    cache.put(target, options, result)
    (entry,) = cache.folder.glob("*.json")
    return cache, target, options, entry, entry.read_bytes(), result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_cache_entry_is_a_miss_or_the_same_result(stored, data):
    cache, target, options, entry, original, result = stored
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(original) - 1),
                                         st.integers(0, 255)), min_size=1, max_size=4))
    mutated = bytearray(original)
    for at, byte in flips:
        mutated[at] = byte
    cut = data.draw(st.sampled_from([len(mutated), len(mutated) // 2, 0]))
    entry.write_bytes(bytes(mutated[:cut]))
    try:
        got = cache.get(target, options)  # never raises
        assert got is None or got == result
    finally:
        entry.write_bytes(original)
    assert cache.get(target, options) == result


def test_the_data_format_builds_only_result_records():
    for text in ('{"__dataclass__": "os.system", "fields": {}}',
                 '{"__dataclass__": "Frame", "fields": {"file": "a", "line": 1, "x": 2}}',
                 '{"__dataclass__": "Frame", "fields": {"file": "a"}}',
                 '{"py/object": "subprocess.Popen"}', "[" * 100_000, "1" * 5000, "\x80abc"):
        with pytest.raises(DataError):
            loads(text)
    frame = loads('{"__dataclass__": "Frame", "fields": {"file": "a", "line": 1, '
                  '"function": "f"}}')
    assert (frame.file, frame.line, frame.function) == ("a", 1, "f")
    assert loads(dumps({"k": [1.5, float("inf"), None]})) == {"k": [1.5, float("inf"), None]}


def test_the_parent_parses_the_childs_result_and_never_unpickles_it(tmp_path):
    from breakscan.process.isolate import _outcome, _read_partial

    marker = tmp_path / "code-ran"
    (tmp_path / "result.pkl").write_bytes(pickle.dumps(_Payload(str(marker))))
    (tmp_path / "result.json").write_bytes(pickle.dumps(_Payload(str(marker))))
    assert _read_partial(tmp_path) is None and not marker.exists()
    # A finished job whose result is data of another kind: refused with a one-line error.
    (tmp_path / "result.json").write_text(dumps([1, 2]))
    (tmp_path / "events.jsonl").write_text('{"stage": "explain"}\n{"done": true}\n')
    (tmp_path / "stderr").write_text("")
    run = _outcome("m.py:M", tmp_path, 0, timed_out=False, timeout=None, seconds=1.0)
    assert run.result is None and run.exit_code == 3
    assert run.error == "the scan process returned a list, not a result (during explain)"


# -- 2. never destroy or corrupt a user file ------------------------------------------------------

@pytest.mark.parametrize("flag", ["-o", "--html", "--write-baseline"])
def test_a_report_never_replaces_the_models_own_file(tmp_path, flag):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    before = model.read_bytes()
    args = ["-f", "json"] if flag == "-o" else []
    proc = run_cli(f"{model}:TensorIf", "-s", "8,16", *args, flag, str(model))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"breakscan: error: refusing to write {flag} {model}: it is "
                                   f"{model}, a file the scan reads; name another file")
    assert model.read_bytes() == before


def test_a_report_never_replaces_a_source_file_the_scan_loaded(tmp_path):
    """nested_break.py imports its helper from nested_helpers.py: that file is read too."""
    for name in ("nested_break.py", "nested_helpers.py"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    helper = tmp_path / "nested_helpers.py"
    before = helper.read_bytes()
    proc = run_cli(f"{tmp_path / 'nested_break.py'}:NestedBreak", "-s", "8,16", "-f", "json",
                   "-o", str(helper))
    assert proc.returncode == 2 and "a file the scan reads" in proc.stderr
    assert helper.read_bytes() == before


def test_check_never_replaces_its_config(tmp_path):
    folder = _project(tmp_path)
    before = (folder / "pyproject.toml").read_bytes()
    proc = run_cli("check", "-f", "json", "-o", "pyproject.toml", cwd=folder)
    assert proc.returncode == 2 and "refusing to write -o pyproject.toml" in proc.stderr
    assert (folder / "pyproject.toml").read_bytes() == before


SOURCE = ('import torch\r\nfrom torch import nn\r\n\r\n\r\nclass M(nn.Module):\r\n'
          '    def forward(self, x):\r\n        h = x * 2\r\n        print("h", h)\r\n'
          '        return h\r\n')


def _guard_fix(path, **extra) -> Fix:
    return Fix(rule="BS003", fix_id="print_guard", kind="source", title="guard",
               category="print", file=str(path), line=8, verified=True, **extra)


def test_write_keeps_line_ends_bom_mode_and_hard_links(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    os.chmod(path, 0o600)
    link = tmp_path / "linked.py"
    os.link(path, link)
    (fix,) = [_guard_fix(path)]
    write_fixes([fix])
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\n" not in data.replace(b"\r\n", b"")
    assert b"        if not torch.compiler.is_compiling():\r\n            print(\"h\", h)\r\n" \
        in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and link.read_bytes() == data
    assert fix.written and open(fix.backup, "rb").read() == b"\xef\xbb\xbf" + SOURCE.encode()


def test_write_refuses_a_file_changed_since_the_scan_or_read_only(tmp_path):
    import hashlib

    path = tmp_path / "m.py"
    path.write_text(SOURCE.replace("\r\n", "\n"))
    planned = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text("# a line added after the scan\n" + SOURCE.replace("\r\n", "\n"))
    with pytest.raises(UsageError, match="it changed since the scan verified the fix"):
        write_fixes([_guard_fix(path, source_sha256=planned)])
    assert not list(tmp_path.glob("*.bak"))
    path.write_text(SOURCE.replace("\r\n", "\n"))
    os.chmod(path, 0o444)  # refused by its mode, even for root
    with pytest.raises(UsageError, match="the file is read-only"):
        write_fixes([_guard_fix(path)])
    assert path.read_text() == SOURCE.replace("\r\n", "\n")


def test_write_into_a_read_only_folder_is_a_one_line_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.py"
    path.write_text(SOURCE.replace("\r\n", "\n"))
    os.chmod(folder, 0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write read-only folders (root)")
        with pytest.raises(UsageError, match="cannot write .*m.py or its backup"):
            write_fixes([_guard_fix(path)])
    finally:
        os.chmod(folder, 0o755)


# -- 3. traces are untrusted files ----------------------------------------------------------------

RECORDED = next((FIXTURES_DIR / "traces").glob("*/*.log"))


def test_a_trace_folder_reads_regular_files_only(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    os.mkfifo(folder / "rank_1_fifo.log")  # would hang a reader
    (folder / "rank_2_zero.log").symlink_to("/dev/zero")  # would grow without end
    (folder / "rank_3_dir.log").mkdir()
    (folder / "rank_4_broken.log").symlink_to(tmp_path / "missing")
    proc = run_cli("trace", str(folder), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"breakscan: error: {folder} holds no trace file (*.log) (skipped: rank_1_fifo.log (a "
        "FIFO), rank_2_zero.log (a device), rank_3_dir.log (a directory), rank_4_broken.log "
        "(a broken link)): run the job with TORCH_TRACE=<folder> first")
    shutil.copy(RECORDED, folder / "rank_0.log")
    proc = run_cli("trace", str(folder), "-f", "json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    notes = json.loads(proc.stdout)["notes"]
    assert "skipped (not regular files): rank_1_fifo.log (a FIFO), rank_2_zero.log (a device), " \
        "rank_3_dir.log (a directory), rank_4_broken.log (a broken link)" in notes


@pytest.mark.parametrize("text", ["", "not a trace\n", "\n\n"])
def test_a_trace_with_no_records_is_a_usage_error_not_a_pass(tmp_path, text):
    (tmp_path / "rank_0.log").write_text(text)
    proc = run_cli("trace", str(tmp_path), "--max-breaks", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"breakscan: error: no TORCH_TRACE records in {tmp_path}"


def test_a_trace_shows_source_only_of_python_files_under_the_source_root(tmp_path):
    from breakscan.frames import source_allowed, source_line, sources_within

    secret = tmp_path / "credentials"
    secret.write_text("token = hunter2\n" * 200)
    os.mkfifo(tmp_path / "pipe.py")
    code = tmp_path / "model.py"
    code.write_text("x = 1\n")
    with sources_within([str(tmp_path)]):
        assert source_line(str(secret), 1) == ""  # not a Python file
        assert not source_allowed(str(tmp_path / "pipe.py"))  # never opened: no hang
        assert source_line(str(code), 1) == "x = 1\n"
    with sources_within([str(tmp_path / "elsewhere")]):
        assert source_line(str(code), 1) == ""  # outside the root
    # A recorded trace whose break names a non-Python file: its lines never reach the report.
    trace = tmp_path / "rank_0.log"
    text = RECORDED.read_text()
    (break_file,) = {part.split('"')[0] for part in text.split('File "')[1:]
                     if part.split('"')[0].endswith("trace_step.py")}
    trace.write_text(text.replace(break_file, str(secret)))
    for fmt in ("terminal", "html"):
        proc = run_cli("trace", str(trace), "--source-root", str(tmp_path), "-f", fmt,
                       env={"COLUMNS": "200"})
        assert proc.returncode == 0, proc.stderr
        assert "hunter2" not in proc.stdout


def _mutations():
    lines = RECORDED.read_text().splitlines(keepends=True)
    return st.lists(st.tuples(st.integers(0, len(lines) - 1), st.sampled_from([
        "drop", "cut", "not-object", "huge-int", "wrong-types", "garbage", "deep"])),
        min_size=1, max_size=6).map(lambda edits: (lines, edits))


@settings(max_examples=80, deadline=None)
@given(case=_mutations())
def test_a_mutated_real_trace_is_read_or_refused_never_a_traceback(case, tmp_path_factory):
    from breakscan.trace.ranks import trace_report

    lines, edits = case
    lines = list(lines)
    prefix = "V1121 19:55:07.077000 2823 torch/_dynamo/convert_frame.py:1] "
    for at, how in edits:
        if how == "drop":
            lines[at] = ""
        elif how == "cut":
            lines[at] = lines[at][: len(lines[at]) // 2]
        elif how == "not-object":
            lines[at] = prefix + '[1, 2, "compilation_metrics"]\n'
        elif how == "huge-int":
            lines[at] = prefix + '{"frame_id": ' + "9" * 5000 + "}\n"
        elif how == "wrong-types":
            lines[at] = prefix + ('{"compilation_metrics": {"co_firstlineno": "x", '
                                  '"co_name": 5, "fail_user_frame_lineno": [1]}, "frame_id": '
                                  '"a", "frame_compile_id": null}\n')
        elif how == "garbage":
            lines[at] = "\x00\x1b[31m\udcff\n".encode("utf-8", "surrogateescape").decode(
                "utf-8", "replace")
        else:
            lines[at] = prefix + "[" * 50_000 + "\n"
    folder = tmp_path_factory.mktemp("trace")
    (folder / "rank_0.log").write_text("".join(lines), encoding="utf-8", errors="replace")
    try:
        result = trace_report(folder)
    except UsageError:
        return
    assert result.summary.graph_count >= 0


# -- 4. reports that consumers can always read ------------------------------------------------------

NASTY = ["line\nbreak", "::error::injected", "%0A", "]]>", "<script>x</script>", "nul\x00",
         "esc\x1b[31m", "lone\ud800surrogate", "x" * 1_000_000]


@pytest.fixture(scope="module")
def nasty_runs():
    """A real scan whose every model-made string is hostile."""
    from breakscan.result import ModelRun

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    brk = result.breaks[0]
    brk.code, brk.suggestion, brk.gb_type = NASTY[0] + NASTY[4], " ".join(NASTY), NASTY[5]
    brk.file = str(SAMPLES / "odd dir" / "m\n%0A]]>.py")
    result.model_output = "".join(NASTY)
    result.target = "m.py:" + NASTY[1] + NASTY[6]
    failed = ModelRun(target="bad" + NASTY[5], result=None, error=" ".join(NASTY), exit_code=3)
    return [ModelRun(target=result.target, result=result), failed]


def test_junit_stays_well_formed_xml(nasty_runs):
    import xml.etree.ElementTree as ET

    from breakscan.report.junit import to_junit

    root = ET.fromstring(to_junit(nasty_runs).encode())
    text = ET.tostring(root, encoding="unicode")
    assert "\\x00" in text and "\\x1b" in text and "\x1b" not in text


def test_github_annotations_cannot_be_forged_or_split(nasty_runs):
    from breakscan.report.github import to_github, to_markdown

    lines = to_github(nasty_runs).splitlines()
    assert lines and all(line.startswith("::") for line in lines)
    assert all("\x00" not in line and "\x1b" not in line for line in lines)
    assert sum(line.startswith("::error::injected") for line in lines) == 0
    markdown = to_markdown(nasty_runs)
    assert "\x00" not in markdown and "\x1b" not in markdown and "\ud800" not in markdown
    assert "&lt;script&gt;" in markdown  # prose: no HTML reaches the page
    # code stays code: literal inside its span, which no backtick of the text can end
    assert markdown.count("<script>") == 1 and "`line break<script>x</script>`" in markdown


def test_sarif_and_json_stay_parseable_with_encoded_uris(nasty_runs):
    from breakscan.report import render_file_format

    sarif = json.loads(render_file_format(nasty_runs, "sarif", single=False))
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in sarif["runs"][0]["results"] for loc in r.get("locations", [])]
    assert uris and all(" " not in u and "\n" not in u and "%250A" in u for u in uris)
    json.loads(render_file_format(nasty_runs, "json", single=False))
    json.loads(render_file_format(nasty_runs[:1], "json", single=True))


def test_run_to_stdout_in_a_file_format_keeps_the_programs_output_out(tmp_path):
    program = tmp_path / "noisy.py"
    program.write_text('import torch\nprint("::error::from the program")\n'
                       'f = torch.compile(lambda x: x * 2, backend="eager")\n'
                       'print(f(torch.ones(2)).sum().item())\n')
    for fmt in ("json", "github"):
        proc = run_cli("run", "-f", fmt, str(program))
        assert proc.returncode == 0, proc.stderr
        assert "::error::from the program" in proc.stderr
        assert "from the program" not in proc.stdout
        if fmt == "json":
            json.loads(proc.stdout)


# -- 5. errors and exits that mean what the README says --------------------------------------------

def test_an_internal_error_is_exit_4_in_one_line(monkeypatch, capsys):
    import breakscan.options as options
    from breakscan.cli import main

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(options.ScanOptions, "check", broken)
    with pytest.raises(SystemExit) as ended:
        main([f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16"])
    assert ended.value.code == 4
    err = capsys.readouterr().err.strip()
    assert err == ("breakscan: error: internal error in breakscan: KeyError: 'a bug' (please "
                   "report it; --debug shows the traceback)")


@pytest.mark.parametrize("config, message", [
    ('[[tool.breakscan.targets]]\ntarget = 5\n', "'target' must be a string"),
    ('[[tool.breakscan.targets]]\ntarget = "m.py:M"\ninput-shape = [[4, 4]]\n',
     "a value of the wrong type"),
    ('', "tool.breakscan must be a table"),
])
def test_wrong_types_in_the_config_are_usage_errors(tmp_path, config, message):
    text = "[tool]\nbreakscan = 5\n" if not config else "[tool.breakscan]\n" + config
    (tmp_path / "pyproject.toml").write_text(text)
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "m.py")
    proc = run_cli("check", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_dynamic_at_the_top_of_the_config_is_a_default(tmp_path):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.breakscan]\ndynamic = true\n[[tool.breakscan.targets]]\n'
        'target = "tensor_branch.py:TensorIf"\ninput-shape = ["8,16"]\n')
    proc = run_cli("check", "-f", "json", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (model,) = json.loads(proc.stdout)["models"]
    assert model["result"]["compile_settings"]["dynamic"] is True


def test_pathological_init_args_are_a_usage_error():
    proc = run_cli(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16", "--init-args",
                   "[" * 50_000 + "]" * 50_000)
    assert proc.returncode == 2 and "nested too deep" in proc.stderr


def test_a_closed_pipe_ends_quietly_not_with_the_gates_code():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "breakscan",
                             f"{SAMPLES / 'per_layer_branch.py'}:PerLayerBranch", "-s", "8,16"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and err == ""


def test_the_parent_reads_only_the_end_of_a_huge_stderr(tmp_path):
    from breakscan.process.isolate import TAIL_BYTES, _tail

    (tmp_path / "stderr").write_bytes(b"x" * (20 * 1024 * 1024) + b"\nthe end\n")
    text = _tail(tmp_path / "stderr")
    assert len(text) == TAIL_BYTES and text.endswith("the end\n")


def test_a_killed_breakscan_takes_its_child_along_and_leaves_no_folder(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from breakscan.process.isolate import _remove_stale_work

    env = dict(os.environ, TMPDIR=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-m", "breakscan",
                               f"{FIXTURES_DIR / 'models' / 'misbehaving.py'}:HangsOnNewBatch",
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
    _remove_stale_work(str(tmp_path))
    assert not list(tmp_path.glob("breakscan-*"))  # ...which a later run removes


# -- 6. rough edges a new user hit ------------------------------------------------------------------

def test_a_timeout_names_the_users_line_never_the_standard_librarys(tmp_path):
    from breakscan.process.isolate import user_line_from_stack

    import runpy
    import threading
    import traceback

    model = str(tmp_path / "model.py")
    dump = ("Thread 0x00007f (most recent call first):\n"
            f'  File "{threading.__file__}", line 320 in wait\n\n'
            "Current thread 0x00007e (most recent call first):\n"
            f'  File "{traceback.__file__}", line 364 in _get_code_position\n'
            f'  File "{model}", line 20 in forward\n'
            f'  File "{runpy.__file__}", line 88 in _run_code\n')
    assert user_line_from_stack(dump) == f" at {model}:20 in forward"
    only_stdlib = dump.replace(f'  File "{model}", line 20 in forward\n', "")
    assert user_line_from_stack(only_stdlib) == " (no line of your code was on the stack)"


def test_tables_say_what_was_not_measured_and_what_was_cached():
    import io

    from breakscan.report.html import to_html
    from breakscan.report.terminal import console, render_runs
    from breakscan.result import ModelRun

    runs = [ModelRun(target=f"t{k}", result=scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf",
                                                 input_shapes=["8,16"]), cached=bool(k))
            for k in range(2)]
    out = console(file=io.StringIO(), width=100)
    render_runs(runs, out, quiet=True)
    table = out.file.getvalue().split("breakscan check")[1]
    assert "no gate (cached)" in table and " 0 " not in table.split("\n", 3)[3]
    assert "│ -          │" in table  # recompiles: never varied
    assert "no gate (cached)" in to_html(runs)


def test_gate_details_use_the_paths_the_report_uses():
    from breakscan.gate import evaluate
    from breakscan.options import GateOptions

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    (check,) = evaluate(result, GateOptions(max_breaks=0)).checks
    assert "at sample_models/tensor_branch.py:24 " in check.detail


def test_rule_ids_and_fix_names_are_never_cut_mid_word():
    import io

    from breakscan.report.terminal import console, render_rule_list
    from breakscan.rules import CATALOGUE

    out = console(file=io.StringIO(), width=100)
    render_rule_list(CATALOGUE, out)
    text = out.file.getvalue()
    for word in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops", "BS012",
                 "constant-in-tensor"):
        assert word in text, word


def test_a_guard_failure_is_listed_once():
    from breakscan.analysis.recompiles import parse_recompile_message

    text = ("Recompiling function forward in /m.py:12\n    triggered by the following guard "
            "failure(s):\n    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4\n"
            "    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4\n")
    rec = parse_recompile_message(text)
    assert rec is not None and rec.reasons == [
        "tensor 'x' size mismatch at index 0. expected 8, actual 4"]


def test_no_none_leaks_into_text():
    from breakscan.fixes.judge import judge
    from breakscan.result import FixedScan
    from breakscan.verdicts import Correctness, FixMetrics

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    before = FixMetrics(graph_count=2, breaks=1, recompiles=None, compiled_s=None, speedup=None,
                        graph_calls_per_call=2.0, eager_gaps_per_call=1.0)
    fix = Fix(rule="BS002", fix_id="x", kind="setting", title="t", category="item",
              before=before)
    judge(fix, FixedScan(result=result, same_outputs=Correctness(True, 0.0, None)),
          dynamic=False)
    assert fix.status == "no effect" and "None" not in fix.reason
    proc = run_cli("trace", str(RECORDED.parent), env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "None" not in proc.stdout and "explain reason" not in proc.stdout


def test_standalone_lint_claims_no_scan(tmp_path):
    model = tmp_path / "m.py"
    model.write_text("import numpy as np\nimport torch\nfrom torch import nn\n\n\n"
                     "class M(nn.Module):\n    def forward(self, x):\n"
                     "        return x * np.cos(1.0)\n")
    proc = run_cli("lint", str(model))
    assert "(a scan tells)" in proc.stdout and "the scan confirms" not in proc.stdout


def test_the_cache_is_invalidated_by_an_edited_inputs_file(tmp_path):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "inp.py").write_text("import torch\n\ndef make():\n"
                                     "    return (torch.ones(8, 16),)\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.breakscan]\n[[tool.breakscan.targets]]\ntarget = "tensor_branch.py:TensorIf"\n'
        'inputs = "inp.py:make"\n')
    first = run_cli("check", "-f", "json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "inp.py").write_text("import torch\n\ndef make():\n"
                                     "    return (torch.zeros(8, 16),)\n")
    again = run_cli("check", "-f", "json", cwd=tmp_path)
    (model,) = json.loads(again.stdout)["models"]
    assert model["cached"] is False


def test_a_report_into_a_pipe_through_dev_stdout():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m breakscan trace {RECORDED} -f json -o "
                          "/dev/stdout | cat", shell=True, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "cannot write" not in proc.stderr
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout)  # then the summary lines
    assert doc["schema_version"] and "wrote /dev/stdout" in proc.stdout


def test_compare_never_replaces_a_models_file(tmp_path):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    before = model.read_bytes()
    proc = run_cli("compare", f"{model}:TensorIf", f"{model}:TensorWhere", "-s", "8,16",
                   "-f", "json", "-o", str(model))
    assert proc.returncode == 2 and "a file the scan reads" in proc.stderr
    assert model.read_bytes() == before


@pytest.mark.parametrize("doc", [
    '{"targets": ["m.py:Net"]}',
    '{"targets": {"m.py:Net": "__import__(\'os\').system(\'true\')"}}',
    '{"targets": {"m.py:Net": {"breaks": [{"category": 1}]}}}',
    '{"targets": {"m.py:Net": {"breaks": "all", "graph_count": 1}}}',
    '{"targets": {"m.py:Net": {"graph_count": "many"}}}',
])
def test_a_hostile_baseline_entry_is_a_one_line_usage_error(tmp_path, doc):
    """A baseline comes from a pull request or a restored cache: an entry that is not what
    --write-baseline writes is refused with one line (exit 2), never a crash in the gate."""
    from breakscan.errors import UsageError
    from breakscan.config import gate_options

    path = tmp_path / "baseline.json"
    path.write_text(doc)
    with pytest.raises(UsageError) as raised:
        gate_options(baseline=str(path), target="m.py:Net")
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
