"""Issue 42: the zoo's files are untrusted (a shard's results) or precious (the expected counts,
the durations, a user's own files). Real recorded scans (tests/fixtures/results) written through
the real ``ResultsLog``, then read back, forged, corrupted, locked, cut by a full disk.
Torch-free."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from breakscan.errors import UsageError
from breakscan.runs.expected import read_expected, summary_lines, write_expected, ZooVerdict
from breakscan.model.jsondata import dumps, loads
from breakscan.options import ScanOptions
from breakscan.report import render_file_format
from breakscan.report.terminal import console as literal_console
from breakscan.report.terminal import render_runs
from breakscan.model.result import ModelRun, ShardEntry
from breakscan.runs.shard import parse_shard, read_durations
from breakscan.runs.results import ResultsLog, gated_again, read_results

from conftest import RESULTS, recorded_runs

import conftest as _unit
ROOT = Path(_unit._shared.ROOT)
SECRET = "tok-4f1c-NEVER-SHOWN"
FORMATS = ("json", "junit", "sarif", "github", "markdown", "html")
OPTIONS = ScanOptions(input_shapes=("8,16",))


@pytest.fixture
def zoo(tmp_path):
    """A copy of the sample per_layer_branch.py in a project folder and the real recorded scan
    of it (a break at its line 22), its paths pointed at the copy."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "sample_models" / "per_layer_branch.py", project / "model.py")
    text = (RESULTS / "fix.json").read_text().replace(
        "{ROOT}/sample_models/per_layer_branch.py", str(project / "model.py"))
    (run,) = loads(text.replace("{ROOT}", str(ROOT)))
    run.target = "model.py:PerLayerBranch"
    run.result.fixes = []
    return project, run


def _record(path: Path, runs: list[ModelRun], **kwargs) -> ResultsLog:
    log = ResultsLog(path, resume=False, shard="1/1", **kwargs)
    log.start([])
    for run in runs:
        log.record(run.target, OPTIONS, run)
    log.close()
    return log


def _every_format(runs: list[ModelRun]) -> str:
    console = literal_console(width=120, file=io.StringIO(), record=True)
    render_runs(runs, console, verbose=True)
    return console.export_text() + "".join(render_file_format(runs, f, single=False)
                                           for f in FORMATS)


def test_a_read_back_result_is_shown_from_the_lines_it_carries(zoo, tmp_path, monkeypatch):
    project, run = zoo
    monkeypatch.chdir(project)
    _record(tmp_path / "s.json", [run])
    (project / "model.py").write_text("CHANGED_ON_THE_MERGE_MACHINE = 1\n" * 40)
    (read,) = read_results(tmp_path / "s.json").entries
    shown = _every_format([read.run])
    assert "if h.mean() > 10:" in shown  # the carried excerpt, in the terminal and the HTML
    assert "CHANGED_ON_THE_MERGE_MACHINE" not in shown
    assert read.run.result.sources[str(project / "model.py")].line_count == len((ROOT / "sample_models" / "per_layer_branch.py").read_text().splitlines())


def test_a_line_naming_other_files_shows_none_of_them(zoo, tmp_path, monkeypatch):
    """The security hole: a forged line naming /proc/self/environ and a private file (with
    roots and carried lines of its choosing) shows neither, in any format."""
    project, run = zoo
    monkeypatch.chdir(project)
    monkeypatch.setenv("BREAKSCAN_TEST_SECRET", SECRET)
    private = tmp_path / "private" / "keys.py"
    private.parent.mkdir()
    private.write_text("".join(f"key_{n} = '{SECRET}'\n" for n in range(30)))
    _record(tmp_path / "s.json", [run])
    line = json.loads((tmp_path / "s.json").read_text())
    result = line["fields"]["run"]["fields"]["result"]["fields"]
    brk = result["breaks"][0]["fields"]
    extra = [dict(brk, file="/proc/self/environ", line=1), dict(brk, file=str(private), line=3)]
    result["breaks"] += [{"__dataclass__": "RootBreak", "fields": b} for b in extra]
    result["graphs"][0]["fields"]["source_lines"] += [f"{private}:5", "/proc/self/environ:1"]
    result["source_roots"] = ["/"]
    result["sources"] = None
    (tmp_path / "forged.json").write_text(json.dumps(line) + "\n")
    (forged,) = read_results(tmp_path / "forged.json").entries
    shown = _every_format([forged.run])
    assert SECRET not in shown and "key_3" not in shown
    assert "HOME=" not in shown and "PATH=" not in shown


