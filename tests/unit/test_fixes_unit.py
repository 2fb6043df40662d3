"""What counts as a fix's gain, judged on its numbers (no torch, no process): every row of the
gain decision table in docs/fixes.md, and the cases real models showed."""

from __future__ import annotations

import dataclasses

import pytest

from breakscan.fixes.gain import COMPILES_NOW, Change, change, decide
from breakscan.fixes.judge import within_drift
from breakscan.model.verdicts import Correctness, FixMetrics


def metrics(graphs, calls=None, returns=None, eager=None, recompiles=None, kernels=None,
            findings=None, breaks=1):
    return FixMetrics(graph_count=graphs, breaks=breaks, recompiles=recompiles, compiled_s=None,
                      speedup=None, graph_calls_per_call=calls, eager_gaps_per_call=returns,
                      frames_run_eagerly_per_call=eager, kernels_per_call=kernels,
                      kernel_findings=findings)


def test_fewer_break_sites_alone_is_no_gain():
    """The OLMoE case: a setting that only moves a break down a line (graphs 11 -> 11, the
    same returns to Python) is no gain; each measure that drops is one."""
    before = metrics(11, 11, 10, 1, breaks=2)
    moved = dataclasses.replace(before, breaks=1)
    assert change(before, moved) == Change()
    for field, value, words in (("graph_count", 10, "graphs"),
                                ("graph_calls_per_call", 10, "graph calls per call"),
                                ("eager_gaps_per_call", 9, "returns to Python per call"),
                                ("frames_run_eagerly_per_call", 0, "frames run eagerly"),
                                ("kernels_per_call", 3, "kernels per call")):
        start = dataclasses.replace(before, kernels_per_call=4)
        found = change(start, dataclasses.replace(start, breaks=1, **{field: value}))
        assert (found.better, found.worse) == ([words], []), field
    assert change(dataclasses.replace(before, recompiles=3),
                  dataclasses.replace(moved, recompiles=1)).better == ["recompiles"]


# The decision table of docs/fixes.md, one row each: (change, compiles, outputs same, timing)
# -> status.
BETTER, WORSE = ["graphs"], ["graph calls per call"]
ROWS = [
    (Change(), False, True, None, "breaks compilation"),
    (Change(better=BETTER), True, False, "faster", "changes outputs"),
    (Change(), True, True, None, "no effect"),
    (Change(fewer_findings=True), True, True, "faster", "verified"),
    (Change(fewer_findings=True), True, True, "slower", "slower"),
    (Change(fewer_findings=True), True, True, "no measurable difference", "no effect"),
    (Change(fewer_findings=True), True, True, None, "no effect"),
    (Change(worse=WORSE), True, True, None, "makes it worse"),
    (Change(better=BETTER), True, True, "faster", "verified"),
    (Change(better=BETTER), True, True, "no measurable difference", "verified"),
    (Change(better=BETTER), True, True, "slower", "slower"),
    (Change(better=BETTER), True, True, None, "not tried"),
    (Change(better=BETTER, worse=WORSE), True, True, "faster", "verified"),
    (Change(better=BETTER, worse=WORSE), True, True, "no measurable difference",
     "makes it worse"),
    (Change(better=BETTER, worse=WORSE), True, True, "slower", "makes it worse"),
]


@pytest.mark.parametrize("found, compiles, same, timing, status", ROWS)
def test_every_row_of_the_gain_decision_table(found, compiles, same, timing, status):
    assert decide(found, compiles=compiles, outputs_same=same, timing=timing) == status


