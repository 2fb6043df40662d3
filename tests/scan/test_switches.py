"""Switches on a break's path, in the shapes real libraries write them (issue 32 §3): found by
reading the path's tests, each named as an untried candidate without --fix."""

from __future__ import annotations

import pytest

from breakscan.fixes.plan import switch_candidates
from breakscan.fixes.switches import search
from breakscan.pipeline.scan import scan
from breakscan.model.verdicts import CANDIDATE

from conftest import FIXTURES, GAINED, fixes_in_process, locate

CASES = FIXTURES / "models" / "switch_cases.py"
CHANGES_SEMANTICS = "verified: changes semantics"
# A semantics-changing switch with a gain: proved, or measurably slower in the timing
SEMANTIC_GAINED = (CHANGES_SEMANTICS, "slower")


@pytest.mark.parametrize("name, train, fix_id, code, test", [
    # the decision is carried in a variable: followed back to its assignment's guard
    ("LayerDropThroughVariable", True, "switch:layerdrop=0.0", "model.config.layerdrop = 0.0",
     "if self.training and self.config.layerdrop > 0.0:"),
    # the decision carried in by an argument: `if drop:` in the layer, the caller passing
    # `drop=self.training and self.config.layerdrop > 0.0`
    ("LayerDropPassedIn", True, "switch:layerdrop=0.0", "model.config.layerdrop = 0.0",
     "if drop:"),
    # `if self.begin_index is None:`, set by the scheduler's public set_begin_index(0)
    ("SchedulerLoop", False, "switch:set_begin_index(0)", "obj.set_begin_index(0)",
     "if self.begin_index is None:"),
    # an early return on an environment variable above the break
    ("CheckedByEnvironment", False, "switch:env:BREAKSCAN_EXAMPLE_DISABLE_CHECK=1",
     "os.environ['BREAKSCAN_EXAMPLE_DISABLE_CHECK'] = '1'",
     'if os.getenv("BREAKSCAN_EXAMPLE_DISABLE_CHECK", "0") == "1":'),
])
def test_the_switch_is_found_and_named_without_fix(name, train, fix_id, code, test):
    result = scan(f"{CASES}:{name}", input_shapes=["4,16"], train=train)
    (switch,) = search(result.breaks)
    assert switch.fix_id == fix_id and switch.code().startswith(code)
    line = locate(test, CASES)[1]
    assert [t.rsplit(" `", 1)[0] for t in switch.tests] == [f"{CASES}:{line}"]
    (candidate,) = [f for f in switch_candidates(result) if f.fix_id == fix_id]
    assert (candidate.status, candidate.reason, candidate.kind) == ("not tried", CANDIDATE,
                                                                    "switch")
    assert not candidate.verified and candidate.before is None


def test_an_environment_switch_names_no_class_and_a_setter_its_class():
    result = scan(f"{CASES}:SchedulerLoop", input_shapes=["4,16"])
    (switch,) = search(result.breaks)
    assert (switch.kind, switch.classes, switch.value) == ("method", ["Scheduler"], 0)
    result = scan(f"{CASES}:CheckedByEnvironment", input_shapes=["4,16"])
    (switch,) = search(result.breaks)
    assert (switch.kind, switch.classes, switch.value) == ("env", [], "1")


def test_an_input_the_code_accepts_precomputed_is_a_candidate():
    """transformers' vision_utils: `if kwargs is not None and (position_ids :=
    kwargs.pop("position_ids", None)) is not None: return position_ids` above the `.tolist()`
    that breaks: pass position_ids= precomputed. The dict that carries it is no candidate."""
    result = scan(f"{CASES}:PackedVisionEncoder", inputs=f"{CASES}:packed_inputs")
    (brk,) = result.breaks
    (switch,) = search(result.breaks)
    assert (switch.kind, switch.attr, switch.fix_id) == ("input", "position_ids",
                                                         "switch:input:position_ids")
    assert switch.computed_by == (str(CASES), locate("def vision_position_ids(grid_thw, kwargs=None):", CASES)[1],
                                  "vision_position_ids")
    assert switch.code() == ("position_ids = vision_position_ids(...)  # once, outside the "
                             "compiled call\nmodel(..., position_ids=position_ids)")


def test_a_flipped_switch_prints_code_that_runs():
    """wav2vec2's `_requires_grad` was printed as `module._requires_grad = not ...`."""
    from breakscan.fixes.switches import PathSwitch

    switch = PathSwitch("_requires_grad", "flip", False, classes=["Wav2Vec2FeatureEncoder"])
    code = switch.code()
    assert code.endswith("module._requires_grad = not module._requires_grad")
    assert switch.training_semantics  # it freezes the feature encoder in training
    assert not PathSwitch("use_cache", "flip", True).training_semantics
    compile(code, "<switch>", "exec")
    assert PathSwitch("use_cache", "flip", True).code().startswith(
        "model.config.use_cache = not model.config.use_cache")