def test_the_results_file_never_replaces_a_user_file(zoo, tmp_path):
    project, run = zoo
    for name, text in [("helper.py", "def helper():\n    return 1\n"), ("NOTES.md", "# notes\n")]:
        path = project / name
        path.write_text(text)
        with pytest.raises(UsageError, match=f"refusing to write --results .*{name}"):
            ResultsLog(path, resume=False, shard=None)
        assert path.read_text() == text
    empty = project / "empty.json"
    empty.touch()
    _record(empty, [run])  # an empty file is no one's data
    _record(empty, [run])  # and a results file may be written again
    assert len(read_results(empty).entries) == 1


def test_two_runs_never_write_one_results_file(tmp_path):
    first = ResultsLog(tmp_path / "s.json", resume=False, shard="1/2")
    first.start([])
    second = ResultsLog(tmp_path / "s.json", resume=False, shard="2/2")
    with pytest.raises(UsageError, match="being written by another breakscan check"):
        second.start([])
    first.close()
    second.start([])  # once the first is done
    second.close()


def test_a_link_is_written_through_and_the_file_is_not_private(zoo, tmp_path):
    project, run = zoo
    artifact = tmp_path / "artifact.json"
    artifact.write_text("")
    link = tmp_path / "link.json"
    link.symlink_to(artifact)
    old = os.umask(0o022)
    try:
        _record(link, [run])
    finally:
        os.umask(old)
    assert link.is_symlink() and len(read_results(artifact).entries) == 1
    assert stat.S_IMODE(artifact.stat().st_mode) == 0o644


def test_resume_keeps_a_result_only_while_its_files_are_unchanged(zoo, tmp_path, monkeypatch):
    project, run = zoo
    monkeypatch.chdir(project)
    _record(tmp_path / "s.json", [run])
    kept = ResultsLog(tmp_path / "s.json", resume=True, shard=None)
    assert kept.reusable(run.target, OPTIONS) is not None
    assert kept.reusable(run.target, OPTIONS.but(input_shapes=("4,16",))) is None
    with open(project / "model.py", "a") as handle:
        handle.write("# edited\n")
    assert ResultsLog(tmp_path / "s.json", resume=True, shard=None).reusable(
        run.target, OPTIONS) is None


def test_a_merged_line_is_gated_again_and_its_options_checked(zoo, tmp_path, monkeypatch):
    from breakscan.runs.check import config_targets

    project, run = zoo
    monkeypatch.chdir(project)
    _record(tmp_path / "s.json", [run])
    line = json.loads((tmp_path / "s.json").read_text())
    fields = line["fields"]["run"]["fields"]
    fields["exit_code"] = 0
    fields["result"]["fields"]["summary"]["fields"]["graph_break_count"] = 99
    (tmp_path / "forged.json").write_text(json.dumps(line) + "\n")
    entries = read_results(tmp_path / "forged.json").entries
    section = {"targets": [{"target": run.target, "input-shape": ["8,16"], "max-breaks": 0}]}
    (gated,) = gated_again(entries, config_targets(section, "pyproject.toml"))
    assert gated.exit_code == 1 and not gated.result.gate.passed
    section["targets"][0]["input-shape"] = ["4,16"]
    with pytest.raises(UsageError, match=r"other scan options .*input_shapes: \['8,16'\], the "
                                         r"config gives \['4,16'\]"):
        gated_again(entries, config_targets(section, "pyproject.toml"))


