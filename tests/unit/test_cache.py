"""The result cache of ``breakscan check`` (cache.py) on a recorded real scan: an entry is data,
and a damaged one is a miss, never an error or another result."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from breakscan.runs.cache import ResultCache
from breakscan.options import ScanOptions

from conftest import recorded_runs


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A real cache entry of a real scan (recorded: tests/fixtures/results), and the cache it
    lives in."""
    run = recorded_runs("gate_runs")[0]
    target, result = run.target, run.result
    result.gate = None  # the cache keeps the ungated result
    folder = tmp_path_factory.mktemp("cache")
    options = ScanOptions(input_shapes=("8,16",))
    cache = ResultCache(folder)
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


def _forge(cache, target, options, result, *, key: str | None, monkeypatch):
    """Store ``result`` as the forger would: a changed result with a freshly computed checksum
    (the forger holding ``key``, or no key)."""
    with monkeypatch.context() as patch:
        if key is None:
            patch.delenv("BREAKSCAN_CACHE_KEY", raising=False)
        else:
            patch.setenv("BREAKSCAN_CACHE_KEY", key)
        cache.put(target, options, result)


def test_a_keyed_cache_refuses_an_entry_forged_without_its_key(tmp_path, monkeypatch):
    run = recorded_runs("gate_runs")[0]
    target, result = run.target, run.result
    result.gate = None
    options = ScanOptions(input_shapes=("8,16",))
    cache = ResultCache(tmp_path)
    forged = copy.deepcopy(result)
    forged.breaks = []  # what a forger wants the gate to see

    # Unkeyed, the checksum detects corruption only: a recomputed one is accepted (docs/ci.md).
    _forge(cache, target, options, forged, key=None, monkeypatch=monkeypatch)
    monkeypatch.delenv("BREAKSCAN_CACHE_KEY", raising=False)
    assert cache.get(target, options).breaks == []

    monkeypatch.setenv("BREAKSCAN_CACHE_KEY", "the CI secret")
    assert cache.get(target, options) is None  # made without the key
    _forge(cache, target, options, forged, key="a guess", monkeypatch=monkeypatch)
    assert cache.get(target, options) is None  # made with another key
    cache.put(target, options, result)
    assert cache.get(target, options) == result  # made with the key
