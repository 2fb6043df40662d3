"""Every fix that is no source rewrite (settings, switches, constants, dynamic) against a
fixture pair (issue 43): ``tests/fixtures/offers/<fix id>.json`` holds a scan result where
``--fix`` tries it (``offer``) and one where it must not (``refuse``), each saying why. The
source fixes have theirs in tests/fixtures/rewrite/ (test_source_fixes.py); together every
fix of the registry has both.

The results are stand-ins with the fields planning reads (planning never runs torch); the
scans that verify these fixes end to end are in tests/scan/ and the slow suite.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from breakscan.fixes.plan import plan_fixes
from breakscan.rules.catalogue import all_fixes

from conftest import FIXTURES

HERE = FIXTURES / "offers"
CASES = {json.loads(p.read_text())["fix"]: p for p in sorted(HERE.glob("*.json"))}
MODEL = "import torch\n\n\ndef f(x):\n    return x\n"


def _frame(file: str, function: str = "", line: int = 1, code: str = "") -> SimpleNamespace:
    return SimpleNamespace(file=file, function=function, line=line, code=code)


def _break(raw: dict, model: str) -> SimpleNamespace:
    folder = model.rpartition("/")[0]
    file = raw.get("file", model)
    file = file if file.startswith("/") else f"{folder}/{file}"  # a file the case wrote
    user = raw.get("user_frame")
    return SimpleNamespace(
        root_category=raw["category"], file=file, line=raw["line"],
        function=raw.get("function", "f"), owner=raw.get("owner", "user"), sites=[],
        call_chain=[_frame(c[0] if c[0].startswith("/") else f"{folder}/{c[0]}", c[1], c[2])
                    for c in raw.get("chain", [])],
        user_frame=_frame(model, "forward", user["line"], user["code"]) if user else None,
        hints=[], type="", explanation="", gb_id=None, message="", code=raw.get("code", ""),
        calls=raw.get("calls", "every"),
        constants=[SimpleNamespace(file=model, kind="buffer", value=1, code="", instances=1, **c)
                   for c in raw.get("constants", [])])


def _planned(case: dict, tmp_path) -> list[str]:
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    for name, text in case.get("files", {}).items():  # the library code the breaks are in
        (tmp_path / name).write_text(text)
    summary = SimpleNamespace(graph_count=2, graph_break_count=len(case["breaks"]),
                              graph_calls_per_call=2, eager_gaps_per_call=1,
                              frames_run_eagerly_per_call=0, kernels_per_call=None)
    rec = case.get("recompiles")
    recompiles = None if rec is None else SimpleNamespace(
        recompiles=[object()] * rec["count"], dynamic_helps=rec["dynamic_helps"],
        dynamic_recompile_count=rec["count"])
    result = SimpleNamespace(breaks=[_break(b, str(model)) for b in case["breaks"]],
                             kernel_findings=[], recompiles=recompiles, timings=None, graphs=[],
                             summary=summary, compile_settings=case.get("compile_settings", {}),
                             dynamo_settings=case.get("dynamo_settings", {}), method="forward",
                             inputs=[SimpleNamespace(kind="tensor", **i)
                                     for i in case.get("inputs", [])],
                             repeated_blocks=[SimpleNamespace(**b)
                                              for b in case.get("repeated_blocks", [])])
    return [p.fix.fix_id for p in plan_fixes(f"{model}:Net", result)]


def test_every_fix_that_is_no_rewrite_has_a_pair():
    assert set(CASES) == {f.id for f in all_fixes() if f.kind != "source"}
    for fix in all_fixes():
        assert fix.kind == "source" or fix.offered, fix.id  # docs/rules.md says when


@pytest.mark.parametrize("fix_id", sorted(CASES))
def test_offered(fix_id, tmp_path):
    case = json.loads(CASES[fix_id].read_text())["offer"]
    assert case["why"]
    assert fix_id in _planned(case, tmp_path), case["why"]


@pytest.mark.parametrize("fix_id", sorted(CASES))
def test_not_offered(fix_id, tmp_path):
    case = json.loads(CASES[fix_id].read_text())["refuse"]
    assert case["why"]
    assert fix_id not in _planned(case, tmp_path), case["why"]


class _Sizes:
    """Anything with ``tolist()`` (a unit test imports no torch; the slow suite passes
    LLaVA-NeXT's real tensor)."""

    def tolist(self) -> list:
        return [[8, 16]]


def test_an_input_form_converts_the_named_inputs_and_crosses_the_boundary():
    from breakscan.fixes.input_forms import as_lists
    from breakscan.rules.model import Switch

    x = object()
    args, kwargs = as_lists((x, _Sizes()), {"ids": _Sizes()}, ("sizes", "ids"), ["x", "sizes"])
    assert args == (x, [[8, 16]]) and kwargs == {"ids": [[8, 16]]}
    with pytest.raises(KeyError):
        as_lists((), {}, ("image_sizes",), ["x"])
    switch = Switch(as_list=("image_sizes",))
    assert Switch.from_json(json.loads(json.dumps(switch.to_json()))) == switch


def test_switches_on_the_path_are_searched_nearest_guard_first(tmp_path):
    """Issue 45 §3: the guard that encloses the break comes before one that only guards an
    assignment feeding it, whatever their names (the cap once kept the alphabetical first)."""
    from breakscan.fixes.switches import search

    model = tmp_path / "m.py"
    model.write_text("class M:\n    def forward(self, x):\n        if self.a_first:\n"
                     "            y = x * 2\n        else:\n            y = x\n"
                     "        v = y.sum()\n        if self.b_flag:\n            return v.item()\n"
                     "        return v\n")
    brk = SimpleNamespace(file=str(model), line=9, sites=[], call_chain=[])
    found = search([brk])
    assert [(s.attr, s.depth) for s in found] == [("b_flag", 0), ("a_first", 1)]


def test_a_fix_with_no_gain_says_where_the_break_moved():
    """Issue 45 §2: a setting with NO EFFECT on the count, the break now at another line."""
    from breakscan.fixes.verify import moved_breaks

    def brk(line, category="item"):
        return SimpleNamespace(file="m.py", line=line, root_category=category)

    before = SimpleNamespace(breaks=[brk(12)])
    after = SimpleNamespace(breaks=[brk(30, "dynamic_shape_op")])
    fix = SimpleNamespace(kind="setting", status="no effect")
    assert moved_breaks(before, after, fix) == "the break moved: m.py:12 → m.py:30 " \
        "(dynamic_shape_op)"
    assert moved_breaks(before, before, fix) is None  # still there: nothing moved
    assert moved_breaks(before, after, SimpleNamespace(kind="setting", status="verified")) is None
    assert moved_breaks(before, after, SimpleNamespace(kind="source", status="no effect")) is None


def test_recompiles_of_a_fix_say_which_input_sets_they_count():
    """Issue 45 §2: "recompiles 1 → 0" under --vary-batch counts only the sizes run."""
    from breakscan.report.wording import fixes_baseline

    fix = SimpleNamespace(random=False, baseline_error=None,
                          before=SimpleNamespace(recompiles=1))
    assert fixes_baseline([fix], None, [[[2, 16]], [[4, 16]], [[16, 16]]]) == [
        "recompiles are counted over the 3 input set(s) run (2,16; 4,16; 16,16): other shapes "
        "may compile again"]
    assert fixes_baseline([fix], None, None) == []
    unmeasured = SimpleNamespace(random=False, baseline_error=None,
                                 before=SimpleNamespace(recompiles=None))
    assert fixes_baseline([unmeasured], None, [[[2, 16]]]) == []
