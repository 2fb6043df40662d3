"""Command line: a thin typer layer over :func:`breakscan.scan`, one module per command.

``breakscan FILE.py:NAME …`` is the scan itself (the ``scan`` subcommand is implied), so the form
users type and CI scripts call stays short. Exit codes: 0 ok (gate passed), 1 gate failed,
2 usage/input error, 3 the model's own code failed (see README).
"""

from __future__ import annotations

import sys

from ..errors import Interrupted, UsageError
from ..startup import keep_torch_import_notices
# Importing a command module registers its command: in this order `breakscan --help` lists them.
from . import check, compare, lint, merge, rules, run, scan, trace, version  # noqa: F401
from .application import app
from .exits import exit_interrupted, exit_on_error, quiet_after_broken_pipe, raise_on_signals
from .output import guarded_stdout


def _commands() -> set[str]:
    """The subcommands as registered on the app: a first word that is none of them is a
    target of the default command, scan."""
    from typer.main import get_command_name

    return {info.name or get_command_name(info.callback.__name__)
            for info in app.registered_commands if info.callback is not None}


def _with_default_command(args: list[str]) -> list[str]:
    """``breakscan TARGET …`` -> ``breakscan scan TARGET …``; ``--version`` -> ``version``."""
    if args in (["--version"], ["-V"]):
        args = ["version"]
    first = next((a for a in args if not a.startswith("-")), None)
    if first is not None and first not in _commands() and not {"-h", "--help"} & set(
            args[:args.index(first)]):
        args.insert(args.index(first), "scan")
    return args


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``breakscan TARGET …`` means ``breakscan scan TARGET …``."""
    args = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    keep_torch_import_notices()
    raise_on_signals()
    try:
        with guarded_stdout() as stdout:  # a write stdout refuses is an output error, exit 2
            code = app(args=args, prog_name="breakscan", standalone_mode=False)
        if stdout.refused and not code:  # refused where the error was caught (click's help)
            raise UsageError(stdout.refused)
    except (KeyboardInterrupt, Interrupted) as exc:  # outside a scan: nothing to report
        exit_interrupted(exc)
    except BrokenPipeError:  # `breakscan … | head -3`: the reader left; leave quietly
        quiet_after_broken_pipe()
    except Exception as exc:
        exit_on_error(exc, debug="--debug" in args)
    sys.exit(code if isinstance(code, int) else 0)
