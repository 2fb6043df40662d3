"""Advice a user can act on, and never a false statement (issue 21), on small models of ours.

The third-party suite (tests/slow/test_third_party.py) has a real library instance of each item.
"""

from __future__ import annotations

import shutil

import pytest

from breakscan import scan
from breakscan.fixes.judge import judge
from breakscan.fixes.plan import plan_fixes
from breakscan.fixes.settings import resolved_config
from breakscan.fixes.verify import verify_fixes
from breakscan.options import Limits, ScanOptions, TimingOptions
from breakscan.model.verdicts import ABTiming, Correctness, Fix, FixMetrics, Interval
from breakscan.fixes.switches import search

from conftest import FIXTURES, SAMPLES, locate

CASES = FIXTURES / "models" / "advice_cases.py"


# -- 1. a compile failure is not a graph break ----------------------------------------------------

def _metrics(graphs, calls, breaks=1):
    return FixMetrics(graph_count=graphs, breaks=breaks, recompiles=None, compiled_s=None,
                      speedup=None, graph_calls_per_call=calls, eager_gaps_per_call=calls - 1,
                      frames_run_eagerly_per_call=0.0)


def _fixed(result, same=True):
    from breakscan.model.result import FixedScan

    return FixedScan(result=result, same_outputs=Correctness(same, 0.0 if same else 1.0, None))


def test_a_setting_that_breaks_compilation_is_never_a_candidate():
    """A real result of a model that does not compile, judged as a fix's rescan."""
    broken = scan(f"{SAMPLES / 'compile_error.py'}:CompileFails", input_shapes=["8,16"])
    fix = Fix(rule="BS001", fix_id="capture_scalar_outputs", kind="setting", title="set",
              category="item", before=_metrics(3, 3))
    judge(fix, _fixed(broken), dynamic=False)
    assert (fix.status, fix.verified, fix.after) == ("breaks compilation", False, None)
    assert fix.reason == ("breaks compilation: torch.compile fails with it: RuntimeError when "
                          "making fake tensor call")


# -- 5. every suggestion says whether it was tried -------------------------------------------------

@pytest.mark.parametrize("after, same, verdict, status", [
    ((3, 3.0), True, None, "no effect"),
    ((4, 4.0), True, None, "makes it worse"),
    ((1, 1.0), False, None, "changes outputs"),
    ((1, 1.0), True, "faster", "verified"),
    ((1, 1.0), True, "no measurable difference", "verified"),
    ((1, 1.0), True, "slower", "slower"),
])
def test_fix_statuses(after, same, verdict, status):
    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorWhere", input_shapes=["8,16"])
    result.summary.graph_count, result.summary.graph_calls_per_call = after
    result.summary.eager_gaps_per_call = after[1] - 1
    result.summary.graph_break_count = 0 if after[0] == 1 else 1
    fixed = _fixed(result, same)
    if verdict:
        iv = Interval(1.0, 0.9, 1.1)
        ratio = {"faster": Interval(1.5, 1.4, 1.6), "slower": Interval(1 / 1.03, 0.96, 0.98),
                 "no measurable difference": Interval(1.0, 0.98, 1.02)}[verdict]
        fixed.ab = ABTiming(iv, iv, ratio, verdict, 10, 10, 1, "inductor")
    fix = Fix(rule="BS002", fix_id="torch_where", kind="source", title="t",
              category="data_dependent_branch", before=_metrics(3, 3.0))
    judge(fix, fixed, dynamic=False)
    assert fix.status == status and fix.verified == (status == "verified")
    if status == "slower":
        assert fix.reason.startswith("slower: graphs 3 -> 1, ") and fix.reason.endswith(
            "(better: graph calls per call, returns to Python per call, graphs; measurably "
            "slower: no gain; same-process timing: slower (0.97×))")
    if status in ("no effect", "makes it worse"):
        assert fix.reason.startswith(f"{status}: graphs 3 -> {after[0]}")


