"""Compiled execution (--time): structure and facts, never a timing threshold.

Only the tests about compiled execution use inductor (they share TORCHINDUCTOR_CACHE_DIR in CI);
the rest use the cheap eager backend.
"""

from __future__ import annotations

import pytest
import torch

from breakscan import TimingOptions, scan
from breakscan.pipeline.load import load_target
from breakscan.pipeline.call import ModelCall
from breakscan.pipeline.measure import measure
from breakscan.pipeline.outputs import compare_outputs

from conftest import FIXTURES, SAMPLES, sample_expectations

EAGER_BACKEND = TimingOptions(backend="eager", max_run_time=0.2)


class Pointwise(torch.nn.Module):
    """A pointwise chain: the kind of model inductor fuses."""

    def forward(self, x):
        return torch.tanh(x * 2 + 1).sigmoid() * x


def test_inductor_timings_structure_and_correctness():
    before = torch.get_num_threads()
    report = measure(ModelCall(Pointwise(), (torch.randn(64, 64),), {}, device=torch.device("cpu")),
                     TimingOptions(threads=1, max_run_time=0.3))
    assert torch.get_num_threads() == before  # the thread count is restored
    assert report.backend == "inductor" and report.threads == 1
    for timing in (report.eager, report.compiled, report.fullgraph):
        assert timing.runs > 0 and timing.median_s > 0 and timing.iqr_s >= 0
        assert timing.threads == 1
    assert report.compile_s > 0 and report.fullgraph_error is None
    assert report.speedup == pytest.approx(report.eager.median_s / report.compiled.median_s)
    assert report.correctness.match and report.correctness.max_abs_error < 1e-5
    assert 0.0 <= report.outside_share <= 1.0  # inductor marks its compiled-graph calls


def test_break_makes_fullgraph_fail_and_is_recorded():
    result = scan(f"{SAMPLES}/print_in_forward.py:PrintInForward", input_shapes=["8,16"],
                  timing=EAGER_BACKEND)
    t = result.timings
    assert t.compiled is not None and t.correctness.match
    assert t.fullgraph is None and "print" in t.fullgraph_error
    assert t.outside_share is None  # the eager backend has no compiled-graph events


def test_fullgraph_compiles_item_models_and_says_why():
    result = scan(f"{SAMPLES}/item_logging.py:LogInsideForward", input_shapes=["8,16"],
                  timing=EAGER_BACKEND)
    assert result.timings.fullgraph is not None
    assert any("capture_scalar_outputs" in n for n in result.timings.notes)


def test_mismatch_is_reported_not_hidden():
    # compiled, the output is scaled differently (a model that counts its calls compares
    # equal now: each side's call 1 from the same state, tests/scan/test_state.py)
    result = scan(f"{FIXTURES}/models/misbehaving.py:DiffersWhenCompiled", input_shapes=["8,16"],
                  timing=EAGER_BACKEND)
    c = result.timings.correctness
    assert not c.match and c.max_abs_error > 0 and "output 0" in c.message


def test_fullgraph_past_the_recompile_limit_is_reported_not_raised():
    # each call recompiles (self.calls is guarded): fullgraph=True fails once the limit is hit
    with torch._dynamo.config.patch(recompile_limit=2):
        result = scan(f"{FIXTURES}/models/misbehaving.py:ScalesByCallCount",
                      input_shapes=["8,16"], timing=EAGER_BACKEND)
    t = result.timings
    assert t.fullgraph is None and t.compiled is not None
    assert t.fullgraph_error == ("a later call recompiled past the recompile limit (2); "
                                 "without fullgraph it runs eagerly")


def test_compare_outputs_on_nested_structures():
    a = {"y": torch.ones(3), "n": 2, "z": (torch.zeros(2),)}
    assert compare_outputs(a, {"y": torch.ones(3), "n": 2, "z": (torch.zeros(2),)}).match
    bad = compare_outputs(a, {"y": torch.ones(3) * 1.5, "n": 2, "z": (torch.zeros(2),)})
    assert not bad.match and bad.max_abs_error == pytest.approx(0.5)
    assert bad.max_rel_error == pytest.approx(0.5)
    assert not compare_outputs(a, {"y": torch.ones(3), "n": 3, "z": (torch.zeros(2),)}).match
    assert not compare_outputs((torch.ones(1),), (torch.ones(1), torch.ones(1))).match
    opaque = compare_outputs((torch.ones(1), object()), (torch.ones(1), object()))
    assert opaque.match and opaque.message == "1 non-tensor output(s) not compared"
    half = compare_outputs(torch.ones(4, dtype=torch.float16),
                           torch.ones(4, dtype=torch.float16) + 1e-4)
    assert half.match  # float16 tolerances, not float32's


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_timings():
    result = scan(f"{SAMPLES}/tensor_branch.py:TensorWhere", input_shapes=["8,16"],
                  device="cuda", timing=TimingOptions(max_run_time=0.3))
    assert result.device.startswith("cuda") and result.timings.compiled is not None
    assert result.timings.correctness.match


