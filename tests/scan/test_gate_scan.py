"""The gate on scans run in this process: its checks in the JSON document, and the
machine-readable formats (JUnit, SARIF, GitHub annotations, Markdown) of gated runs.

The gate's exit codes, baselines and `check` through the real CLI are in tests/cli/test_gate.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from breakscan import scan
from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions, ScanOptions

from conftest import SAMPLES, locate


def test_gate_in_json():
    result = scan(f"{SAMPLES}/loop_break.py:PrintInLoop", input_shapes=["8,16"])
    gate = evaluate(result, GateOptions(fullgraph=True, fail_on=["print"]))
    result.gate = gate
    doc = result.to_dict()["gate"]
    assert doc["passed"] is False
    assert {c["name"]: (c["limit"], c["actual"], c["passed"]) for c in doc["checks"]} == {
        "fail_on:print": (0, 1, False),  # the print that made the frame skip
        "fullgraph": (0, 2, False)}  # one break + one skipped frame


# --- machine-readable formats ---------------------------------------------------------------

@pytest.fixture(scope="module")
def failing_runs():
    from breakscan.runs.runner import run_model

    # The formats are the subject, not isolation: the scans run in this process.
    gate, options = GateOptions(max_breaks=0), ScanOptions(input_shapes=["8,16"])
    return [run_model(f"{SAMPLES}/{target}", options, gate, isolated=False)
            for target in ("nested_break.py:NestedBreak", "item_logging.py:LogOutsideForward",
                           "nope.py:X")]


def test_junit_counts(failing_runs):
    from breakscan.report.junit import to_junit

    root = ET.fromstring(to_junit(failing_runs).split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert [(s.get("tests"), s.get("failures"), s.get("errors")) for s in suites] == [
        ("2", "1", "0"), ("2", "0", "0"), ("1", "0", "1")]
    failure = suites[0].find("testcase[@name='max_breaks']/failure")
    assert failure.get("message") == "max_breaks: 1 > limit 0"
    assert "nested_helpers.py:7" in failure.text


def test_sarif_structure(failing_runs):
    from breakscan.report.sarif import to_sarif

    doc = json.loads(to_sarif(failing_runs))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    first = run["results"][0]
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] == "item"
    location = first["locations"][0]["physicalLocation"]
    _, line = locate("peak = h.abs().max().item()", SAMPLES / "nested_helpers.py")
    assert location["artifactLocation"]["uri"] == "sample_models/nested_helpers.py"
    assert location["region"] == {"startLine": line}
    assert first["level"] == "error"  # the gate failed for this model
    assert run["results"][-1]["ruleId"] == "scan_error"


def test_github_annotations_and_markdown(failing_runs):
    from breakscan.report.github import to_github, to_markdown

    lines = to_github(failing_runs).splitlines()
    _, line = locate("peak = h.abs().max().item()", SAMPLES / "nested_helpers.py")
    assert lines[0].startswith(f"::error file=sample_models/nested_helpers.py,line={line},"
                               "title=graph break%3A item::")
    assert "%0Afix: " in lines[0] and "\n" not in lines[0]
    assert any(l.startswith("::error title=breakscan gate::") for l in lines)
    md = to_markdown(failing_runs)
    assert "| model | status |" in md and "**FAIL**" in md and "| pass |" in md


def test_nothing_compiled_never_passes_a_gate_on_graph_count_alone():
    """Issue 46 §3: a forward Dynamo skips entirely has 0 graphs: `--max-graphs` fails it and
    says why, and `--fullgraph` fails it on every release (2.15's fullgraph=True fails when no
    frame compiled)."""
    from conftest import FIXTURES

    result = scan(f"{FIXTURES}/models/nothing_compiled.py:EagerLoop",
                  ScanOptions(input_shapes=["8,16"]))
    assert result.summary.graph_count == 0 and result.summary.frames_skipped == 1
    gate = evaluate(result, GateOptions(max_graphs=3, fullgraph=True))
    graphs, fullgraph = gate.checks
    assert not gate.passed and (graphs.name, graphs.passed) == ("max_graphs", False)
    assert graphs.detail == "no compiled frame: forward ran entirely eagerly (1 frame(s) skipped)"
    assert (fullgraph.name, fullgraph.passed) == ("fullgraph", False)
    assert "torch._dynamo.graph_break()" in fullgraph.detail
