"""The result cache of ``breakscan check`` (cache.py) on a recorded real scan: an entry is data,
and a damaged one is a miss, never an error or another result."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from breakscan.cache import ResultCache
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
