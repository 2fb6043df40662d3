"""--compile-time: the model compiled cold and warm with Inductor, each compiled frame's phases
from Dynamo's compilation metrics, and each frame that exists because of a break tied to it.
Facts only (counts, cache hits, which break, that the parts add up), never a duration's size."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from breakscan import scan
from breakscan.model.jsondata import dumps, loads
from breakscan.model.result import ModelRun
from breakscan.report.github import to_markdown
from breakscan.report.html import to_html
from breakscan.report.terminal import render

from conftest import SAMPLES


@pytest.fixture(scope="module")
def broken():
    return scan(f"{SAMPLES}/per_layer_branch.py:PerLayerBranch", input_shapes=["8,16"],
                compile_time=True)


def test_every_frame_extra_because_of_the_break_is_tied_to_it_and_the_parts_add_up(broken):
    found = broken.compile_time
    assert found is not None and found.backend == "inductor" and found.input_sets == 1
    cold, warm = found.cold, found.warm
    resumes = [f for f in broken.frames if f.is_resume]
    skipped = [f for f in broken.frames if f.skipped]
    assert resumes and skipped  # the sample: a branch in a loop of blocks
    tied = [f for f in cold.frames if f.break_index is not None]
    assert {f.break_index for f in tied} == {0}
    assert len(tied) == len(resumes) + len(skipped)
    assert len(cold.frames) == len(broken.frames) == len(warm.frames)
    for frame in cold.frames:  # disjoint phases that add up to the frame's total
        parts = [frame.dynamo_s, frame.aot_s, frame.inductor_s, frame.codegen_s]
        assert sum(p or 0.0 for p in parts) == pytest.approx(frame.total_s, abs=1e-5)
        assert (frame.restart_s or 0.0) <= frame.dynamo_s + 1e-6
        assert not frame.recompile
    skipped_frame = next(f for f in cold.frames if (f.name, f.file, f.line) in {
        (s.name, s.file, s.first_line) for s in skipped})
    assert skipped_frame.restart_s and skipped_frame.aot_s is None  # traced, thrown away
    assert cold.frames_s <= cold.wall_s and warm.frames_s <= warm.wall_s
    assert found.breaks_s == pytest.approx(sum(f.total_s for f in tied), abs=1e-5)
    # the cold run starts from an empty cache folder, the warm one finds what it left
    assert cold.cache_misses and not cold.cache_hits
    assert warm.cache_hits == cold.cache_misses and not warm.cache_misses


def test_compile_time_crosses_the_process_boundary_and_is_in_json_and_the_terminal(broken):
    again = loads(dumps(broken))
    assert again.compile_time == broken.compile_time
    data = broken.to_dict()["compile_time"]
    assert data["cold"]["frames_s"] == broken.compile_time.cold.frames_s
    assert data["breaks_s"] == broken.compile_time.breaks_s
    assert {"restart_s", "recompile_s"} <= set(data) and "cache_hits" in data["warm"]
    out = io.StringIO()
    render(broken, Console(file=out, width=100, color_system=None))
    text = out.getvalue()
    assert "Compile time (backend=inductor)" in text and "[break #1]" in text
    assert re.search(r"forward\(\) after \S*per_layer_branch\.py:\d+ \[break #1\]", text)
    cold = sum(f.total_s for f in broken.compile_time.cold.frames if f.break_index == 0)
    assert "its extra frames took" in text and "to compile, cold" in text and cold > 0
    runs = [ModelRun(target="per_layer_branch.py:PerLayerBranch", result=broken)]
    rows = [line for line in to_markdown(runs).splitlines() if "| break #1 |" in line]
    assert len(rows) == len([f for f in broken.compile_time.cold.frames
                             if f.break_index is not None])
    page = to_html(runs)
    assert "<h3>Compile time</h3>" in page
    assert page.count('aria-label="cold compile time per compiled frame"') == 1


def test_recompiles_over_other_inputs_are_counted_with_their_reason():
    result = scan(f"{SAMPLES}/per_layer_branch.py:PerLayerWhere", input_shapes=["8,16"],
                  vary_batch="8,3", compile_time=True)
    found = result.compile_time
    assert found.input_sets == 3  # the first call's inputs, then each --vary-batch size
    assert not any(f.break_index is not None for f in found.cold.frames)  # no break
    recompiles = [f for f in found.cold.frames if f.recompile]
    assert len(recompiles) == result.summary.recompile_count == 1
    assert "size mismatch" in (recompiles[0].recompile_reason or "")
    assert found.recompile_s == pytest.approx(recompiles[0].total_s, abs=1e-6)