def test_the_decision_table_in_the_docs_is_the_one_tested():
    """docs/fixes.md's table has a row per case above, with the same status."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "fixes.md").read_text()
    section = text.split("### The gain decision table", 1)[1].split("\n###", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    statuses = [row.rsplit("|", 2)[-2].strip(" `") for row in rows]
    assert statuses == [row[-1] for row in ROWS]


def test_a_setting_that_trades_graphs_for_one_return_is_not_verified_when_slower():
    """Seen: graphs 3 -> 4, graph calls 3 -> 5, a frame run eagerly 0 -> 1, returns to Python
    2 -> 1, timed slower: marked VERIFIED before. It is worse on three axes."""
    found = change(metrics(3, 3, 2, 0), metrics(4, 5, 1, 1))
    assert found.better == ["returns to Python per call"]
    assert found.worse == ["frames run eagerly", "graph calls per call", "graphs"]
    assert decide(found, compiles=True, outputs_same=True, timing="slower") == "makes it worse"
    assert decide(found, compiles=True, outputs_same=True, timing="faster") == "verified"


def test_more_graphs_is_never_slower_removes_the_break_and_nothing_changed_is_no_effect():
    """Seen: 'slower · removes the break' for 13 -> 14 graphs and 18 -> 21 graph calls, and for
    10 -> 10 graphs, 21 -> 21 graph calls."""
    found = change(metrics(13, 18, 5, 0, breaks=3), metrics(14, 21, 4, 0, breaks=2))
    assert decide(found, compiles=True, outputs_same=True, timing="slower") == "makes it worse"
    same = change(metrics(10, 21, 9, 0, breaks=2), metrics(10, 21, 9, 0, breaks=1))
    assert decide(same, compiles=True, outputs_same=True, timing=None) == "no effect"


def test_a_model_that_ran_eagerly_and_now_compiles_has_gained():
    """Seen: 0 graphs (every frame run eagerly) -> 1 graph, 0 breaks, marked 'makes it worse'."""
    found = change(metrics(0, 0, 1, 1), metrics(1, 1, 0, 0, breaks=0))
    assert COMPILES_NOW in found.better and found.worse == []
    assert decide(found, compiles=True, outputs_same=True,
                  timing="no measurable difference") == "verified"


def test_a_fix_is_judged_against_the_unfixed_models_own_drift():
    """A sampler drifting 3.5e-4 compiled before any fix: a fix drifting as much is not a
    change of outputs; one drifting five times as far is; a tensor that collapsed (shapes
    differ, no measurable difference) always is."""
    baseline = Correctness(match=False, max_abs_error=3.5e-4, max_rel_error=None,
                           scaled_error=3.5e-4)

    def fixed(scaled):
        return Correctness(match=False, max_abs_error=scaled, max_rel_error=None,
                           scaled_error=scaled)
    assert within_drift(fixed(3.6e-4), baseline)
    assert not within_drift(fixed(1.8e-3), baseline)
    assert not within_drift(fixed(None), baseline)
    assert within_drift(Correctness(True, 0.0, 0.0, scaled_error=0.0), None)
    assert not within_drift(fixed(1e-3), None)


def test_hinted_settings_are_read_in_any_wording_from_hints_and_imperative_explanations():
    from types import SimpleNamespace

    from breakscan.fixes.settings import hinted_settings

    grad = SimpleNamespace(  # GB9186's text in torch 2.13
        hints=["Change `torch._dynamo.config.trace_autograd_ops` to `True`."],
        explanation="Attempted to call `torch.autograd.grad` with config "
                    "`torch._dynamo.config.trace_autograd_ops=False`")
    assert hinted_settings(grad) == [("trace_autograd_ops", True)]
    seed = SimpleNamespace(explanation="", hints=[  # GB0007 on torch.manual_seed
        "Apply `@torch._dynamo.dont_skip_tracing` to the function `manual_seed` to force "
        "tracing into the function."])
    assert hinted_settings(seed) == [("dont_skip_tracing", True)]
    rnn = SimpleNamespace(explanation="", hints=["Set torch._dynamo.config.allow_rnn=True"])
    assert hinted_settings(rnn) == [("allow_rnn", True)]
    rnn_215 = SimpleNamespace(hints=[], explanation=(  # GB0148 on an LSTM, torch 2.15
        "Dynamo determined that a graph break should occur when calling "
        "`L['self']._modules['rnn']`. Reason: Dynamo does not support RNN, GRU, or LSTM. Set "
        "torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, and "
        "LSTM in Dynamo"))
    assert hinted_settings(rnn_215) == [("allow_rnn", True)]


def test_no_fix_says_why_and_what_leaving_it_costs():
    """Issue 44 §5: when nothing applies, one line why (fundamental in Dynamo's registry,
    data-dependent by design, library code) and the break's measured cost per call."""
    from types import SimpleNamespace

    from breakscan.fixes.unfixed import _why_no_fix

    def brk(category, owner="user", classes=(), cost=None):
        return SimpleNamespace(root_category=category, owner=owner, hint_classes=list(classes),
                               cost_s_per_call=cost)

    assert _why_no_fix(brk("other", classes=["FUNDAMENTAL"], cost=3.05e-5)) == (
        "Dynamo's registry marks this break fundamental: Dynamo will not trace it; left as it "
        "is, it costs 30.5 µs per call (measured); follow the advice above")
    assert _why_no_fix(brk("item")) == (
        "the code needs a Python value of a tensor's data (data-dependent by design), and no "
        "tensor form of it was found; follow the advice above")
    assert _why_no_fix(brk("context_manager", owner="library", cost=0.0021)).endswith(
        "left as it is, it costs 2.1 ms per call (measured); follow the advice above")