@pytest.mark.parametrize("change, says", [
    (lambda f: f.update(target=["model.py:Net"]), "RunOrigin|ModelRun.target"),
    (lambda f: f.update(exit_code="0"), "ModelRun.exit_code"),
    (lambda f: f["origin"]["fields"].update(torch=2.13), "RunOrigin.torch"),
    (lambda f: f.update(exit_code=7), "exit_code 7"),
    (lambda f: f.update(seconds={"__float__": "nan"}), "seconds nan"),
    (lambda f: f["result"]["fields"]["summary"]["fields"].update(
        graph_calls_per_call={"__float__": "nan"}), "graph_calls_per_call nan"),
    (lambda f: f["result"]["fields"]["summary"]["fields"].update(graph_count=-1),
     "graph_count -1"),
    (lambda f: f["result"]["fields"]["summary"]["fields"].update(graph_count=1.5),
     "Summary.graph_count"),
])
def test_an_ill_typed_line_is_one_line_naming_it(zoo, tmp_path, change, says):
    project, run = zoo
    _record(tmp_path / "s.json", [run])
    line = json.loads((tmp_path / "s.json").read_text())
    change(line["fields"]["run"]["fields"])
    (tmp_path / "bad.json").write_text(json.dumps(line) + "\n" + "\n")
    with pytest.raises(UsageError, match=f"line 1 is not a breakscan check --results entry "
                                         f"\\(.*({says})"):
        read_results(tmp_path / "bad.json")


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_corrupted_line_is_refused_in_one_line_or_read_whole(zoo, tmp_path, data):
    """Any JSON value put anywhere in a real line: a UsageError, or entries whose every field
    has its type. Never another exception."""
    project, run = zoo
    path = tmp_path / "s.json"
    if not path.exists():
        _record(path, [run])
    line = json.loads(path.read_text())
    nodes = [line]
    for node in nodes:  # every dict and list in the line, breadth first
        children = node.values() if isinstance(node, dict) else node
        nodes += [c for c in children if isinstance(c, (dict, list))]
    target = data.draw(st.sampled_from([n for n in nodes if isinstance(n, dict) and n]))
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = data.draw(st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                    max_size=3), max_leaves=6))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(line) + "\n")
    try:
        entries = read_results(bad).entries
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    for entry in entries:
        assert isinstance(entry.run.target, str) and isinstance(entry.run.exit_code, int)


