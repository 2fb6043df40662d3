"""Locations and cells that must survive odd file names and narrow terminals (issue 33)."""

from __future__ import annotations

import dataclasses
import io
import json

from rich.console import Console

from breakscan.frames import parse_stack, provenance_frame
from breakscan.report import render_file_format
from breakscan.report.html import to_html
from breakscan.report.terminal_kernels import _lines, print_kernels

from conftest import recorded_runs

QUOTED = '/work/a "quoted" dir/my"model.py'


def test_a_quote_in_a_file_name_keeps_its_stack_frames():
    (frame,) = parse_stack(f'  File "{QUOTED}", line 30, in forward\n    v, _ = torch.sort(h)\n')
    assert (frame.file, frame.line, frame.function, frame.code) == \
        (QUOTED, 30, "forward", "v, _ = torch.sort(h)")
    step = provenance_frame(f'# File "{QUOTED}", line 7, in f, code: y = x.sum()')
    assert (step.file, step.line, step.code) == (QUOTED, 7, "y = x.sum()")


def _sort_with_quoted_file():
    sort, _ = recorded_runs("kernels")
    sort.result.kernel_findings = [dataclasses.replace(f, file=QUOTED)
                                   for f in sort.result.kernel_findings]
    return sort


def test_kernel_findings_keep_their_location_in_github_and_sarif():
    sort = _sort_with_quoted_file()
    (finding,) = sort.result.kernel_findings
    github = render_file_format([sort], "github", single=False)  # its gate failed: errors
    assert f"::error file={QUOTED},line={finding.line},title=BS201 kernel%3A fallback::" \
        in github
    sarif = json.loads(render_file_format([sort], "sarif", single=False))
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "BS201"]
    region = result["locations"][0]["physicalLocation"]
    assert region["region"]["startLine"] == finding.line
    assert region["artifactLocation"]["uri"].endswith("my%22model.py")
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rules[result["ruleIndex"]]["id"] == "BS201" and rules[-1]["id"] == "recompile"


def test_the_kernel_table_keeps_line_numbers_before_paths():
    long = "/a/rather/long/directory/name/that/no/terminal/fits/m07_binary_ops.py"
    assert _lines([f"{long}:46", f"{long}:47", f"{long}:48", f"{long}:50"]) == \
        "m07_binary_ops.py:46, 47, 48 (+1)"
    # Two files of one name: each by the end of its path that tells them apart, cut on the left.
    assert _lines(["/x/a/model.py:3", "/x/b/model.py:4"]) == "…/a/model.py:3, …/b/model.py:4"


def _kernel_table(width: int) -> str:
    """The recorded SortForMax's kernel table in a user's deep folder, kernels named and fused
    as a real model's are (long names, many ops), at ``width`` columns."""
    sort = _sort_with_quoted_file()
    long = "/home/someone/projects/probe_models/new_user_session/m07_binary_ops.py"
    for kernel in sort.result.graphs[0].inductor.kernels:
        line = int(kernel.lines[0].rpartition(":")[2])
        kernel.lines = [f"{long}:{line}", f"{long}:{line + 10}", f"{long}:{line + 100}",
                        f"{long}:{line + 120}"]
        kernel.name += "_add_mul_relu_sigmoid_tanh_where_0"
        kernel.aten_ops += ["aten.mul.Tensor", "aten.add.Tensor", "aten.sigmoid.default",
                            "aten.tanh.default", "aten.where.self"]
    console = Console(record=True, width=width, file=io.StringIO())
    print_kernels(sort.result, console)
    return console.export_text()


def test_at_110_and_80_columns_the_kernel_table_keeps_each_file_name_and_its_lines():
    for width in (110, 80):
        text = _kernel_table(width)
        for kernel in _sort_with_quoted_file().result.graphs[0].inductor.kernels:
            line = int(kernel.lines[0].rpartition(":")[2])
            assert f"m07_binary_ops.py:{line}," in text, (width, text)
        assert "…/m07" not in text and "m07_bin…" not in text


def _cost_cells(run) -> list[str]:
    return [chunk.split("</dd>")[0] for chunk in to_html([run]).split("<dt>cost</dt><dd>")[1:]]


def test_a_break_without_a_measured_cost_shows_a_dash_in_its_cost_cell():
    """A dash, as every other empty cell of the page; why it is empty on hover."""
    run, = recorded_runs("fix")  # PerLayerBranch --fix: one break, timed
    (brk,) = run.result.breaks
    brk.cost_s_per_call = 12.5e-6
    assert _cost_cells(run) == ["12.5 µs per call outside compiled graphs"]
    brk.cost_s_per_call = None
    assert _cost_cells(run) == ['<span title="not measured">-</span>']
    run.result.timings, run.result.fixes = None, []
    assert _cost_cells(run) == ['<span title="not measured: run with --time">-</span>']
