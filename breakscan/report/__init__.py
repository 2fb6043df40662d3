"""Reporters: each renders finished results and never runs a model."""

from __future__ import annotations

import json as _json

from ..result import SCHEMA_VERSION, ModelRun, overall_exit_code


def render_file_format(runs: list[ModelRun], fmt: str, *, single: bool) -> str:
    """The text of one machine-readable format for these runs."""
    if fmt == "json":
        if single and runs[0].result is not None:
            from .json import to_json

            return to_json(runs[0].result)
        doc = {"schema_version": SCHEMA_VERSION, "exit_code": overall_exit_code(runs),
               "passed": overall_exit_code(runs) == 0, "models": [r.to_dict() for r in runs]}
        return _json.dumps(doc, indent=2, default=str) + "\n"
    if fmt == "junit":
        from .junit import to_junit

        return to_junit(runs)
    if fmt == "sarif":
        from .sarif import to_sarif

        return to_sarif(runs)
    if fmt == "github":
        from .github import to_github

        return to_github(runs)
    if fmt == "markdown":
        from .github import to_markdown

        return to_markdown(runs)
    if fmt == "html":
        from .html import to_html

        return to_html(runs)
    raise ValueError(f"unknown format {fmt!r}")
