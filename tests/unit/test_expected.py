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
