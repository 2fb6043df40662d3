"""Reporters: each renders finished results and never runs a model."""

from __future__ import annotations

import json as _json_module
from typing import Callable

from ..model.result import SCHEMA_VERSION, ModelRun, overall_exit_code


def _json(runs: list[ModelRun], single: bool) -> str:
    if single and runs[0].result is not None:
        from .json import to_json

        return to_json(runs[0].result)
    doc = {"schema_version": SCHEMA_VERSION, "exit_code": overall_exit_code(runs),
           "passed": overall_exit_code(runs) == 0, "models": [r.to_dict() for r in runs]}
    return _json_module.dumps(doc, indent=2, default=str) + "\n"


def _junit(runs: list[ModelRun], single: bool) -> str:
    from .junit import to_junit

    return to_junit(runs)


def _sarif(runs: list[ModelRun], single: bool) -> str:
    from .sarif import to_sarif

    return to_sarif(runs)


def _github(runs: list[ModelRun], single: bool) -> str:
    from .github import to_github

    return to_github(runs)


def _markdown(runs: list[ModelRun], single: bool) -> str:
    from .github import to_markdown

    return to_markdown(runs)


def _html(runs: list[ModelRun], single: bool) -> str:
    from .html import to_html

    return to_html(runs)


# The file formats, by name: the one list the CLI's --format choices come from (with
# "terminal", which prints instead). Each renderer is imported when its format is asked for.
FILE_FORMATS: dict[str, Callable[[list[ModelRun], bool], str]] = {
    "json": _json, "junit": _junit, "sarif": _sarif, "github": _github,
    "markdown": _markdown, "html": _html}


def render_file_format(runs: list[ModelRun], fmt: str, *, single: bool) -> str:
    """The text of one machine-readable format for these runs (``single``: one model's
    result, as its own JSON document)."""
    render = FILE_FORMATS.get(fmt)
    if render is None:
        raise ValueError(f"unknown format {fmt!r}")
    return render(runs, single)
