"""The reporters and the gate on RECORDED results: real scans saved in tests/fixtures/results
(``python tests/fixtures/results/record.py`` writes them), rendered and gated with no scan.

gate_runs: NestedBreak (an item break, gated with --max-breaks 0: fails), LogOutsideForward (no
break: passes) and a target whose file does not exist (usage error); compile_error: CompileFails;
program: ``breakscan run`` of train_loop.py. The facts checked are the samples' own
(their docstrings' ``Expected scan``/``Expected run`` blocks, lines found with ``locate``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions
from breakscan.runs.runner import gated
from breakscan.report import FILE_FORMATS, render_file_format
from breakscan.report.terminal import render_runs
from breakscan.model.result import SCHEMA_VERSION
from breakscan.model.verdicts import Check, GateResult

from conftest import (FIXTURES, ROOT, SAMPLES, locate, program_expectations, recorded_runs,
                      sample_expectations)


def _sample(name: str):
    (expect,) = [e for e in sample_expectations() if e.name == name]
    return expect


def _where(fact: str, default_file) -> tuple[str, int]:
    """The line a fact names, as reports show it from the repository root."""
    file, line = locate(fact, default_file)
    return file.relative_to(ROOT).as_posix(), line


NESTED, OUTSIDE, FAILS = _sample("NestedBreak"), _sample("LogOutsideForward"), \
    _sample("CompileFails")
PROGRAM_FILE = SAMPLES / "train_loop.py"
(PROGRAM,) = [facts for path, facts in program_expectations() if path == PROGRAM_FILE]
MISSING = f"{SAMPLES}/nope.py:X"
NESTED_AT = _where(NESTED.facts["break_at"], NESTED.file)  # sample_models/nested_helpers.py, 7
FAILS_AT = _where(FAILS.facts["compile_error"], FAILS.file)  # sample_models/compile_error.py
PROGRAM_AT = _where(PROGRAM["break_at"], PROGRAM_FILE)
NESTED_CODE = NESTED.facts["break_at"].split(": ", 1)[1]
RECORDED = ("gate_runs", "compile_error", "program")
# Per recorded file, per run: exit code, graphs (None: no result), and where its break is.
EXITS = {"gate_runs": [1, 0, 2], "compile_error": [3], "program": [0]}
GRAPHS = {"gate_runs": [int(NESTED.facts["graphs"]), int(OUTSIDE.facts["graphs"]), None],
          "compile_error": [int(FAILS.facts["graphs"])], "program": [int(PROGRAM["graphs"])]}
BREAK_AT = {"gate_runs": NESTED_AT, "compile_error": FAILS_AT, "program": PROGRAM_AT}


@pytest.fixture
def at_root(monkeypatch):
    """Reports show paths from the working directory (CI formats: from $GITHUB_WORKSPACE)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


def _squeeze(text: str) -> str:
    """The terminal's text with its line wrapping undone."""
    return " ".join(text.split())


# -- the recorded results -----------------------------------------------------------------------