def test_untried_fixes_read_not_tried_in_every_report():
    from breakscan.report.html import to_html
    from breakscan.report.terminal import console, render
    from breakscan.model.result import ModelRun

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    result.fixes = [Fix(rule="BS002", fix_id="torch_where", kind="source", title="t",
                        category="data_dependent_branch", reason="refused: x")]
    assert result.to_dict()["fixes"][0]["status"] == "not tried"
    import io

    out = console(file=io.StringIO(), width=100)
    render(result, out)
    assert "NOT TRIED  BS002 torch_where" in out.file.getvalue()
    assert "NOT TRIED" in to_html([ModelRun(target="t", result=result)])


# -- 2. origins through module state ---------------------------------------------------------------

def test_constants_in_tensors_plan_a_patch_and_a_rewrite():
    target = f"{SAMPLES / 'tensor_constant.py'}:ConstantInTensor"
    result = scan(target, input_shapes=["8,16"])
    (brk,) = result.breaks
    assert [(c.attr, c.kind, c.value) for c in brk.constants] == [
        ("pad", "buffer", 2), ("stride", "buffer", 2)]
    assert "A constant kept in a tensor: self.pad, self.stride of ConstantInTensor" in \
        brk.suggestion
    plans = {p.fix.fix_id: p for p in plan_fixes(target, result)}
    assert plans["python_constants"].constants == {"ConstantInTensor": ["pad", "stride"]}
    assert "for name in ('pad', 'stride'):" in plans["python_constants"].fix.setting
    diff = plans["constant_source"].fix.diff
    assert "+        self.pad = pad" in diff and "+        self.stride = stride" in diff


def test_constants_fix_verified_in_its_own_process(tmp_path):
    shutil.copy(SAMPLES / "tensor_constant.py", tmp_path / "tensor_constant.py")
    target = f"{tmp_path / 'tensor_constant.py'}:ConstantInTensor"
    options = ScanOptions(input_shapes=("8,16",))
    result = scan(target, options)
    quick = TimingOptions(backend="eager", max_run_time=0.1)  # timings exist; their speed is not the subject
    fixes = {f.fix_id: f for f in verify_fixes(
        target, options.but(timing=quick), result, Limits(timeout=300))}
    for fix_id in ("python_constants", "constant_source"):
        fix = fixes[fix_id]
        assert fix.status in ("verified", "slower"), fix.reason  # the A/B decides which
        assert (fix.before.breaks, fix.after.breaks) == (1, 0) and fix.outputs_match
        assert fix.after.eager_gaps_per_call == 0 < fix.before.eager_gaps_per_call


# -- 4. categories that name the real thing --------------------------------------------------------

def test_two_breaks_on_one_line_are_two_entries():
    result = scan(f"{CASES}:TwoOnOneLine", input_shapes=["4,16"])
    assert [(b.category, b.gb_id) for b in result.breaks] == [("item", "GB0124"),
                                                            ("tolist_numpy", "GB0109")]
    assert len({b.line for b in result.breaks}) == 1


def test_a_disabled_call_names_the_function_and_its_line():
    result = scan(f"{SAMPLES / 'disabled_call.py'}:CallsDisabled", input_shapes=["8,16"])
    (brk,) = result.breaks
    line = locate("@torch.compiler.disable", SAMPLES / "disabled_call.py")[1]
    assert brk.suggestion == (f"`rescale()` (disabled_call.py:{line}) is decorated with "
                              "`torch.compiler.disable`: it runs eagerly by design. Narrow the "
                              "decorator to the part that cannot be traced, or remove it.")
    assert "graph_break()" not in brk.suggestion


def test_warnings_warn_tries_the_logging_settings_and_the_guard():
    target = f"{SAMPLES / 'warning_call.py'}:WarnInForward"
    result = scan(target, input_shapes=["8,16"])
    plans = {p.fix.fix_id: p for p in plan_fixes(target, result)}
    assert set(plans) == {"reorderable_logging_functions", "ignore_logging_functions",
                          "print_guard"}
    import warnings

    config = resolved_config(plans["reorderable_logging_functions"].config)
    assert warnings.warn in config["reorderable_logging_functions"]
    assert "if not torch.compiler.is_compiling():" in plans["print_guard"].fix.diff