@pytest.mark.parametrize("name, fields, fix_id, graphs", [
    ("LayerDropThroughVariable", {"train": True}, "switch:layerdrop=0.0", (0, 1)),
    ("SchedulerLoop", {}, "switch:set_begin_index(0)", (5, 1)),
    ("CheckedByEnvironment", {}, "switch:env:BREAKSCAN_EXAMPLE_DISABLE_CHECK=1", (2, 1)),
    ("PackedVisionEncoder", {"inputs": f"{CASES}:packed_inputs"},
     "switch:input:position_ids", (2, 1)),
])
def test_a_switch_on_the_path_is_verified(name, fields, fix_id, graphs):
    """Through a variable (a model that ran eagerly now compiles: a gain), a setter method
    called on the built model's scheduler, an environment variable set around the fixed model
    only (the original keeps its break: before 2 graphs, in the same process), an input passed
    precomputed (the value the eager run's helper returned). As --fix verifies them, each
    fix's job in this process."""
    shape = None if "inputs" in fields else "4,16"
    (fix,) = [f for f in fixes_in_process(f"{CASES}:{name}", shape, **fields)
              if f["fix_id"] == fix_id]
    semantic = "training semantics" in fix["title"]  # layer drop: never plain verified
    assert fix["status"] in (SEMANTIC_GAINED if semantic else GAINED), fix["reason"]
    assert fix["outputs_match"], fix["reason"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == graphs
    assert fix["before"]["breaks"] >= 1 and fix["after"]["breaks"] < fix["before"]["breaks"]


def test_a_switch_carried_in_by_an_argument_is_proved_against_its_own_eager_run():
    """`if drop:` in the layer, `drop=self.training and self.config.layerdrop > 0.0` passed by
    the caller: the caller's config.layerdrop = 0.0 takes 3 graphs to 1; with seed 0 the layer
    was dropped, so the outputs differ from the original's. The switched model compiled is
    compared with the switched model eager (that proves the compile), and the status says it
    changes what the model computes, and how (issue 44 §2)."""
    (fix,) = [f for f in fixes_in_process(f"{CASES}:LayerDropPassedIn", "4,16", train=True)
              if f["fix_id"] == "switch:layerdrop=0.0"]
    assert "(changes training semantics)" in fix["title"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (3, 1)
    assert fix["outputs_match"] is False  # against the original: it computes something else
    assert fix["changes"].startswith("its outputs differ from the original model's (output 0:")
    assert fix["changes"].endswith("it turns off a training behaviour (layer drop, masking, "
                                   "noise or freezing, by its name)")
    assert fix["status"] in SEMANTIC_GAINED, fix["reason"]
    if fix["status"] == CHANGES_SEMANTICS:
        assert fix["reason"].startswith(f"changes what the model computes: {fix['changes']}. "
                                        "Compiled, the switched model matches its own eager run")


def test_a_switch_that_freezes_learning_is_never_plain_verified():
    """A fresh-eyes run on HuBERT in train mode: `_requires_grad` VERIFIED (the only status
    that recommends) with the title's "(changes training semantics)" and no word on it. The
    gain is proven (2 -> 1 graphs, same outputs on these inputs); the status and its reason
    say that it changes what the model learns."""
    (fix,) = [f for f in fixes_in_process(f"{CASES}:SpeechModel", "4,16", train=True)
              if f["fix_id"] == "switch:_requires_grad=not current"]
    assert "(changes training semantics)" in fix["title"]
    assert fix["outputs_match"] and fix["status"] in SEMANTIC_GAINED
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
    assert fix["changes"] == ("it turns off a training behaviour (layer drop, masking, noise or "
                              "freezing, by its name); on these inputs the outputs are the same")
    # the code sets the value a person should set (issue 45 §3), never `x = not x`
    assert fix["setting"].endswith("module._requires_grad = False") and "not " not in \
        fix["setting"]
    assert "= False" in fix["title"] and "not current" not in fix["title"]


def test_a_switch_that_removes_a_submodule_says_so_although_outputs_match():
    """BltModel's `patcher = None` was VERIFIED 5 -> 1 graphs, its outputs matching only
    because the random patcher never fired. Removing a submodule is measured on the switched
    copy and named, with the parameters it no longer uses; never plain verified."""
    (fix,) = [f for f in fixes_in_process(f"{CASES}:PatchedModel", "4,16")
              if f["fix_id"] == "switch:patcher=None"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
    assert fix["outputs_match"] and fix["status"] in SEMANTIC_GAINED, fix["reason"]
    assert fix["changes"] == "removes patcher from the model (272 parameters no longer used)"
    assert not fix["verified"]


def test_a_switch_that_breaks_the_model_is_not_applicable_and_never_blames_the_inputs():
    """Seen on transformers' SEW: `project_features = not current` fails with a shape mismatch;
    the reason said "check --input-shape / --dtype", although the original ran with them."""
    fixes = fixes_in_process(f"{CASES}:ProjectedFeatures", "4,16")
    (switch,) = [f for f in fixes if f["fix_id"].startswith("switch:project_features")]
    assert switch["status"] == "not applicable"
    assert "with it, the model fails (the original runs with the same inputs)" in \
        switch["reason"] and "--input-shape" not in switch["reason"]
    assert "mat1 and mat2 shapes cannot be multiplied" in switch["reason"]