@pytest.mark.parametrize("expect", sample_expectations(), ids=str)
def test_every_sample_model_gets_timings_recompiles_and_a_correctness_verdict(expect):
    fast = TimingOptions(backend="eager", max_run_time=0.02)
    result = scan(expect.target, input_shapes=["8,16"], timing=fast, vary_batch="2,4")
    if "compile_error" in expect.facts:  # nothing can run compiled: said, not measured
        assert result.compile_error and result.timings is None and result.recompiles is None
        assert "recompiles and timings not measured: torch.compile fails" in result.notes[-1]
        return
    assert result.recompiles.input_sets == [[[2, 16]], [[4, 16]]]
    assert result.summary.recompile_count == len(result.recompiles.recompiles)
    t = result.timings
    assert t.eager.runs > 0 and t.compiled.runs > 0
    # a spread beyond its median (a loaded machine) is no speedup, and the notes say so
    assert t.speedup > 0 if t.speedup is not None else \
        any(n.startswith("speedup not measured") for n in t.notes)
    # random.random(), np.random and torch.rand: torch, random and NumPy are all reset before
    # the eager and the compiled call, so even RandomJitter and NumpyRandom compare equal;
    # ForkedNoise draws inside fork_rng(), which puts the state back: it still counts
    assert t.correctness.match
    assert t.random_comparable is (expect.name in ("RandomJitter", "NumpyRandom",
                                                   "TorchJitter", "SeedInForward", "ForkedNoise"))
    assert (t.fullgraph is None) == (t.fullgraph_error is not None)


def test_skipped_frame_runs_entirely_outside_compiled_graphs():
    loaded = load_target(f"{SAMPLES}/loop_break.py:PrintInLoop", input_shapes=["8,16"])
    report = measure(ModelCall(loaded.fn, loaded.args, {}, device=torch.device("cpu")),
                     TimingOptions(max_run_time=0.1, fullgraph=False))
    assert report.outside_share == 1.0 and report.graph_s_per_call == 0.0


def test_a_spread_that_never_settles_is_marked_noisy():
    """A call that gets slower with every run (1 ms, then 2 % more each call: a machine heating
    up) keeps its IQR far above 10 % of its median for the whole budget, however many calls a
    timed block holds: the timing says so, and the terminal explains what it means."""
    import itertools
    import time

    from breakscan.pipeline.measure import _time
    from breakscan.report.wording import noise_note
    from breakscan.model.verdicts import TimingReport

    calls = itertools.count()

    def slowing() -> None:
        time.sleep(0.001 * 1.02 ** next(calls))  # compounding: the same drift at any call count

    timing = _time(slowing, threads=1, max_run_time=0.5)
    # the spread measured above 10 %, or (torch 2.14 times it as one block) not measurable
    assert timing.noisy, timing
    report = TimingReport(device="cpu", threads=1, backend="eager", mode=None, eager=timing,
                          load_average=0.5)
    assert report.noisy == ["eager"]
    assert noise_note(report).startswith("noisy: eager: the spread stayed above 10 % of the "
                                         "median for the whole time budget, or too few timed "
                                         "blocks fit in it to measure the spread; load average "
                                         "0.5")


def test_outputs_are_compared_relative_to_their_magnitude():
    """A value collapsing from 8e-9 to 0 is a change (an absolute 1e-5 tolerance passed it);
    a float32 reduction's reordering on large values is not; shapes must be equal."""
    tiny = torch.full((4,), 8e-9)
    collapsed = compare_outputs(tiny, torch.zeros(4))
    assert not collapsed.match and collapsed.scaled_error == pytest.approx(1.0)
    big = torch.linspace(1, 1000, 64)
    reordered = compare_outputs(big, big + 1e-4)
    assert reordered.match and reordered.scaled_error < 2e-7
    drift = compare_outputs(big, big * (1 + 3.5e-4))
    assert not drift.match and drift.scaled_error == pytest.approx(3.5e-4, rel=1e-2)
    assert compare_outputs(torch.zeros(3), torch.zeros(3)).scaled_error == 0.0
    wrong_shape = compare_outputs(torch.ones(2, 3), torch.ones(3))
    assert not wrong_shape.match and wrong_shape.scaled_error is None
    nan = torch.tensor([1.0, float("nan")])
    assert compare_outputs(nan, nan.clone()).match
    assert not compare_outputs(nan, torch.tensor([1.0, 2.0])).match
    assert not compare_outputs(torch.arange(3), torch.arange(3) + 1).match


def test_every_compared_call_starts_from_the_same_random_state():
    """torch, random and NumPy are reset before a compared call; whether a call draws random
    numbers is seen from the generators."""
    import random

    import numpy

    from breakscan.pipeline.outputs import draws_random_numbers

    def draw():
        return (torch.rand(2), random.random(), float(numpy.random.rand()))

    first, second = draws_random_numbers(draw), draws_random_numbers(draw)
    assert first[0] and second[0]
    assert torch.equal(first[1][0], second[1][0]) and first[1][1:] == second[1][1:]
    assert draws_random_numbers(lambda: torch.ones(2))[0] is False
    assert draws_random_numbers(lambda: random.random())[0] is True


def test_a_python_float_read_off_a_float32_tensor_is_judged_as_float32():
    """`float(t.mean())` compiled with Inductor rounds differently in the 8th digit (seen with
    capture_scalar_outputs: 'CHANGES OUTPUTS' for -0.12337059527635574 vs -0.12337060272693634);
    a real difference still fails, and NaN only matches NaN."""
    assert compare_outputs({"m": -0.12337059527635574}, {"m": -0.12337060272693634}).match
    assert not compare_outputs({"m": -0.1233}, {"m": -0.1234}).match
    assert compare_outputs(float("nan"), float("nan")).match
    assert not compare_outputs(float("nan"), 1.0).match
    assert not compare_outputs(float("inf"), 1e308).match
    assert not compare_outputs(2, 3).match and compare_outputs(True, True).match