def test_an_inline_logger_is_a_logging_call_with_the_guard_fix():
    target = f"{SAMPLES / 'logging_call.py'}:InlineLogger"
    result = scan(target, input_shapes=["8,16"])
    (brk,) = result.breaks
    assert (brk.category, brk.gb_id) == ("print", "GB6215")
    assert "torch.compiler.disable" not in brk.suggestion
    (plan,) = [p for p in plan_fixes(target, result) if p.fix.fix_id == "print_guard"]
    assert "+        if not torch.compiler.is_compiling():\n+            logging.getLogger(" \
        in plan.fix.diff


def test_deepcopy_is_rewritten_to_clone():
    target = f"{SAMPLES / 'tensor_deepcopy.py'}:DeepCopyInForward"
    result = scan(target, input_shapes=["8,16"])
    (plan,) = [p for p in plan_fixes(target, result) if p.fix.fix_id == "clone"]
    assert "-        snapshot = copy.deepcopy(h)\n+        snapshot = h.clone()" in plan.fix.diff


# -- 5. switches on the path to a break -------------------------------------------------------------

def test_the_path_search_finds_the_layerdrop_switch():
    result = scan(f"{CASES}:LayerDrop", input_shapes=["4,16"], train=True)
    (switch,) = search(result.breaks)
    assert (switch.attr, switch.value, switch.on_config, switch.classes) == (
        "layerdrop", 0.0, False, ["Block"])
    assert switch.training_semantics
    line = locate("if self.training and self.layerdrop > 0.0:", CASES)[1]
    assert switch.tests == [f"{CASES}:{line} `self.training and self.layerdrop > 0.0`"]
    (plan,) = [p for p in plan_fixes(f"{CASES}:LayerDrop", result)
               if p.fix.kind == "switch" and p.fix.fix_id != "regional_compile"]
    assert plan.fix.fix_id == "switch:layerdrop=0.0"
    assert "(changes training semantics)" in plan.fix.title


# -- 6. source shown literally ----------------------------------------------------------------------

def test_a_value_computed_from_the_input_is_not_blamed_on_a_constant():
    result = scan(f"{CASES}:ScaledItem", input_shapes=["4,16"])
    (brk,) = result.breaks
    assert brk.category == "item" and not brk.constants


def test_a_disabled_method_is_found_by_its_qualified_name():
    result = scan(f"{CASES}:CallsDisabledMethod", input_shapes=["4,16"])
    (brk,) = result.breaks
    line = locate("@torch.compiler.disable", CASES)[1]
    assert f"(advice_cases.py:{line})" in brk.suggestion and "DisabledBlock.forward" in \
        brk.suggestion


# -- advice that leads somewhere, on real library code's patterns (fixtures/models/real_code.py)

RC = FIXTURES / "models" / "real_code.py"


def _scan(name: str, shape: str = "4,16", **kwargs):
    return scan(f"{RC}:{name}", input_shapes=[shape], **kwargs)


@pytest.mark.parametrize("name", ["NumpyOrigin", "StdlibCall", "LibraryLoop", "BreakInTry",
                                  "BreakInLock", "RequiresGradFlag", "LSTMTagger"])
def test_advice_names_something_to_do(name):
    result = _scan(name, "2,5,16" if name == "LSTMTagger" else "4,16",
                   train=name == "RequiresGradFlag")
    assert result.breaks
    for brk in result.breaks:
        assert "See Dynamo's explanation" not in brk.suggestion
        assert "a other" not in brk.suggestion
        if (brk.cause_category or brk.category) != "print":
            assert "ignore_logging_functions" not in brk.suggestion
        assert "torch.compiler.disable" in brk.suggestion or brk.category != "other"