def test_a_switch_that_changes_the_model_is_judged_on_its_own_eager_run():
    """Issue 44 §2: a switch whose outputs differ from the original's is judged by its compiled
    run against its own eager run; with no compiled run (no gain, nothing timed) there is no
    outputs verdict, so its status comes from the numbers ("no effect"), never "changes
    outputs". A source fix or setting is judged on the original's outputs, as before."""
    from types import SimpleNamespace

    from breakscan.fixes.judge import TRAINING_SEMANTICS, _outputs_reason, semantics
    from breakscan.model.verdicts import Fix

    differ = Correctness(match=False, max_abs_error=0.3, max_rel_error=None, scaled_error=0.3,
                         message="output 0 differs")
    same = Correctness(True, 0.0, 0.0, scaled_error=0.0)
    switch = Fix(rule="BS002", fix_id="switch:layerdrop=0.0", kind="switch",
                 title=f"switch on the path: layerdrop = 0.0 {TRAINING_SEMANTICS}",
                 category="data_dependent_branch")
    untimed = SimpleNamespace(same_outputs=differ, compiled_outputs=None, baseline=None,
                              warmed=[], changes=["removes patcher from the model (272 parameters no "
                                       "longer used)"])
    said = semantics(switch, untimed)
    assert said == ("removes patcher from the model (272 parameters no longer used); its "
                    "outputs differ from the original model's (output 0 differs); it turns off "
                    "a training behaviour (layer drop, masking, noise or freezing, by its name)")
    assert _outputs_reason(switch, untimed, said) is None
    drifted = SimpleNamespace(same_outputs=differ, compiled_outputs=differ, baseline=same,
                              changes=[], warmed=[])
    assert _outputs_reason(switch, drifted, semantics(switch, drifted)).startswith(
        "compiled, the switched model's outputs differ from its own eager run")
    source = dataclasses.replace(switch, kind="source", fix_id="torch_where", title="where")
    assert semantics(source, untimed) is None
    assert _outputs_reason(source, untimed).startswith("outputs differ from the original model")


def test_a_regional_compile_is_judged_on_its_cold_compile_and_says_the_run_time():
    """Shorter cold compile, run time within 5 %: verified, both numbers said; more than 5 %
    slower: slower; a compile not shorter: no effect."""
    from types import SimpleNamespace

    from breakscan.fixes.regional import judge_regional
    from breakscan.model.verdicts import Fix, FixMetrics

    def judged(whole, alone, speedup, verdict):
        fix = Fix(rule="compile-time", fix_id="regional_compile", kind="switch", title="t",
                  category="compile_time", before=FixMetrics(1, 0, None, None, None),
                  after=FixMetrics(1, 0, None, None, None), status="makes it worse")
        ab = SimpleNamespace(verdict=verdict, speedup=SimpleNamespace(value=speedup),
                             said=lambda: f"{verdict} ({speedup:.2f}×)")
        judge_regional(fix, SimpleNamespace(cold_compile_s=(whole, alone), ab=ab), None)
        return fix

    kept = judged(3.78, 1.34, 0.98, "slower")
    assert (kept.status, kept.verified) == ("verified", True)
    assert kept.reason == ("cold compile 3.78 s -> 1.34 s (2.8x shorter); run time slower "
                           "(0.98×) (within 5 %: the cost of calling each compiled block)")
    assert (kept.before.cold_compile_s, kept.after.cold_compile_s) == (3.78, 1.34)
    lost = judged(2.18, 0.17, 0.46, "slower")
    assert lost.status == "slower" and "12.8x shorter), but the compiled model runs slower: " \
        "run time slower (0.46×)" in lost.reason
    same = judged(2.0, 1.9, 1.0, "no measurable difference")
    assert same.status == "no effect" and same.reason.startswith(
        "no effect: cold compile 2.00 s -> 1.90 s, not measurably shorter")