def _expected(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "expected.json"
    path.write_text('{"breakscan_expected": 1, "targets": {"a": {"ok": true, "graphs": '
                    + body + "}}}")
    return path


@pytest.mark.parametrize("count", ["NaN", "Infinity", "-Infinity", "1e999", "-1", "true",
                                   "9" * 401, '"2"'])
def test_an_expected_count_is_a_finite_non_negative_number(tmp_path, count):
    with pytest.raises(UsageError) as caught:
        read_expected(_expected(tmp_path, count))
    assert "\n" not in str(caught.value)


def test_an_expected_file_s_torch_version_is_text(tmp_path):
    path = tmp_path / "e.json"
    path.write_text('{"breakscan_expected": 1, "torch_version": ["2.13"], "targets": {}}')
    with pytest.raises(UsageError, match="torch_version must be a version string"):
        read_expected(path)


def test_expected_counts_are_written_only_from_a_run_that_scanned_every_target(zoo, tmp_path):
    project, run = zoo
    path = tmp_path / "expected.json"
    committed = ('{"breakscan_expected": 1, "note": "reviewed", "targets": {"model.py:Net": '
                 '{"ok": true, "graphs": 3}}}')
    path.write_text(committed)
    refused = ModelRun(target="typo.py:Net", result=None, exit_code=2, error="bad input-shape")
    interrupted = ModelRun(target="b.py:Net", result=None, exit_code=143, error="interrupted")
    for others in ([refused], [interrupted]):
        with pytest.raises(UsageError, match="left unchanged: 1 target"):
            write_expected(path, [run, *others])
        assert path.read_text() == committed
    write_expected(path, [run])
    document = json.loads(path.read_text())
    assert document["note"] == "reviewed" and list(document["targets"]) == [run.target]
    user = tmp_path / "package.json"
    user.write_text('{"name": "mine"}')
    with pytest.raises(UsageError, match="refusing to rewrite"):
        write_expected(user, [run])
    assert user.read_text() == '{"name": "mine"}'
    with pytest.raises(UsageError, match="cannot write --expected"):
        write_expected(tmp_path / "missing" / "e.json", [run])
    with pytest.raises(UsageError, match="refusing to rewrite|cannot write"):
        write_expected(tmp_path, [run])


def test_a_failing_shard_points_to_the_merge_that_can_update(zoo):
    project, run = zoo
    run.expected = None
    from breakscan.runs.expected import apply_expected

    verdict = apply_expected([run], {"targets": {}}, allow_improvements=False, complete=False)
    lines = summary_lines([run], verdict, "e.json", ["check", "--shard", "1/2", "--expected",
                                                      "e.json"], sharded=True)
    assert lines[-1] == ("update the expected counts: breakscan merge --expected e.json "
                         "--update-expected RESULTS... (every shard's --results file)")


@pytest.mark.parametrize("text", ["²/3", "1/²", "١/2"])
def test_a_shard_is_ascii_digits(text):
    with pytest.raises(UsageError, match="--shard takes K/N"):
        parse_shard(text, {})


def test_a_job_index_is_ascii_digits():
    with pytest.raises(UsageError, match="not a task index"):
        parse_shard("env/3", {"JOB_COMPLETION_INDEX": "¹"})


def test_special_files_are_never_read_as_data(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for read in (read_results, read_expected, read_durations):
        for path in (fifo, Path("/dev/zero"), tmp_path):
            with pytest.raises(UsageError, match="not a regular file|a folder"):
                read(path)


def test_a_results_file_under_a_file_is_one_line(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(UsageError, match="does not exist or is not a folder"):
        ResultsLog(tmp_path / "plain" / "s.json", resume=False, shard=None)


FULL_DISK = textwrap.dedent("""
    import json, resource, signal, sys
    from pathlib import Path
    sys.path[:0] = [{tests!r}, {unit!r}]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    from breakscan.model.jsondata import loads
    from breakscan.options import ScanOptions
    from breakscan.runs.results import ResultsLog
    run = loads(Path({line!r}).read_text()).run
    log = ResultsLog(Path({out!r}), resume=False, shard=None)
    log.start([])
    for n in range(4):
        run.target = f"model{{n}}.py:Net"
        log.record(run.target, None, run)
        if n == 0:  # room for one line and a half more
            size = Path({out!r}).stat().st_size
            resource.setrlimit(resource.RLIMIT_FSIZE, (int(size * 2.5), resource.RLIM_INFINITY))
    print(log.failed)
""")


def test_a_full_disk_keeps_whole_lines_and_says_so(zoo, tmp_path):
    """The real write path under a file-size limit (what a full disk does to a write: it
    fails part-way): two lines fit, the third is taken back, the fourth is not tried."""
    project, run = zoo
    _record(tmp_path / "one.json", [run])
    script = FULL_DISK.format(tests=str(ROOT / "tests"), unit=str(ROOT / "tests" / "unit"),
                              line=str(tmp_path / "entry.json"), out=str(tmp_path / "s.json"))
    (tmp_path / "entry.json").write_text(
        dumps(read_results(tmp_path / "one.json").entries[0]))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"cannot write --results {tmp_path / 's.json'}: File too "
                                  "large (it keeps the lines of the targets written before)")
    data = (tmp_path / "s.json").read_bytes()
    assert data.endswith(b"\n") and [e.run.target for e in read_results(
        tmp_path / "s.json").entries] == ["model0.py:Net", "model1.py:Net"]
