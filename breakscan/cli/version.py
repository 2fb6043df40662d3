"""``breakscan version`` (also ``--version``/``-V``): breakscan's and torch's versions.

torch is imported only here, when the command runs, so every other command starts without it.
"""

from __future__ import annotations

import typer

from ..version import __version__
from .application import app


@app.command()
def version() -> None:
    """Print breakscan's and torch's versions."""
    import torch

    typer.echo(f"breakscan {__version__} (torch {torch.__version__})")
