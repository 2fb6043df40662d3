"""``breakscan rules [RULE]``: the rule catalogue, or one rule with its example and fixes.

Looks rules up in :mod:`breakscan.rules.catalogue`; an unknown id is a usage error naming the known ones.
"""

from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError
from .application import app
from .exits import fail
from .output import make_console


@app.command()
def rules(rule: Optional[str] = typer.Argument(None, help="A rule id (BS001), name or "
                                               "category to explain."),
          markdown: bool = typer.Option(False, "--markdown", help="Print the whole catalogue "
                                        "as Markdown (docs/rules.md is this output).")) -> None:
    """List the rule catalogue, or explain one rule with its example and fixes."""
    from ..report import terminal
    from ..rules.catalogue import CATALOGUE, find_rule

    if markdown and rule is not None:
        fail(UsageError("--markdown prints the whole catalogue; leave out the rule "
                        f"{rule!r}, or drop --markdown to explain it"), False)
    if markdown:
        from ..report.catalogue import catalogue_markdown

        typer.echo(catalogue_markdown(), nl=False)
        return
    console = make_console()
    if rule is None:
        terminal.render_rule_list(CATALOGUE, console)
        return
    found = find_rule(rule)
    if found is None:
        fail(UsageError(f"no rule {rule!r}; `breakscan rules` lists them "
                        f"({', '.join(r.id for r in CATALOGUE)})"), False)
    terminal.render_rule(found, console)
