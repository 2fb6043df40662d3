"""Locations and cells that must survive odd file names and narrow terminals (issue 33)."""

from __future__ import annotations

import dataclasses
import json

from breakscan.frames import parse_stack, provenance_frame
from breakscan.report import render_file_format
from breakscan.report.html import to_html
from breakscan.report.terminal_kernels import _lines

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
    assert _lines(["/x/a/model.py:3", "/x/b/model.py:4"]).count("model.py") == 2


def test_a_break_without_a_measured_cost_has_no_sentence_in_its_cost_cell():
    sort = _sort_with_quoted_file()
    page = to_html([sort])
    for chunk in page.split("<dt>cost</dt><dd>")[1:]:
        cell = chunk.split("</dd>")[0]
        assert cell in ("-", "- (not measured: --time)") or cell.endswith(
            " per call outside compiled graphs"), cell
