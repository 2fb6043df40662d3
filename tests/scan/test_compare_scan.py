"""`breakscan compare`: every sample pair, the fixed twin measurably better, outputs checked.

The pairs are compared in this process (the same scans and the same output check the CLI runs
in child processes); the CLI's own contract, child processes included, is tested on one pair in
tests/cli/test_compare.py (with the same `assert_the_twin_wins`), and that every break category
has a pair in tests/unit/test_compare_unit.py.
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from breakscan import ScanOptions, TimingOptions, scan
from breakscan.model.jobs import OutputsRequest
from breakscan.pipeline.outputs_job import outputs_job

from conftest import assert_the_twin_wins, sample_expectations

# A broken twin that does not break on the installed torch (SignatureProbe on 2.14) has
# nothing for its fixed twin to win.
BREAKS = {e.name: e.facts.get("breaks") for e in sample_expectations()}
PAIRS = [(good, good.facts["twin_of"]) for good in sample_expectations()
         if "twin_of" in good.facts and BREAKS.get(good.facts["twin_of"]) != "0"]
VARY = {"ShapeBranch": "2,4,16"}


def outputs_of_both(request: dict, on_stage) -> tuple:
    """compare's outputs job run here, its ``OutputsCheck`` as the tuple the assertions read."""
    found = outputs_job(OutputsRequest(request["a"], request["b"],
                                       ScanOptions.from_dict(request["options"])), on_stage)
    return found.weights_shared, found.correctness, found.note, found.ab


def _compare_in_process(a: str, b: str, vary_batch: str | None) -> dict:
    """compare's document, made in this process: both scans, then A's weights into B."""
    options = ScanOptions(input_shapes=["8,16"], vary_batch=vary_batch,
                          timing=TimingOptions(backend="eager", max_run_time=0.1))
    shared, outputs, _, ab = outputs_of_both({"a": a, "b": b, "options": options.to_dict()},
                                             lambda *_: None)
    return {"a": {"result": scan(a, options).to_dict()}, "b": {"result": scan(b, options).to_dict()},
            "weights_shared": shared, "outputs": asdict(outputs),
            "ab": asdict(ab) if ab else None}





@pytest.mark.parametrize("good, bad", PAIRS, ids=[f"{b}-{g.name}" for g, b in PAIRS])
def test_the_fixed_twin_wins(good, bad):
    assert_the_twin_wins(_compare_in_process(f"{good.file}:{bad}", good.target,
                                              VARY.get(bad)), good)




_OP_MODEL = '''import torch
from torch import nn


@torch.library.custom_op("breakscan_tests::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * {factor}


@scale.register_fake
def _(x):
    return torch.empty_like(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return scale(self.fc(x))
'''


def test_two_versions_of_one_custom_op_are_said_to_run_as_one(tmp_path):
    """A file and its edited copy that both define `breakscan_tests::scale`, differently: one
    process holds one definition per name, so A runs B's op (before: A's op object called
    freed memory). The comparison says so instead of presenting matching outputs as A's."""
    for name, factor in (("v1.py", 2.0), ("v2.py", 3.0)):
        (tmp_path / name).write_text(_OP_MODEL.format(factor=factor))
    options = ScanOptions(input_shapes=["8,16"])
    shared, outputs, note, _ = outputs_of_both(
        {"a": f"{tmp_path}/v1.py:Net", "b": f"{tmp_path}/v2.py:Net",
         "options": options.to_dict()}, lambda *_: None)
    assert shared and outputs.match  # both ran v2's op: equal outputs, and the note says why
    assert note == ("A and B define custom op breakscan_tests::scale with different code; one "
                    "process holds one definition per name, so A ran B's: the outputs compare "
                    "the rest of the models")
    same = tmp_path / "v2_copy.py"
    same.write_text(_OP_MODEL.format(factor=3.0))
    _, outputs, note, _ = outputs_of_both(  # v1 loaded again replaces the live v2 first
        {"a": f"{tmp_path}/v1.py:Net", "b": f"{tmp_path}/v1.py:Net",
         "options": options.to_dict()}, lambda *_: None)
    assert outputs.match and note is None  # the same op's code again: nothing to say
    _, outputs, note, _ = outputs_of_both(
        {"a": f"{tmp_path}/v2.py:Net", "b": f"{same}:Net", "options": options.to_dict()},
        lambda *_: None)
    assert outputs.match and note is None
