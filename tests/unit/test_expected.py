"""The zoo's expected counts (``breakscan/expected.py``) and the shards' result files
(``breakscan/runs/results.py``) on recorded results: every status, and hostile files refused
in one line."""

from __future__ import annotations

import copy
import json

import pytest

from breakscan.errors import UsageError
from breakscan.runs.expected import apply_expected, counts_of, judge, read_expected, update_command
from breakscan.model.jsondata import dumps
from breakscan.model.result import ModelRun, ShardEntry
from breakscan.runs.results import merge_results, read_results

from conftest import recorded_runs


@pytest.fixture
def run():
    """A real scan with a break (recorded: tests/fixtures/results/gate_runs.json)."""
    recorded = next(r for r in recorded_runs("gate_runs") if r.result and r.result.breaks)
    return ModelRun(target="model.py:Net", result=recorded.result)


def test_counts_are_what_the_summary_says(run):
    counts = counts_of(run)
    s = run.result.summary
    assert counts["ok"] is True
    assert (counts["graphs"], counts["root_breaks"]) == (s.graph_count, s.graph_break_count)


def test_each_status(run):
    now = counts_of(run)
    assert judge(run, dict(now), allow_improvements=False).status == "PASS"
    assert judge(run, None, allow_improvements=False).status == "NEW"
    worse = judge(run, {**now, "graphs": now["graphs"] - 1}, allow_improvements=False)
    assert (worse.status, worse.changes) == (
        "FAIL", [f"graphs {now['graphs'] - 1} -> {now['graphs']}"])
    better = judge(run, {**now, "graphs": now["graphs"] + 1}, allow_improvements=False)
    assert (better.status, better.fails_gate) == ("IMPROVED", True)
    assert judge(run, {**now, "graphs": now["graphs"] + 1},
                 allow_improvements=True).fails_gate is False
    # a count the file has and this run did not measure cannot pass
    unmeasured = judge(run, {**now, "kernels_per_call": 3}, allow_improvements=True)
    assert unmeasured.status == "FAIL" and "kernels_per_call not measured" in unmeasured.changes[0]
    failed = ModelRun(target="model.py:Net", result=None, error="load failed", exit_code=3)
    assert judge(failed, now, allow_improvements=False).status == "FAIL"
    assert judge(run, {"ok": False}, allow_improvements=False).status == "IMPROVED"


def test_missing_targets_become_failed_runs(run):
    runs = [run]
    document = {"breakscan_expected": 1, "targets": {"model.py:Net": counts_of(run),
                                                     "gone.py:Old": {"ok": True}}}
    apply_expected(runs, document, allow_improvements=False, complete=True)
    assert [(r.target, r.expected.status, r.exit_code) for r in runs] == [
        ("model.py:Net", "PASS", 0), ("gone.py:Old", "MISSING", 1)]
    one_shard = [copy.deepcopy(run)]
    apply_expected(one_shard, document, allow_improvements=False, complete=False)
    assert len(one_shard) == 1  # a shard does not know the others' targets


@pytest.mark.parametrize("text, says", [
    ("[1, 2]", "is not a breakscan expected-counts file"),
    ('{"breakscan_expected": 2, "targets": {}}', "is not a breakscan expected-counts file"),
    ('{"breakscan_expected": 1, "targets": {"a": {"ok": true, "graphs": "2"}}}', "entry of 'a'"),
    ('{"breakscan_expected": 1, "targets": {"a": {"ok": true, "evil": 1}}}', "entry of 'a'"),
    ('{"breakscan_expected": 1, "targets": {"a": {"ok": 1}}}', "entry of 'a'"),
    ("[" * 100000, "is not readable JSON"),
])
def test_a_hostile_expected_file_is_one_line(tmp_path, text, says):
    path = tmp_path / "zoo.json"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        read_expected(path)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_update_command_is_this_command_with_the_flag():
    assert update_command(["merge", "a b.json", "--allow-improvements", "--expected", "z.json"]) \
        == "breakscan merge 'a b.json' --expected z.json --update-expected"


def test_result_files_are_data_and_refused_in_one_line(tmp_path, run):
    good = dumps(ShardEntry(key="k", run=run)) + "\n"
    path = tmp_path / "s.json"
    path.write_text(good + '{"__dataclass__": "Frame", "fields": {}}\n')
    with pytest.raises(UsageError, match="line 2 is not a breakscan check --results entry"):
        read_results(path)
    path.write_text(good + '{"__dataclass__": "os.system", "fields": {"x": 1}}')  # cut short
    assert [e.run.target for e in read_results(path).entries] == ["model.py:Net"]
    path.write_text(json.dumps({"__dataclass__": "ShardEntry", "fields": {
        "key": "k", "run": "not a run"}}) + "\n")
    with pytest.raises(UsageError, match="line 1"):
        read_results(path)
    other = tmp_path / "t.json"
    other.write_text(good)
    with pytest.raises(UsageError, match="config does not list: model.py:Net"):
        merge_results([other], [])
    entries, notes = merge_results([other], ["model.py:Net"])
    assert [e.run.target for e in entries] == ["model.py:Net"] and notes == []


