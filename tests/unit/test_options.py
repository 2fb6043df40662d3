"""Options: the parsers every command line goes through, and the config's baseline file.

Property-based tests (hypothesis) of the parsers, two properties each: well-formed text
round-trips, and *any* text either parses or raises a one-line UsageError — never another
exception, which would reach the user as a traceback.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from breakscan.errors import UsageError
from breakscan.target import parse_batches, parse_init_args, parse_shape, parse_target

settings.register_profile("breakscan", max_examples=300, deadline=None)
settings.load_profile("breakscan")

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)


def _one_line_usage_error(call, text):
    try:
        return call(text)
    except UsageError as exc:
        assert "\n" not in str(exc) and str(exc)
        return None


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=6),
       st.sampled_from([",", "x", ", ", " x ", "×"]), st.sampled_from(["{}", "({})", "[{}]"]))
def test_shapes_round_trip(dims, sep, wrap):
    assert parse_shape(wrap.format(sep.join(map(str, dims)))) == dims


@given(st.text())
def test_any_shape_text_parses_or_is_a_one_line_usage_error(text):
    dims = _one_line_usage_error(parse_shape, text)
    assert dims is None or all(isinstance(d, int) and d >= 0 for d in dims)


@given(st.text())
def test_any_batch_text_gives_positive_sizes_or_an_error(text):
    sizes = _one_line_usage_error(parse_batches, text)
    assert sizes is None or (sizes and all(s > 0 for s in sizes))


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=5))
def test_init_args_round_trip(kwargs):
    assert parse_init_args(json.dumps(kwargs)) == kwargs


@given(st.text())
def test_any_init_args_text_is_a_dict_or_a_one_line_usage_error(text):
    parsed = _one_line_usage_error(parse_init_args, text)
    assert parsed is None or isinstance(parsed, dict)


@given(st.lists(IDENT, min_size=0, max_size=3), IDENT, IDENT, st.none() | IDENT)
def test_file_targets_round_trip(folders, stem, name, method):
    path = "/".join([*folders, f"{stem}.py"])
    spec = parse_target(f"{path}:{name}" + (f".{method}" if method else ""))
    assert (spec.source, spec.is_file, spec.name, spec.method) == (path, True, name, method)


@given(st.lists(IDENT, min_size=1, max_size=4), IDENT)
def test_module_targets_round_trip(parts, name):
    module = ".".join(parts)
    spec = parse_target(f"{module}:{name}")
    assert (spec.source, spec.name, spec.method) == (module, name, None)


@given(st.text())
def test_any_target_text_parses_or_is_a_one_line_usage_error(text):
    spec = _one_line_usage_error(parse_target, text)
    assert spec is None or (spec.source and spec.name.isidentifier())


# -- the config's baseline file -------------------------------------------------------------------

@pytest.mark.parametrize("doc", [
    '{"targets": ["m.py:Net"]}',
    '{"targets": {"m.py:Net": "__import__(\'os\').system(\'true\')"}}',
    '{"targets": {"m.py:Net": {"breaks": [{"category": 1}]}}}',
    '{"targets": {"m.py:Net": {"breaks": "all", "graph_count": 1}}}',
    '{"targets": {"m.py:Net": {"graph_count": "many"}}}',
    '{"targets": {"m.py:Net": {"torch_version": 2.13}}}',
    '{"targets": {"m.py:Net": {"nested_graph_breaks": "yes"}}}',
    '{"targets": {"m.py:Net": {"dynamo_settings": ["capture_scalar_outputs"]}}}',
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


def test_a_baseline_from_another_torch_or_setting_is_compared_with_a_note():
    """Issue 35: each baseline entry carries torch's version and the settings that change
    counts; a run on another torch (or with nested_graph_breaks changed) says so once."""
    from breakscan.runs.gate import baseline_entry, evaluate
    from breakscan.options import GateOptions

    from conftest import recorded_runs

    result = recorded_runs("gate_runs")[0].result
    entry = baseline_entry(result, None)
    assert entry["torch_version"] == result.torch_version
    assert set(entry) >= {"dynamic", "nested_graph_breaks", "dynamo_settings"}
    evaluate(result, GateOptions(baseline=entry))
    assert not [n for n in result.notes if "baseline" in n]  # made the same way: no note
    older = dict(entry, torch_version="2.13.0+cpu", nested_graph_breaks=True)
    result.torch_version = "2.14.1+cu130"
    evaluate(result, GateOptions(baseline=older))
    evaluate(result, GateOptions(baseline=older))
    (note,) = [n for n in result.notes if "baseline" in n]
    assert "baseline from torch 2.13.0+cpu, this run 2.14.1+cu130" in note
    assert f"baseline nested_graph_breaks True, this run {entry['nested_graph_breaks']!r}" in note


def test_a_torch_the_suites_do_not_run_on_is_named_once():
    from breakscan.model.result import untested_torch_note

    assert untested_torch_note("2.13.0+cpu") is None and untested_torch_note("2.14.1") is None
    assert untested_torch_note("2.15.0+cu132") is None
    assert untested_torch_note("unknown") is None  # a trace that does not say
    note = untested_torch_note("2.16.0")
    assert note.startswith("breakscan is tested on torch 2.13, 2.14 and 2.15; this is torch 2.16.0")
