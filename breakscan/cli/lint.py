"""``breakscan lint PATHS``: the source read for patterns that break or recompile, no torch.

Walks the files with :func:`breakscan.lint.run.lint_file` and prints the findings; a pattern
that breaks the graph is exit 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import EXIT_GATE_FAILED, BreakscanError, UsageError
from . import flags
from .application import app
from .exits import fail
from .flags import OutputFormat
from .output import make_console


@app.command()
def lint(
    paths: List[Path] = typer.Argument(..., help="Python files or folders (searched for *.py)."),
    only: Optional[str] = typer.Option(None, help="Only this class (its forward), Class.method "
                                       "or function."),
    output_format: OutputFormat = flags.output_format("terminal or json"),
) -> None:
    """Read the source (no torch, no import) and flag the patterns that break or recompile.

    Exit 1 when a pattern that breaks the graph is found, 0 when there is none (recompile
    causes alone are warnings).
    """
    import json
    from dataclasses import asdict

    from ..lint.checks import BREAK_CATEGORIES
    from ..lint.run import lint_file
    from ..report import terminal

    try:
        if output_format not in (OutputFormat.terminal, OutputFormat.json):
            raise UsageError("lint writes --format terminal or json")
        files: list[Path] = []
        for path in paths:
            if path.is_dir():
                files += sorted(p for p in path.rglob("*.py") if ".breakscan.bak" not in p.name)
            else:
                files.append(path)
        findings = [f for file in files for f in lint_file(file, only=only)]
    except BreakscanError as exc:
        fail(exc, False)
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps([asdict(f) for f in findings], indent=2) + "\n")
    else:
        terminal.render_static(findings, make_console(), files=len(files))
    if any(f.category in BREAK_CATEGORIES for f in findings):
        raise typer.Exit(EXIT_GATE_FAILED)
