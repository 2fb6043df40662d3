"""SARIF 2.1.0: each root-cause break as a result at its line, for code-scanning UIs."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from ..frames import repo_path
from ..model.result import ModelRun
from ..rules.categories import CATEGORIES
from ..rules.kernels import KERNEL_RULES
from ..version import __version__
from .paths import recompile_location
from .wording import recompile_reasons

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    """A SARIF artifact URI: the repository-relative path, percent-encoded (RFC 3986)."""
    return quote(repo_path(path))


def _rules() -> list[dict[str, Any]]:
    """One rule per break category, one per kernel rule, then the recompile rule (always
    last)."""
    rules = [{"id": name, "name": name, "shortDescription": {"text": cat.title},
              "help": {"text": cat.suggestion}, "defaultConfiguration": {"level": "warning"}}
             for name, cat in CATEGORIES.items()]
    rules += [{"id": rule.id, "name": rule.name, "shortDescription": {"text": rule.title},
               "help": {"text": rule.suggestion}, "defaultConfiguration": {"level": "warning"}}
              for rule in KERNEL_RULES]
    rules.append({"id": "recompile", "name": "recompile",
                  "shortDescription": {"text": "Recompile over the input sets"},
                  "help": {"text": "A guard failed and Dynamo compiled the frame again; see the "
                                   "guard's line and the recompile advice in the report."},
                  "defaultConfiguration": {"level": "warning"}})
    return rules


def _locations(uri: str, line: int) -> list[dict[str, Any]]:
    return [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                                  "region": {"startLine": line}}}]


def _run_results(run: ModelRun, recompile_index: int) -> list[dict[str, Any]]:
    """One run's results: its compile error, each root-cause break, each kernel finding, each
    recompile."""
    results: list[dict[str, Any]] = []
    failed = run.result.gate is not None and not run.result.gate.passed
    error = run.result.compile_error
    if error is not None:
        found: dict[str, Any] = {"ruleId": "compile_error", "level": "error",
                                 "message": {"text": f"torch.compile fails on {run.target}: "
                                                     f"{error.exception}: {error.message}"}}
        if error.file:
            found["locations"] = _locations(_uri(error.file), error.line)
        results.append(found)
    index = {name: i for i, name in enumerate(CATEGORIES)}
    for brk in run.result.breaks:
        text = (f"{CATEGORIES[brk.category].title} ({brk.gb_id or brk.gb_type}) in "
                f"{run.target}: `{brk.code}`. {brk.suggestion}")
        results.append({
            "ruleId": brk.category, "ruleIndex": index[brk.category],
            "level": "error" if failed else "warning",
            "message": {"text": text},
            "locations": _locations(_uri(brk.file), brk.line),
            "properties": {"owner": brk.owner, "gb_id": brk.gb_id, "target": run.target},
        })
    kernel_index = {rule.id: len(CATEGORIES) + i for i, rule in enumerate(KERNEL_RULES)}
    for finding in run.result.kernel_findings:  # --kernels
        found = {"ruleId": finding.rule, "level": "warning",
                 "message": {"text": f"{finding.message} (graph {finding.graph} of "
                                     f"{run.target})"}}
        if finding.rule in kernel_index:
            found["ruleIndex"] = kernel_index[finding.rule]
        if finding.file and finding.line:
            found["locations"] = _locations(_uri(finding.file), finding.line)
        results.append(found)
    recompiles = run.result.recompiles.recompiles if run.result.recompiles else []
    recompile_failed = failed and any(c.name == "max_recompiles"
                                      for c in run.result.gate.failed())
    for rec in recompiles:
        file, line = recompile_location(rec)
        found = {
            "ruleId": "recompile", "ruleIndex": recompile_index,
            "level": "error" if recompile_failed else "warning",
            "message": {"text": f"{rec.function}() recompiled in {run.target}: "
                                f"{recompile_reasons(rec)}"},
            "properties": {"target": run.target, "input_set": rec.input_set},
        }
        if file and file != "?" and line and line >= 1:  # SARIF lines start at 1
            found["locations"] = _locations(quote(file), line)
        results.append(found)
    return results


def to_sarif(runs: list[ModelRun]) -> str:
    rules = _rules()
    results = []
    for run in runs:
        if run.error is not None:
            results.append({"ruleId": "scan_error", "level": "error",
                            "message": {"text": f"{run.target}: {run.error}"}})
        if run.result is not None:
            results += _run_results(run, len(rules) - 1)
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "breakscan", "version": __version__,
                            "rules": rules}},
        "results": results}]}
    return json.dumps(doc, indent=2) + "\n"
