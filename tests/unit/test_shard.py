"""Issue 36: `breakscan check --shard K/N` splits a zoo the way CI matrices do (torch-free)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from breakscan.errors import UsageError
from breakscan.runs.shard import parse_shard, read_durations, split


@given(st.lists(st.text(min_size=1, max_size=8), max_size=40), st.integers(1, 7))
def test_every_target_lands_in_exactly_one_shard(targets, total):
    shards = [split(targets, k, total) for k in range(1, total + 1)]
    assert sorted(t for shard in shards for t in shard) == sorted(set(targets))
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1  # contiguous slices, as even as they can be


def test_slices_are_sorted_and_deterministic():
    names = [f"m{i:02}.py:Net" for i in range(10)]
    assert split(list(reversed(names)), 1, 3) == names[:4]
    assert split(names, 2, 3) == names[4:7] and split(names, 3, 3) == names[7:]
    assert split(names[:2], 3, 3) == []  # a shard with nothing to do


def test_durations_balance_the_slowest_shard_near_the_mean():
    # an uneven zoo: a few heavy models, many light ones
    durations = {f"t{i:02}": (60.0 if i < 3 else 5.0 + i % 4) for i in range(30)}
    loads = [sum(durations[t] for t in split(list(durations), k, 4, durations))
             for k in range(1, 5)]
    mean = sum(loads) / 4
    assert max(loads) <= 1.25 * mean, loads
    naive = [sum(durations[t] for t in split(list(durations), k, 4)) for k in range(1, 5)]
    assert max(naive) > max(loads)  # what the durations buy
    # a target the file does not know counts as the mean, and still lands somewhere once
    merged = [t for k in range(1, 5) for t in split([*durations, "new"], k, 4, durations)]
    assert sorted(merged) == sorted([*durations, "new"])


@pytest.mark.parametrize("text, env, expected", [
    ("2/4", {}, (2, 4)),
    ("env/4", {"JOB_COMPLETION_INDEX": "0"}, (1, 4)),
    ("env/4", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5"}, (3, 4)),
    ("env/3", {"JOB_COMPLETION_INDEX": "2", "SLURM_ARRAY_TASK_ID": "0"}, (3, 3)),
])
def test_the_shard_comes_from_the_flag_or_the_job_arrays_index(text, env, expected):
    assert parse_shard(text, env) == expected


@pytest.mark.parametrize("text, env", [
    ("0/4", {}), ("5/4", {}), ("2", {}), ("a/b", {}), ("2/0", {}), ("env/4", {}),
    ("env/4", {"JOB_COMPLETION_INDEX": "x"}), ("env/2", {"JOB_COMPLETION_INDEX": "2"}),
])
def test_a_bad_shard_is_one_line(text, env):
    with pytest.raises(UsageError) as raised:
        parse_shard(text, env)
    assert "\n" not in str(raised.value) and "--shard" in str(raised.value)


def test_a_durations_file_is_data(tmp_path):
    path = tmp_path / "durations.json"
    assert read_durations(path) == {}
    path.write_text(json.dumps({"a": 1.5, "e": 2}))
    assert read_durations(path) == {"a": 1.5, "e": 2.0}
    # Issue 42: a value that is not a duration is refused, never silently dropped (a rewrite
    # would lose it): a string, a bool, a negative, NaN, Infinity, 401 digits
    for bad in ('"__import__(\'os\')"', "true", "-1", "NaN", "Infinity", "1e999", "9" * 401):
        path.write_text('{"a": 1.5, "b": ' + bad + "}")
        with pytest.raises(UsageError, match="'b'|not a duration|is not a durations file"):
            read_durations(path)
    path.write_text("[1, 2]")
    with pytest.raises(UsageError):
        read_durations(path)