@pytest.mark.parametrize("name", RECORDED)
def test_the_recorded_results_are_this_versions_schema(name):
    """A schema bump fails here until the results are recorded again (`python
    tests/fixtures/results/record.py`): no test below reads an old schema without saying so."""
    versions: list = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if "schema_version" in node:
                versions.append(node["schema_version"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads((FIXTURES / "results" / f"{name}.json").read_text()))
    runs = recorded_runs(name)
    assert versions == [SCHEMA_VERSION] * sum(run.result is not None for run in runs)
    assert [run.result.schema_version for run in runs if run.result] == versions


def test_the_recorded_runs_hold_what_the_samples_state():
    nested, outside, missing = recorded_runs("gate_runs")
    assert [nested.target, outside.target, missing.target] == [NESTED.target, OUTSIDE.target,
                                                                MISSING]
    s = nested.result.summary
    assert (s.graph_count, s.graph_break_count, s.break_records) == (
        int(NESTED.facts["graphs"]), int(NESTED.facts["breaks"]), int(NESTED.facts["records"]))
    (brk,) = nested.result.breaks
    assert (brk.category, brk.file, brk.line, brk.code) == (
        NESTED.facts["category"], str(ROOT / NESTED_AT[0]), NESTED_AT[1], NESTED_CODE)
    s = outside.result.summary
    assert (s.graph_count, s.graph_break_count, outside.result.breaks) == (
        int(OUTSIDE.facts["graphs"]), int(OUTSIDE.facts["breaks"]), [])
    assert missing.result is None and missing.error.startswith(
        f"target file not found: {SAMPLES}/nope.py")
    (fails,) = recorded_runs("compile_error")
    error = fails.result.compile_error
    assert (error.exception, error.code, error.file, error.line) == (
        FAILS.facts["exception"], FAILS.facts["compile_error"], str(ROOT / FAILS_AT[0]),
        FAILS_AT[1])
    assert fails.result.summary.graph_count == int(FAILS.facts["graphs"])
    (program,) = recorded_runs("program")
    s = program.result.summary
    assert (s.graph_count, s.graph_break_count, s.recompile_count) == (
        int(PROGRAM["graphs"]), int(PROGRAM["breaks"]), int(PROGRAM["recompiles"]))
    (brk,) = program.result.breaks
    assert (brk.file, brk.line, brk.code) == (str(PROGRAM_FILE), PROGRAM_AT[1],
                                              PROGRAM["break_at"])
    for name, codes in EXITS.items():
        assert [run.exit_code for run in recorded_runs(name)] == codes, name


# -- every file format ---------------------------------------------------------------------------

def test_the_file_formats_are_the_ones_tested_here():
    """A new format fails here until the tests below know what it must show."""
    assert set(FILE_FORMATS) == {"json", "junit", "sarif", "github", "markdown", "html"}
    assert set(LOCATION) == set(FILE_FORMATS)


# How each format shows a break's (or compile error's) file and line.
LOCATION = {
    "json": lambda file, line: [f'"file": "{ROOT / file}"', f'"line": {line}'],
    "junit": lambda file, line: [f"{ROOT / file}:{line}"],
    "sarif": lambda file, line: [f'"uri": "{file}"', f'"startLine": {line}'],
    "github": lambda file, line: [f"file={file},line={line},"],
    "markdown": lambda file, line: [f"`{file}:{line}`"],
    "html": lambda file, line: [f"{file}:{line}"],
}


@pytest.mark.parametrize("fmt", sorted(FILE_FORMATS))
def test_every_format_shows_where_a_compile_error_is(fmt, at_root):
    text = render_file_format(recorded_runs("compile_error"), fmt, single=True)
    for needle in LOCATION[fmt](*FAILS_AT):
        assert needle in text, (needle, text[:2000])


@pytest.mark.parametrize("fmt", sorted(FILE_FORMATS))
@pytest.mark.parametrize("name", ["gate_runs", "program"])
def test_every_format_shows_where_the_break_is(name, fmt, at_root):
    runs = recorded_runs(name)
    text = render_file_format(runs, fmt, single=len(runs) == 1)
    for needle in LOCATION[fmt](*BREAK_AT[name]):
        assert needle in text, (needle, text[:2000])


@pytest.mark.parametrize("name", RECORDED)
def test_json_carries_each_results_summary_and_exit_code(name, at_root):
    runs = recorded_runs(name)
    doc = json.loads(render_file_format(runs, "json", single=False))
    assert (doc["schema_version"], doc["exit_code"], doc["passed"]) == (
        SCHEMA_VERSION, max(EXITS[name]), max(EXITS[name]) == 0)
    assert [m["exit_code"] for m in doc["models"]] == EXITS[name]
    assert [m["result"]["summary"]["graph_count"] if m["result"] else None
            for m in doc["models"]] == GRAPHS[name]
    for model, run in zip(doc["models"], runs):
        assert model["target"] == run.target
        if run.result is not None:
            summary = dataclasses.asdict(run.result.summary)
            if run.result.recompiles is None:  # not measured: null, not 0 (schema 1.22)
                summary["recompile_count"] = None
            assert model["result"]["summary"] == summary
            single = json.loads(render_file_format([run], "json", single=True))
            assert single["summary"] == summary
            assert single["schema_version"] == SCHEMA_VERSION


def test_json_of_one_model_names_its_break():
    doc = json.loads(render_file_format(recorded_runs("gate_runs")[:1], "json", single=True))
    (brk,) = doc["breaks"]
    assert (brk["category"], brk["file"], brk["line"], brk["code"]) == (
        NESTED.facts["category"], str(ROOT / NESTED_AT[0]), NESTED_AT[1], NESTED_CODE)
    assert doc["gate"]["passed"] is False


@pytest.mark.parametrize("name, suites, failed", [
    ("gate_runs", [("2", "1", "0"), ("2", "0", "0"), ("1", "0", "1")],
     [("max_breaks", "max_breaks: 1 > limit 0")]),
    ("compile_error", [("2", "1", "0")], [("compiles", "compiles: 1 > limit 0")]),
    ("program", [("1", "0", "0")], []),
])
def test_junit_has_a_testsuite_per_model_and_a_failure_per_failed_check(name, suites, failed,
                                                                         at_root):
    runs = recorded_runs(name)
    root = ET.fromstring(render_file_format(runs, "junit", single=False).encode())
    assert root.tag == "testsuites"
    found = root.findall("testsuite")
    assert [s.get("name") for s in found] == [run.target for run in runs]
    assert [(s.get("tests"), s.get("failures"), s.get("errors")) for s in found] == suites
    failures = [(case.get("name"), case.find("failure").get("message"))
                for case in root.iter("testcase") if case.find("failure") is not None]
    assert failures == failed
    file, line = BREAK_AT[name]
    scan_out = found[0].find("testcase").find("system-out").text
    assert scan_out.startswith(f"graphs {GRAPHS[name][0]}, root-cause breaks ")
    if name != "compile_error":
        assert f"{ROOT / file}:{line}" in scan_out
    else:
        assert root.find(".//failure").text.endswith(f"{ROOT / file}:{line}")
    errors = [e.get("message") for e in root.iter("error")]
    assert errors == ([f"target file not found: {SAMPLES}/nope.py (check the path; it is "
                       f"relative to {ROOT})"] if name == "gate_runs" else [])


@pytest.mark.parametrize("name, located, unlocated", [
    ("gate_runs", [("item", "error", *NESTED_AT)], ["scan_error"]),
    ("compile_error", [("compile_error", "error", *FAILS_AT)], []),
    ("program", [("frame_skipped", "warning", *PROGRAM_AT)]
     + [("recompile", "warning")] * int(PROGRAM["recompiles"]), []),
])
def test_sarif_is_2_1_0_with_each_finding_on_its_line(name, located, unlocated, at_root):
    sarif = json.loads(render_file_format(recorded_runs(name), "sarif", single=False))
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "breakscan"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    got, without = [], []
    for result in run["results"]:
        assert result["level"] in ("error", "warning") and result["message"]["text"]
        if "ruleIndex" in result:
            assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        if not result.get("locations"):
            without.append(result["ruleId"])
            continue
        (loc,) = result["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        where = (physical["artifactLocation"]["uri"], physical["region"]["startLine"])
        got.append((result["ruleId"], result["level"],
                    *(where if result["ruleId"] != "recompile" else ())))
    assert got == located and without == unlocated


def test_github_annotates_the_break_the_gate_and_the_error(at_root):
    lines = render_file_format(recorded_runs("gate_runs"), "github", single=False).splitlines()
    file, line = NESTED_AT
    assert len(lines) == 3
    assert lines[0].startswith(f"::error file={file},line={line},title=graph break%3A "
                               f"{NESTED.facts['category']}::")
    assert f"(GB0124): {NESTED_CODE}%0Afix: " in lines[0]
    assert lines[1] == f"::error title=breakscan gate::{NESTED.target}: max_breaks 1 > limit 0"
    assert lines[2] == (f"::error title=breakscan::{MISSING}: target file not found: "
                        f"{SAMPLES}/nope.py (check the path; it is relative to {ROOT})")


def test_github_annotates_a_compile_error_and_an_ungated_program(monkeypatch, tmp_path):
    """From any folder: paths are relative to $GITHUB_WORKSPACE."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    (fails,) = render_file_format(recorded_runs("compile_error"), "github",
                                  single=True).splitlines()
    assert fails == (f"::error file={FAILS_AT[0]},line={FAILS_AT[1]},title=torch.compile fails::"
                     f"{FAILS.target}: {FAILS.facts['exception']}: RuntimeError when making fake "
                     "tensor call")
    (skipped,) = render_file_format(recorded_runs("program"), "github", single=True).splitlines()
    assert skipped.startswith(f"::warning file={PROGRAM_AT[0]},line={PROGRAM_AT[1]},"
                              f"title=graph break%3A frame_skipped::Whole frame fell back to "
                              f"eager (GB0170): {PROGRAM['break_at']}%0Afix: ")


@pytest.mark.parametrize("name, rows", [
    ("gate_runs", [f"| `{NESTED.target}` | **FAIL** | {NESTED.facts['graphs']} | "
                   f"{NESTED.facts['breaks']} | - | max_breaks (1 &gt; 0) |",
                   f"| `{OUTSIDE.target}` | pass | {OUTSIDE.facts['graphs']} | "
                   f"{OUTSIDE.facts['breaks']} | - |  |",
                   f"| `{MISSING}` | error | | | | target file not found: {SAMPLES}/nope.py "
                   f"(check the path; it is relative to {ROOT}) |"]),
    ("compile_error", [f"| `{FAILS.target}` | **torch.compile fails** | {FAILS.facts['graphs']} "
                       f"| {FAILS.facts['breaks']} | - | compiles (1 &gt; 0) |"]),
    ("program", [f"| `python {PROGRAM_FILE}` | no gate | {PROGRAM['graphs']} | "
                 f"{PROGRAM['breaks']} | {PROGRAM['recompiles']} |  |"]),
])
def test_markdown_has_a_table_row_per_model(name, rows, at_root):
    lines = render_file_format(recorded_runs(name), "markdown", single=False).splitlines()
    header = "| model | status | graphs | breaks | recompiles | failed checks |"
    start = lines.index(header)
    assert lines[start + 1] == "|---|---|---:|---:|---:|---|"
    assert lines[start + 2: start + 2 + len(rows)] == rows
    assert not any(t.startswith("|") for t in lines[start + 2 + len(rows):][:1])  # no other row


def test_markdown_lists_the_break_with_its_line(at_root):
    text = render_file_format(recorded_runs("gate_runs"), "markdown", single=False)
    file, line = NESTED_AT
    assert f"- **{NESTED.facts['category']}** `{file}:{line}` `{NESTED_CODE}` — " in text


@pytest.mark.parametrize("name, raw, escaped", [
    # model-made text with <, > or ': the explanation of a compile error, a call chain's frames
    ("gate_runs", "nested_break.py:48 -> forward()", "nested_break.py:48 -&gt; forward()"),
    ("compile_error", "<built-in function setitem>", "&lt;built-in function setitem&gt;"),
    ("program", "<module>() train_loop.py:", "&lt;module&gt;() train_loop.py:"),
])
def test_html_shows_the_break_and_escapes_model_text(name, raw, escaped, at_root):
    page = render_file_format(recorded_runs(name), "html", single=False)
    file, line = BREAK_AT[name]
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert f"{file}:{line}" in page
    assert escaped in page and raw not in page


# -- the terminal --------------------------------------------------------------------------------

def _terminal(runs) -> str:
    console = Console(record=True, width=100, file=io.StringIO())
    render_runs(runs, console)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def test_terminal_shows_each_models_summary_break_and_verdict(at_root):
    text = _terminal(recorded_runs("gate_runs"))
    lines = text.splitlines()
    file, line = NESTED_AT
    assert lines[0] == NESTED.target
    assert lines[1] == (f"graphs {NESTED.facts['graphs']} · root-cause breaks "
                        f"{NESTED.facts['breaks']} · break records {NESTED.facts['records']} · "
                        "ops 7 · frames skipped 0")
    (row,) = [t for t in lines if f"│ {file}:{line} │" in t]
    assert row.split("│")[2].strip() == NESTED.facts["category"] and NESTED_CODE in row
    assert "FAIL: max_breaks 1 > limit 0" in lines
    assert f"graphs {OUTSIDE.facts['graphs']} · root-cause breaks 0 · break records 0 · " \
           "ops 4 · frames skipped 0" in lines
    assert "No graph breaks: Dynamo captured every frame it saw." in lines
    assert "PASS: 1 check(s) passed" in lines
    assert f"ERROR (exit 2): target file not found: {SAMPLES}/nope.py (check the path; it is " \
           f"relative to {ROOT})" in _squeeze(text)
    assert "breakscan check" in lines  # the table of several models


def test_terminal_shows_a_compile_error_and_a_program(at_root):
    text = _squeeze(_terminal(recorded_runs("compile_error")))
    assert (f"torch.compile fails: {FAILS.facts['exception']}: RuntimeError when making fake "
            f"tensor call at {FAILS_AT[0]}:{FAILS_AT[1]}") in text
    assert f"❱ {FAILS_AT[1]} {FAILS.facts['compile_error']}" in text
    lines = _terminal(recorded_runs("program")).splitlines()
    assert lines[:2] == [f"python {PROGRAM_FILE}",
                         f"graphs {PROGRAM['graphs']} · root-cause breaks {PROGRAM['breaks']} · "
                         f"break records 7 · ops 16 · frames skipped 1 · recompiles "
                         f"{PROGRAM['recompiles']}"]
    assert f"per call: graph calls {PROGRAM['graph_calls_per_call']} · returns to Python " \
           f"{PROGRAM['eager_gaps_per_call']} · frames run eagerly " \
           f"{PROGRAM['frames_run_eagerly_per_call']}" in lines
    (row,) = [t for t in lines if f"│ {PROGRAM_AT[0]}:{PROGRAM_AT[1]} │" in t]
    assert "frame_skipped" in row and f"{PROGRAM['fires']} ({PROGRAM['fires_per_call']}×)" in row


# -- the gate ------------------------------------------------------------------------------------

def test_the_gate_fails_a_break_over_the_limit_and_passes_without_one(at_root):
    nested, outside, _ = recorded_runs("gate_runs")
    file, line = NESTED_AT
    failed = evaluate(nested.result, GateOptions(max_breaks=0))
    assert failed == GateResult(passed=False, checks=[Check(
        name="max_breaks", limit=0, actual=int(NESTED.facts["breaks"]), passed=False,
        detail=f"{NESTED.facts['category']} at {file}:{line} `{NESTED_CODE}`")], improvements=[])
    assert failed == nested.result.gate  # what the recorded scan's gate said
    assert evaluate(nested.result, GateOptions()) == GateResult(passed=True, checks=[],
                                                                improvements=[])
    assert evaluate(nested.result, GateOptions(max_breaks=1)).passed
    passed = evaluate(outside.result, GateOptions(max_breaks=0))
    assert passed.passed and [(c.name, c.actual, c.passed) for c in passed.checks] == [
        ("max_breaks", 0, True)]


def test_a_gated_run_exits_1_only_when_its_gate_fails(at_root):
    nested, outside, missing = recorded_runs("gate_runs")
    for run in (nested, outside):
        run.exit_code, run.result.gate = 0, None
    assert gated(nested, GateOptions()).exit_code == 0 and nested.result.gate is None
    assert gated(nested, GateOptions(max_breaks=0)).exit_code == 1
    assert gated(outside, GateOptions(max_breaks=0)).exit_code == 0
    assert gated(missing, GateOptions(max_breaks=0)).exit_code == 2  # no result: not gated


def test_a_compile_error_fails_the_compiles_check_and_exits_3(at_root):
    (run,) = recorded_runs("compile_error")
    file, line = FAILS_AT
    result = evaluate(run.result, GateOptions())
    assert not result.passed
    assert [(c.name, c.limit, c.actual, c.passed) for c in result.checks] == [
        ("compiles", 0, 1, False)]
    assert result.checks[0].detail == (
        f"torch.compile fails: {FAILS.facts['exception']}: RuntimeError when making fake tensor "
        f"call at {ROOT / file}:{line}")
    assert [c.name for c in evaluate(run.result, GateOptions(max_breaks=5)).checks] == [
        "compiles", "max_breaks"]
    run.exit_code, run.result.gate = 0, None
    assert gated(run, None).exit_code == 3  # no gate asked: a model that fails to compile fails
    assert run.result.gate == result


# -- reports that consumers can always read ------------------------------------------------------

NASTY = ["line\nbreak", "::error::injected", "%0A", "]]>", "<script>x</script>", "nul\x00",
         "esc\x1b[31m", "lone\ud800surrogate", "x" * 1_000_000, "bidi\u202eevil\u2066",
         "c1\x9b31m"]


@pytest.fixture(scope="module")
def nasty_runs():
    """A real scan (recorded: tests/fixtures/results) whose every model-made string is hostile."""
    from breakscan.model.result import ModelRun

    result = recorded_runs("gate_runs")[0].result
    result.gate = None  # as scan() returns it: not gated
    brk = result.breaks[0]
    brk.code, brk.suggestion, brk.gb_type = NASTY[0] + NASTY[4], " ".join(NASTY), NASTY[5]
    brk.file = str(SAMPLES / "odd dir" / "m\n%0A]]>.py")
    result.model_output = "".join(NASTY)
    result.target = "m.py:" + NASTY[1] + NASTY[6]
    failed = ModelRun(target="bad" + NASTY[5], result=None, error=" ".join(NASTY), exit_code=3)
    return [ModelRun(target=result.target, result=result), failed]


def test_junit_stays_well_formed_xml(nasty_runs):
    import xml.etree.ElementTree as ET

    from breakscan.report.junit import to_junit

    root = ET.fromstring(to_junit(nasty_runs).encode())
    text = ET.tostring(root, encoding="unicode")
    assert "\\x00" in text and "\\x1b" in text and "\x1b" not in text
    assert "\u202e" not in text and "\\u202e" in text and "\x9b" not in text


def test_github_annotations_cannot_be_forged_or_split(nasty_runs):
    from breakscan.report.github import to_github, to_markdown

    lines = to_github(nasty_runs).splitlines()
    assert lines and all(line.startswith("::") for line in lines)
    assert all("\x00" not in line and "\x1b" not in line for line in lines)
    assert sum(line.startswith("::error::injected") for line in lines) == 0
    markdown = to_markdown(nasty_runs)
    assert "\x00" not in markdown and "\x1b" not in markdown and "\ud800" not in markdown
    assert all(c not in markdown + "".join(lines) for c in "\u202e\u2066\x9b")
    assert "&lt;script&gt;" in markdown  # prose: no HTML reaches the page
    # code stays code: literal inside its span, which no backtick of the text can end
    assert markdown.count("<script>") == 1 and "`line break<script>x</script>`" in markdown


def test_sarif_and_json_stay_parseable_with_encoded_uris(nasty_runs):
    from breakscan.report import render_file_format

    sarif = json.loads(render_file_format(nasty_runs, "sarif", single=False))
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in sarif["runs"][0]["results"] for loc in r.get("locations", [])]
    assert uris and all(" " not in u and "\n" not in u and "%250A" in u for u in uris)
    json.loads(render_file_format(nasty_runs, "json", single=False))
    json.loads(render_file_format(nasty_runs[:1], "json", single=True))


def test_bidi_and_c1_controls_are_shown_escaped_in_html_and_the_terminal(nasty_runs):
    """A source line with U+202E (right-to-left override) reads as what it holds."""
    from breakscan.report.html import to_html

    for text in (to_html(nasty_runs), _terminal(nasty_runs)):
        assert all(c not in text for c in "\u202e\u2066\x9b")
        assert "\\u202e" in text


# -- the rule list --------------------------------------------------------------------------------

def test_rule_ids_and_fix_names_are_never_cut_mid_word():
    import io

    from breakscan.report.terminal import console, render_rule_list
    from breakscan.rules.catalogue import CATALOGUE

    out = console(file=io.StringIO(), width=100)
    render_rule_list(CATALOGUE, out)
    text = out.file.getvalue()
    for word in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops", "BS012",
                 "constant-in-tensor"):
        assert word in text, word


@pytest.mark.parametrize("backend, match, says, never", [
    ("inductor", True, ", Inductor drawing eager's (fallback_random), so their outputs compare; "
     "the compiled timings include that", "still"),
    ("eager", True, "(torch, random, NumPy), so their outputs compare", "Inductor"),
    # BigBird in train mode: NumPy draws traced onto torch's generator, outputs differ
    ("eager", False, "; still their outputs differ: the compiled model drew other numbers",
     "so their outputs compare"),
])
def test_the_random_numbers_note_says_only_what_happened(backend, match, says, never):
    """A fresh-eyes run found "Inductor drawing eager's (fallback_random), so their outputs
    compare" printed with --backend eager, and two lines below OUTPUTS DIFFER FROM EAGER."""
    from breakscan.report.wording import fixes_baseline, random_note
    from breakscan.model.verdicts import Correctness, Fix, TimingReport

    t = TimingReport(device="cpu", threads=1, backend=backend, mode=None,
                     correctness=Correctness(match=match, max_abs_error=0.1, max_rel_error=0.1),
                     random_comparable=True)
    note = random_note(t)
    assert says in note and never not in note
    fix = Fix(rule="BS001", category="rng", fix_id="x", title="x", kind="setting", random=True)
    (line,) = fixes_baseline([fix], backend)
    assert ("fallback_random" in line) == (backend == "inductor")


def test_a_value_is_measured_or_null_consistently(at_root):
    """Issue 45 §2: no 0 standing for "not measured" next to a null that says so."""
    from breakscan.report import render_file_format

    for name in ("fix", "gate_runs", "kernels"):
        doc = json.loads(render_file_format(recorded_runs(name), "json", single=False))
        for result in [m["result"] for m in doc["models"] if m["result"]]:
            timings = result["timings"]
            if timings is not None:
                assert (timings["outside_share"] is None) == (timings["graph_s_per_call"] is None)
            assert (result["summary"]["recompile_count"] is None) == (result["recompiles"] is None)
            for fix in result["fixes"]:
                assert (fix["before"]["recompiles"] is None) == (result["recompiles"] is None)


def _excerpt_rows(text: str) -> list[tuple[int, str]]:
    """The numbered source lines of the terminal's break panels: (line, code)."""
    import re

    rows = [re.match(r"│ [❱ ] +(\d+) (.*?) *│$", line) for line in text.splitlines()]
    return [(int(m.group(1)), m.group(2)) for m in rows if m]


def test_the_break_panel_shows_the_files_lines_around_the_break_and_no_more(at_root):
    """Two lines either side, each next to its own number: rich showed a code ending in a newline
    as one more, blank, numbered line (line 30 shown empty when it holds code)."""
    file, line = NESTED_AT
    rows = _excerpt_rows(_terminal(recorded_runs("gate_runs")))
    assert [n for n, _ in rows] == list(range(line - 2, line + 3))
    source = (ROOT / file).read_text().splitlines()
    assert all(code == source[n - 1].rstrip() for n, code in rows)


def test_a_log_without_colour_shows_the_same_characters_as_a_terminal_with_colour(at_root):
    """Without colour the excerpt is not highlighted (pygments was a sixth of a 500-target zoo's
    report); with colour it is, and the characters are the same."""
    import re

    runs = recorded_runs("gate_runs")
    plain = _terminal(runs)
    coloured = Console(file=io.StringIO(), width=100, force_terminal=True,
                       color_system="truecolor")
    render_runs(runs, coloured)
    ansi = coloured.file.getvalue()
    assert "\x1b[" in ansi
    # pygments gives the keyword `return` its own colour only when it highlights
    assert re.search(r"\x1b\[[0-9;]*m return\b|\x1b\[[0-9;]*mreturn\x1b", ansi)
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", ansi)
    assert [line.rstrip() for line in stripped.splitlines()] == plain.splitlines()
