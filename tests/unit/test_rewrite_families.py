"""Issue 34's source fixes (guard a side effect, a disabled region, graph_break() removed, sort
and draw with torch, while_loop) against fixture pairs, TorchFix style.

tests/fixtures/rewrite/families/<case>.in.py marks the line with ``# rewrite: <fix id>``; the
rewrite must equal <case>.out.py byte for byte; <case>.refuse.py carries ``# refuse: <part of
the reason>``. Also: which refusals are quiet (``matched``) and how --fix plans them
(tests/scan/test_fixes_34.py runs them end to end under real torch).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from breakscan.fixes.plan import _plan_settings, _plan_user_sources, plan_fixes
from breakscan.fixes.gain import Change
from breakscan.fixes.rewrite import unified_diff
from breakscan.fixes.source_fixes import propose_rewrite
from breakscan.rules.catalogue import FIXES, fixes_for, rule_for_fix
from breakscan.model.verdicts import FixMetrics

from conftest import FIXTURES

HERE = FIXTURES / "rewrite" / "families"
PAIRS = sorted(p.name[: -len(".in.py")] for p in HERE.glob("*.in.py"))
REFUSALS = sorted(p.name[: -len(".refuse.py")] for p in HERE.glob("*.refuse.py"))
# The source fixes of issue 34, whose fixtures live in families/.
ISSUE_34_FIXES = {"guard_side_effect", "disable_region", "remove_graph_break", "sorted_stack",
                  "torch_rng", "while_loop"}


def marker(source: str) -> tuple[int, str]:
    hits = [(i, m.group(1)) for i, text in enumerate(source.splitlines(), 1)
            if (m := re.search(r"# rewrite: (\w+)", text))]
    assert len(hits) == 1, hits
    return hits[0]


def test_every_fix_has_pairs_and_refusals():
    used = {marker((HERE / f"{c}.in.py").read_text())[1] for c in PAIRS}
    refused = {marker((HERE / f"{c}.refuse.py").read_text())[1] for c in REFUSALS}
    assert used == refused == ISSUE_34_FIXES


@pytest.mark.parametrize("case", PAIRS)
def test_fixture_pair(case):
    src = (HERE / f"{case}.in.py").read_text()
    expected = (HERE / f"{case}.out.py").read_text()
    line, fix_id = marker(src)
    rw = propose_rewrite(src, line, fix_id)
    assert rw.refused is None, rw.refused
    assert rw.title and "\n" not in rw.title
    assert rw.new_source == expected, unified_diff(expected, rw.new_source or "", case)
    # with a break's category too (the category does not matter for these fix ids)
    assert propose_rewrite(src, line, fix_id, category="other").new_source == expected


@pytest.mark.parametrize("case", REFUSALS)
def test_fixture_refusal(case):
    src = (HERE / f"{case}.refuse.py").read_text()
    line, fix_id = marker(src)
    want = re.search(r"# refuse: (.+)", src).group(1).strip()
    rw = propose_rewrite(src, line, fix_id)
    assert rw.new_source is None
    assert rw.refused and want in rw.refused and "\n" not in rw.refused, rw.refused


@pytest.mark.parametrize("fix_id, source, matched", [
    ("guard_side_effect", "def f(x):\n    return x.sum().item()\n", False),
    ("guard_side_effect", "import time\ndef f(x):\n    t = time.time()\n    return x * t\n",
     True),
    ("remove_graph_break", "def f(x):\n    return x\n", False),
    ("sorted_stack", "def f(x):\n    return x\n", False),
    ("torch_rng", "def f(x):\n    return x\n", False),
    ("while_loop", "def f(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x\n", False),
])
def test_a_pattern_not_on_the_line_is_a_quiet_refusal(fix_id, source, matched):
    line = 3 if "time" in source else 2
    rw = propose_rewrite(source, line, fix_id)
    assert rw.new_source is None and rw.matched is matched, rw.refused


def test_the_new_fixes_are_registered_for_their_families():
    assert [f.id for f in fixes_for("explicit_break", "source")][:1] == ["remove_graph_break"]
    assert "sorted_stack" in [f.id for f in fixes_for("data_dependent_value", "source")]
    assert "torch_rng" in [f.id for f in fixes_for("rng", "source")]
    assert [f.id for f in fixes_for("data_dependent_branch", "source")][:2] == [
        "torch_where", "while_loop"]
    for category in ("unsupported_call", "rng", "print", "side_effect", "object_identity"):
        assert "guard_side_effect" in [f.id for f in fixes_for(category, "source")], category
    assert all(FIXES[i].kind == "source" for i in ISSUE_34_FIXES)
    assert rule_for_fix("remove_graph_break", "explicit_break") == "BS007"
    assert rule_for_fix("guard_side_effect", "unsupported_call") == "BS006"


# -- planning ---------------------------------------------------------------------------------

BEFORE = FixMetrics(graph_count=2, breaks=1, recompiles=None, compiled_s=None, speedup=None)


def _brk(category: str, file: str, line: int) -> SimpleNamespace:
    return SimpleNamespace(root_category=category, file=file, line=line, owner="user", sites=[],
                           user_frame=None, hints=[], type="", explanation="", gb_id=None,
                           message="", call_chain=[])


def _planned(model, category: str, line: int) -> list[tuple[str, int, bool, str | None]]:
    plans: list = []
    _plan_user_sources(plans, set(), _brk(category, str(model), line), model, BEFORE)
    return [(p.fix.fix_id, p.fix.line, p.new_source is not None, p.fix.reason) for p in plans]


def test_every_source_fix_of_a_family_is_planned_quiet_where_its_pattern_is_not(tmp_path):
    model = tmp_path / "net.py"
    model.write_text("import random\nimport time\n\n\ndef f(x):\n"
                     "    t0 = time.perf_counter()\n    s = random.random()\n"
                     "    print(s)\n    for _ in range(2):\n        x = x + len(time.ctime())\n"
                     "    return x * s\n")
    assert _planned(model, "unsupported_call", 6) == [("guard_side_effect", 6, True, None)]
    # rng: torch_rng rewrites, the guard is not for this line (quiet)
    assert _planned(model, "rng", 7) == [("torch_rng", 7, True, None)]
    # print: the print guard and the side-effect guard make one rewrite, planned once
    assert _planned(model, "print", 8) == [("print_guard", 8, True, None)]
    # no other fix rewrote a call in a loop: the fallback, the loop run eagerly
    assert _planned(model, "unsupported_call", 10) == [("disable_region", 10, True, None)]
    # nothing applies: no plan at all (unfixed() explains), no refusal from fallbacks
    assert _planned(model, "unsupported_call", 11) == []
    # two breaks in one loop: one helper, planned once
    plans: list = []
    for line in (9, 10):
        _plan_user_sources(plans, set(), _brk("unsupported_call", str(model), line), model,
                           BEFORE)
    assert [(p.fix.fix_id, p.fix.line) for p in plans] == [("disable_region", 9)]


def test_a_rules_own_fix_keeps_its_refusal(tmp_path):
    model = tmp_path / "net.py"
    model.write_text("import torch\n\n\ndef f(x):\n    y = torch._dynamo.graph_break() or x\n"
                     "    return y\n")
    (got,) = _planned(model, "explicit_break", 5)
    assert got[:3] == ("remove_graph_break", 5, False)
    assert got[3] == "refused: graph_break() is not a statement of its own (inside an " \
        "expression or after `;`)"


def test_a_setting_already_in_force_is_not_planned_again():
    brk = _brk("item", "m.py", 3)
    plans: list = []
    _plan_settings(plans, set(), brk, BEFORE, {})
    assert "capture_scalar_outputs" in [p.fix.fix_id for p in plans]
    plans = []
    _plan_settings(plans, set(), brk, BEFORE, {"capture_scalar_outputs": True})
    assert "capture_scalar_outputs" not in [p.fix.fix_id for p in plans]
    plans = []  # another value than the fix's is not "in force"
    _plan_settings(plans, set(), brk, BEFORE, {"capture_scalar_outputs": False})
    assert "capture_scalar_outputs" in [p.fix.fix_id for p in plans]


def test_plan_fixes_reads_the_settings_in_force_from_the_result(tmp_path):
    """``ScanResult.dynamo_settings`` (read with getattr: a result without it plans as
    before); a stand-in result with the fields planning reads."""
    model = tmp_path / "net.py"
    model.write_text("def f(x):\n    return x.sum().item()\n")
    summary = SimpleNamespace(graph_count=2, graph_break_count=1, graph_calls_per_call=2,
                              eager_gaps_per_call=1, frames_run_eagerly_per_call=0,
                              kernels_per_call=None)
    result = SimpleNamespace(breaks=[_brk("item", str(model), 2)], kernel_findings=[],
                             recompiles=None, timings=None, graphs=[], summary=summary,
                             compile_settings={}, method="forward")
    def planned() -> list[str]:
        return [p.fix.fix_id for p in plan_fixes(f"{model}:f", result)]

    assert planned() == ["capture_scalar_outputs"]
    result.dynamo_settings = {"capture_scalar_outputs": True, "verbose": True}
    assert planned() == []
    result.dynamo_settings = {"capture_scalar_outputs": False}
    assert planned() == ["capture_scalar_outputs"]


# -- gain: a disabled region must not make the model more eager ----------------------------------

def _metrics(graphs: int, eager: float) -> FixMetrics:
    return FixMetrics(graph_count=graphs, breaks=1, recompiles=None, compiled_s=None,
                      speedup=None, frames_run_eagerly_per_call=eager)


def test_change_says_when_graphs_were_lost():
    from breakscan.fixes.gain import change

    assert change(_metrics(0, 1.0), _metrics(2, 0.0)).lost_graphs is False  # compiles now
    assert change(_metrics(3, 0.0), _metrics(3, 0.0)).lost_graphs is False
    assert change(_metrics(3, 0.0), _metrics(2, 0.0)).lost_graphs is True
    assert change(_metrics(0, 1.0), _metrics(0, 1.0)).lost_graphs is True  # none at all


EAGER = ["frames run eagerly"]


@pytest.mark.parametrize("found, eager_region, timing, status", [
    # the eager-region row: fewer graphs (or none) is never verified, whatever improved
    (Change(better=EAGER, lost_graphs=True), True, "faster", "makes it worse"),
    (Change(better=EAGER, lost_graphs=True), True, None, "makes it worse"),
    # graphs kept: the usual rows
    (Change(better=EAGER), True, "no measurable difference", "verified"),
    (Change(better=EAGER), True, None, "not tried"),
    # nothing changed stays "no effect" (the row before)
    (Change(lost_graphs=True), True, None, "no effect"),
    # any other fix: losing graphs is allowed (a break removed merges two graphs)
    (Change(better=EAGER, lost_graphs=True), False, "faster", "verified"),
])
def test_the_eager_region_row(found, eager_region, timing, status):
    from breakscan.fixes.gain import decide

    assert decide(found, compiles=True, outputs_same=True, timing=timing,
                  eager_region=eager_region) == status


def test_a_model_that_compiles_now_is_not_charged_for_its_returns_to_python():
    """Measured (QuietWarnings, disable_region): graphs 0 -> 2, frames run eagerly 1 -> 0,
    returns to Python 0 -> 1 was a trade; before, everything was Python."""
    from breakscan.fixes.gain import COMPILES_NOW, change

    before = FixMetrics(graph_count=0, breaks=2, recompiles=None, compiled_s=None, speedup=None,
                        graph_calls_per_call=0, eager_gaps_per_call=0,
                        frames_run_eagerly_per_call=1)
    after = FixMetrics(graph_count=2, breaks=1, recompiles=None, compiled_s=None, speedup=None,
                       graph_calls_per_call=2, eager_gaps_per_call=1,
                       frames_run_eagerly_per_call=0)
    found = change(before, after)
    assert found.better == [COMPILES_NOW, "frames run eagerly"] and found.worse == []
    assert found.lost_graphs is False
