"""Issue 35: with `torch._dynamo.config.nested_graph_breaks` on, every sample's root causes,
lines and categories are what its docstring states for the default (off): a resume point (a
`for` or `with` line around a nested break) is never a root cause, one break site is one root.
Counts of graphs may differ (that is what the setting changes); the setting in force is
recorded in the result."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from breakscan import scan
from breakscan.options import ScanOptions

from conftest import SAMPLES, locate, sample_expectations

BROKEN = [e for e in sample_expectations()
          if e.facts.get("breaks", "0") != "0" and "compile_error" not in e.facts]


@pytest.mark.parametrize("expect", BROKEN, ids=str)
def test_nested_graph_breaks_keep_one_root_per_site(expect):
    facts = expect.facts
    result = scan(expect.target, ScanOptions(input_shapes=["8,16"], nested_graph_breaks=True))
    assert result.compile_settings["nested_graph_breaks"] is True
    assert result.dynamo_settings.get("nested_graph_breaks") is True
    if result.compile_error is not None:  # Dynamo itself fails with the setting: so says torch
        _assert_bare_compile_raises(expect, result.compile_error.exception)
        return
    file, line = locate(facts["break_at"], expect.file)
    assert len(result.breaks) == 1 + int(facts.get("consequences", "0")), \
        [(b.line, b.category, b.code) for b in result.breaks]
    root = result.breaks[0]
    # Dynamo may skip the frame with the setting where it did not without (HookOnce on 2.14):
    # the break's own family is the same
    family = root.cause_category if root.category == "frame_skipped" else root.category
    expected = facts.get("cause") if facts["category"] == "frame_skipped" else facts["category"]
    assert (root.file, root.line, family) == (str(file), line, expected)
    if "gb_id" in facts:
        assert root.gb_id == facts["gb_id"]
    assert all(b.gb_id for b in result.breaks)  # never a resume point taken from explain


def test_nested_graph_breaks_off_is_recorded_too():
    target = f"{SAMPLES / 'nested_break.py'}:NestedBreak"
    off = scan(target, ScanOptions(input_shapes=["8,16"], nested_graph_breaks=False))
    on = scan(target, ScanOptions(input_shapes=["8,16"], nested_graph_breaks=True))
    assert off.compile_settings["nested_graph_breaks"] is False
    # the break in the helper splits every enclosing frame only with the setting off
    assert (off.summary.graph_count, on.summary.graph_count) == (6, 2)
    assert (off.summary.eager_gaps_per_call, on.summary.eager_gaps_per_call) == (3.0, 1.0)
    assert [(b.line, b.category) for b in off.breaks] == [(b.line, b.category) for b in on.breaks]


def _assert_bare_compile_raises(expect, exception: str) -> None:
    """The sample compiled by hand (eager backend, nested_graph_breaks on) raises the same."""
    spec = importlib.util.spec_from_file_location(f"nested_{expect.name}", expect.file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = getattr(module, expect.name)().eval()
    torch._dynamo.reset()
    with torch._dynamo.config.patch(nested_graph_breaks=True), torch.no_grad(), \
            pytest.raises(Exception) as raised:
        torch.compile(model, backend="eager")(torch.randn(8, 16))
    torch._dynamo.reset()
    assert type(raised.value).__name__ == exception


@pytest.mark.parametrize("name, graphs", [("BranchInWithInLoop", 2), ("BranchInLoop", 4)])
@pytest.mark.parametrize("nested", [True, False])
def test_a_nested_break_in_a_loop_is_one_root_cause_with_its_true_count(name, graphs, nested):
    """Issue 46 §2: the `for` line Dynamo resumes at is context, never a root cause; the `if`
    is the one root cause, firing twice per call (two iterations), in both modes (2.16 turns
    nested graph breaks on by default: the counts mean the same)."""
    from conftest import FIXTURES

    target = f"{FIXTURES}/models/nested_in_loop.py:{name}"
    result = scan(target, ScanOptions(input_shapes=["8,16"], nested_graph_breaks=nested))
    assert result.compile_settings["nested_graph_breaks"] is nested
    (root,) = result.breaks
    assert root.code == "if x.sum() > 0:" and root.root_category == "data_dependent_branch"
    assert root.fires_per_call == 2.0
    assert result.summary.graph_count == graphs
