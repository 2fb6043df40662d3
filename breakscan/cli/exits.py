"""How the CLI ends: one line on stderr and the exit code the README documents for it.

A usage error is exit 2, a failed or stopped scan its own code (3, 130, 143…), a bug in
breakscan exit 4, a reader that left the pipe 141; tracebacks only with ``--debug``. SIGTERM and
SIGHUP are turned into :class:`~breakscan.errors.Interrupted` so they end like Ctrl-C. Every line
goes through :func:`say`: an error repeats model-made text (an exception's message), shown with
its control characters escaped as the report shows them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

import typer

from ..errors import EXIT_USAGE, INTERRUPT_CODES, BreakscanError, Interrupted, interrupt_signal
from ..report.literal import printable
from ..report.terminal import console as literal_console


def say(line: str) -> None:
    """One line on stderr, its control characters (an ESC or NUL in a model's message) escaped."""
    literal_console(stderr=True, soft_wrap=True).print(printable(line), markup=False)


def fail(exc: BaseException, debug: bool) -> None:
    """A command's error (a :class:`~breakscan.errors.BreakscanError`): its line and code."""
    if debug:
        literal_console(stderr=True, soft_wrap=True).print(traceback.format_exc(), markup=False)
    code = exc.exit_code if isinstance(exc, BreakscanError) else EXIT_USAGE
    say(f"breakscan: error: {exc}")
    raise typer.Exit(code)


def fail_run(run, debug: bool) -> None:
    """A scan that did not finish: its one-line error (and with --debug its details)."""
    if debug and run.detail:
        literal_console(stderr=True, soft_wrap=True).print(run.detail, markup=False)
    say(f"breakscan: {'' if run.interrupted else 'error: '}{run.error}")
    raise typer.Exit(run.exit_code)


def end_one(run, debug: bool) -> None:
    """A single run's exit: its one-line error (exit 3, 130…), or the gate's exit 1."""
    if run.error is not None:
        fail_run(run, debug)
    if run.exit_code:
        raise typer.Exit(run.exit_code)


def raise_on_signals() -> None:
    """SIGTERM and SIGHUP end breakscan like Ctrl-C: the scan process group is killed, its
    temporary folder removed, and what finished is reported (exit 143 / 129; Ctrl-C 130)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
            signal.signal(sig, handler)


def exit_interrupted(exc: BaseException) -> None:
    """Ctrl-C, SIGTERM or SIGHUP outside a scan: nothing to report, exit 128 + the signal."""
    signum = interrupt_signal(exc)
    say(f"breakscan: interrupted ({INTERRUPT_CODES.get(signum, signum)})")
    sys.exit(128 + signum)


def discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a reader that left or a device
    that refused it goes nowhere, so Python's own flush at exit cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no stdout at all
        pass


def quiet_after_broken_pipe() -> None:
    """Exit as a Unix tool killed by SIGPIPE does (141), without a word: the reader is gone."""
    discard_stdout()
    os._exit(128 + 13)


def exit_on_error(exc: Exception, *, debug: bool) -> None:
    """An exception that left the app: breakscan's own errors (a report stdout refused) and
    click's usage errors end with their line and code, anything else is a bug."""
    if isinstance(exc, BreakscanError):
        say(f"breakscan: error: {exc}")
        sys.exit(exc.exit_code)
    # typer vendors click: match its usage errors (bad option or value) by shape.
    if not hasattr(exc, "format_message"):
        internal_error(exc, debug=debug)
    if type(exc).__name__ == "Abort":  # click's form of Ctrl-C
        say("breakscan: interrupted (SIGINT)")
        sys.exit(130)
    if exc.format_message():  # empty when no arguments made click print the help
        say(f"breakscan: error: {exc.format_message()} (see breakscan --help)")
    sys.exit(EXIT_USAGE)


def internal_error(exc: BaseException, *, debug: bool) -> None:
    """A bug in breakscan: one line and exit 4 (the README's code), the traceback with --debug."""
    from ..errors import EXIT_INTERNAL, describe

    if debug:
        literal_console(stderr=True, soft_wrap=True).print(
            "".join(traceback.format_exception(exc)), markup=False)
    say(f"breakscan: error: internal error in breakscan: {describe(exc)} (please report it; "
        "--debug shows the traceback)")
    sys.exit(EXIT_INTERNAL)
