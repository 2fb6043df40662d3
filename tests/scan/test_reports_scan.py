"""Reports of scans run in this process: tables, gate details, labels and CI annotations that
need a live scan (the reporters on recorded results: tests/unit/test_reports.py)."""

from __future__ import annotations

import json

from breakscan import scan

from conftest import ROOT, SAMPLES, locate

ITEM = f"{SAMPLES}/item_logging.py:LogInsideForward"


def test_tables_say_what_was_not_measured_and_what_was_cached():
    import io

    from breakscan.report.html import to_html
    from breakscan.report.terminal import console, render_runs
    from breakscan.model.result import ModelRun

    runs = [ModelRun(target=f"t{k}", result=scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf",
                                                 input_shapes=["8,16"]), cached=bool(k))
            for k in range(2)]
    out = console(file=io.StringIO(), width=100)
    render_runs(runs, out, quiet=True)
    table = out.file.getvalue().split("breakscan check")[1]
    assert "no gate (cached)" in table and " 0 " not in table.split("\n", 3)[3]
    assert "│ -          │" in table  # recompiles: never varied
    assert "no gate (cached)" in to_html(runs)


def test_gate_details_use_the_paths_the_report_uses():
    from breakscan.runs.gate import evaluate
    from breakscan.options import GateOptions

    result = scan(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", input_shapes=["8,16"])
    (check,) = evaluate(result, GateOptions(max_breaks=0)).checks
    line = locate("if h.sum() > 0:", SAMPLES / "tensor_branch.py")[1]
    assert f"at sample_models/tensor_branch.py:{line} " in check.detail


def test_op_labels_name_the_method_without_a_made_up_receiver():
    from breakscan import scan

    doc = scan(ITEM, input_shapes=["8,16"]).to_dict()  # analysis, not the CLI: in-process
    (gap,) = [d for d in doc["discrepancies"] if d["topic"] == "op_count"]
    assert "(here: .mean())" in gap["reason"] and "x.mean()" not in gap["reason"]


def test_recompile_gate_failures_carry_file_and_line_in_github_and_sarif(monkeypatch):
    """The reporters are the subject: the scan and its gate run in this process."""
    from breakscan.options import GateOptions, ScanOptions
    from breakscan.report import render_file_format
    from breakscan.runs.runner import run_model

    run = run_model(f"{SAMPLES / 'shape_branch.py'}:ShapeBranch",
                    ScanOptions(input_shapes=["8,16"], vary_batch="2,4,16"),
                    GateOptions(max_recompiles=0), isolated=False)
    assert run.exit_code == 1
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    github = render_file_format([run], "github", single=True)
    errors = [line for line in github.splitlines() if "recompile" in line]
    assert errors and all(line.startswith("::error file=sample_models/shape_branch.py,line=")
                          for line in errors), github
    assert any("line=30," in line for line in errors)  # the guard's line: if x.shape[0] > 8
    monkeypatch.delenv("GITHUB_WORKSPACE")
    monkeypatch.chdir(ROOT)
    sarif = json.loads(render_file_format([run], "sarif", single=True))
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "recompile"]
    assert results and all(r["level"] == "error" for r in results)
    loc = results[-1]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "sample_models/shape_branch.py"
