"""How the CLI ends: one line on stderr and the exit code the README documents for it.

A usage error is exit 2, a failed or stopped scan its own code (3, 130, 143…), a bug in
breakscan exit 4, a reader that left the pipe 141; tracebacks only with ``--debug``. SIGTERM and
SIGHUP are turned into :class:`~breakscan.errors.Interrupted` so they end like Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

import typer

from ..errors import EXIT_USAGE, INTERRUPT_CODES, BreakscanError, Interrupted, interrupt_signal
from ..report.terminal import console as literal_console


def fail(exc: BaseException, debug: bool) -> None:
    """A command's error (a :class:`~breakscan.errors.BreakscanError`): its line and code."""
    err = literal_console(stderr=True, soft_wrap=True)
    if debug:
        err.print(traceback.format_exc(), markup=False)
    code = exc.exit_code if isinstance(exc, BreakscanError) else EXIT_USAGE
    err.print(f"breakscan: error: {exc}", markup=False)
    raise typer.Exit(code)


def fail_run(run, debug: bool) -> None:
    """A scan that did not finish: its one-line error (and with --debug its details)."""
    err = literal_console(stderr=True, soft_wrap=True)
    if debug and run.detail:
        err.print(run.detail, markup=False)
    err.print(f"breakscan: {'' if run.interrupted else 'error: '}{run.error}", markup=False)
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
    literal_console(stderr=True).print(
        f"breakscan: interrupted ({INTERRUPT_CODES.get(signum, signum)})", markup=False)
    sys.exit(128 + signum)


def quiet_after_broken_pipe() -> None:
    """Exit as a Unix tool killed by SIGPIPE does (141), without a word: the reader is gone."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail too
    except OSError:
        pass
    os._exit(128 + 13)


def exit_on_error(exc: Exception, *, debug: bool) -> None:
    """An exception that left the app: click's usage errors exit 2, anything else is a bug."""
    # typer vendors click: match its usage errors (bad option or value) by shape.
    if not hasattr(exc, "format_message"):
        internal_error(exc, debug=debug)
    if type(exc).__name__ == "Abort":  # click's form of Ctrl-C
        literal_console(stderr=True).print("breakscan: interrupted (SIGINT)",
                                           markup=False)
        sys.exit(130)
    if exc.format_message():  # empty when no arguments made click print the help
        literal_console(stderr=True, soft_wrap=True).print(
            f"breakscan: error: {exc.format_message()} (see breakscan --help)", markup=False)
    sys.exit(EXIT_USAGE)


def internal_error(exc: BaseException, *, debug: bool) -> None:
    """A bug in breakscan: one line and exit 4 (the README's code), the traceback with --debug."""
    from ..errors import EXIT_INTERNAL, describe

    err = literal_console(stderr=True, soft_wrap=True)
    if debug:
        err.print("".join(traceback.format_exception(exc)))
    err.print(f"breakscan: error: internal error in breakscan: {describe(exc)} (please report "
              "it; --debug shows the traceback)")
    sys.exit(EXIT_INTERNAL)
