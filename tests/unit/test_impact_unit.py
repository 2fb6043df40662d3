"""Impact settings without a scan: the graph-calls gate as a config key."""

from __future__ import annotations


def test_max_graph_calls_is_a_config_key_with_the_flags_checks():
    import pytest

    from breakscan.errors import UsageError
    from breakscan.config import from_config

    _, gate, _ = from_config({"max-graph-calls": 1}, target="m.py:Net", where="pyproject.toml")
    assert gate.max_graph_calls == 1 and gate.active
    with pytest.raises(UsageError, match="max-graph-calls must be a non-negative integer"):
        from_config({"max-graph-calls": -1}, target="m.py:Net", where="pyproject.toml")
