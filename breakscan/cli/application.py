"""The typer application every command module registers its command on.

Kept apart from :mod:`breakscan.cli` (which imports the command modules, in the order
``--help`` lists them, and holds ``main``) so a command module needs nothing but this object.
"""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Find, explain and fix torch.compile graph breaks.",
                  context_settings={"help_option_names": ["-h", "--help"]})