def _compiled(run, instructions, seconds):
    """The run as if scanned with --compile-time: a cold compile of one frame."""
    from breakscan.model.compile_time import CompileRun, CompileTime, FrameCompile

    frame = FrameCompile(compile_id="0/0", name="forward", file="model.py", line=1,
                         total_s=seconds)
    result = copy.deepcopy(run.result)
    result.compile_time = CompileTime(backend="inductor", cold=CompileRun(
        kind="cold", wall_s=seconds, frames=[frame], instructions=instructions))
    return ModelRun(target=run.target, result=result)


def test_the_cold_compiles_figures_are_counts_with_a_tolerance(run):
    """Instructions within 5 % and seconds within 50 % of the file's are unchanged; beyond,
    a rise fails and a fall is an improvement, like every count."""
    measured = _compiled(run, 1_000_000, 2.0)
    now = counts_of(measured)
    assert (now["compile_instructions"], now["compile_s"]) == (1_000_000, 2)
    same = judge(measured, {**now, "compile_instructions": 970_000, "compile_s": 3.5},
                 allow_improvements=False)
    assert same.status == "PASS", same.changes
    worse = judge(measured, {**now, "compile_instructions": 900_000},
                  allow_improvements=False)
    assert (worse.status, worse.changes) == ("FAIL", ["compile_instructions 900000 -> 1000000"])
    better = judge(measured, {**now, "compile_s": 5}, allow_improvements=False)
    assert (better.status, better.changes) == ("IMPROVED", ["compile_s 5 -> 2"])
    # a file with compile figures and a run without --compile-time: not measured, FAIL
    plain = judge(run, now, allow_improvements=False)
    assert plain.status == "FAIL" and "compile_instructions not measured" in plain.changes[0]


def test_a_compile_figures_change_names_the_dependencies_that_changed(run):
    """The file records torch, Python (and triton) when written; a compile figure that moved
    while one of them changed says so, so a torch upgrade is not read as the model's doing."""
    measured = _compiled(run, 2_000_000, 2.0)
    entry = {**counts_of(measured), "compile_instructions": 1_000_000}
    document = {"breakscan_expected": 1, "targets": {measured.target: entry},
                "dependencies": {"torch": "1.0.0", "python": "3.11.7"}}
    apply_expected([measured], document, allow_improvements=False, complete=True)
    (change,) = measured.expected.changes
    assert change.startswith("compile_instructions 1000000 -> 2000000 (torch 1.0.0 -> ")
    assert change.endswith(" since the file was written: the change may come from that)")
    assert "graphs" not in change and "python" not in change  # only what changed, only here


@pytest.mark.parametrize("deps", ['["torch"]', '{"torch": 2}'])
def test_an_expected_files_dependencies_are_names_and_versions(tmp_path, deps):
    path = tmp_path / "expected.json"
    path.write_text('{"breakscan_expected": 1, "targets": {}, "dependencies": ' + deps + "}")
    with pytest.raises(UsageError, match="dependencies must map names to version strings"):
        read_expected(path)


def test_the_compile_gate_reads_the_cold_compile_and_fails_what_it_could_not_measure(run):
    from breakscan.options import GateOptions
    from breakscan.runs.gate import evaluate

    measured = _compiled(run, None, 2.0).result  # the counter refused (no perf events)
    checks = {c.name: c for c in evaluate(measured, GateOptions(
        max_compile_time=3.0, max_compile_instructions=10**9)).checks}
    assert checks["max_compile_time"].passed and checks["max_compile_time"].actual == 2.0
    counter = checks["max_compile_instructions"]
    assert not counter.passed and "instruction counter is unavailable" in counter.detail
    slow = evaluate(measured, GateOptions(max_compile_time=1.5)).checks[-1]
    assert (slow.name, slow.passed) == ("max_compile_time", False)
    unmeasured = evaluate(run.result, GateOptions(max_compile_time=1.5)).checks[-1]
    assert not unmeasured.passed and unmeasured.detail == "not measured (run with --compile-time)"
    with pytest.raises(UsageError, match="max-compile-time must be a non-negative number"):
        GateOptions(max_compile_time=float("nan"))


def test_the_config_keys_turn_the_compile_time_on_and_gate_it():
    """[tool.breakscan]'s `compile-time`, `max-compile-time` and `max-compile-instructions`."""
    from breakscan.config import from_config

    scan, gate, _ = from_config({"compile-time": True}, target="m.py:M", where="t")
    assert scan.compile_time and not gate.active
    scan, gate, _ = from_config({"max-compile-time": 30, "max-compile-instructions": 10**10},
                                target="m.py:M", where="t")
    assert scan.compile_time and gate.needs_compile_time
    assert (gate.max_compile_time, gate.max_compile_instructions) == (30, 10**10)
    with pytest.raises(UsageError, match="max-compile-time takes a number, got \"slow\""):
        from_config({"max-compile-time": "slow"}, target="m.py:M", where="t")
    with pytest.raises(UsageError, match="max-compile-instructions takes an integer"):
        from_config({"max-compile-instructions": 1.5}, target="m.py:M", where="t")
