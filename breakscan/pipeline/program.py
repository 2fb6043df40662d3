"""Stage 1 for ``breakscan run``: run a whole program as ``python script.py …`` or
``python -m module …`` would, in this (isolated) process.

The program sees what it would see without breakscan: its own ``sys.argv``, ``__main__``, the
working directory, the environment, stdin and stdout, and ``sys.path[0]`` set the way Python
sets it. Its end is turned into a :class:`ProgramOutcome` (exit status, or the exception and the
user's line that raised it) instead of ending this process, so the report can follow.
Imports no torch.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import signal
import sys
import time
from dataclasses import dataclass

from ..errors import SigintWatch, UsageError, describe, sigint_watched
from ..options import ProgramOptions


@dataclass
class ProgramOutcome:
    """How the program ended."""

    exit_code: int  # what `python script.py` would have exited with
    error: str | None = None  # the exception that ended it, one line, with the user's line
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.exit_code != 0


def _exit_code(exc: SystemExit) -> int:
    """``sys.exit(x)`` as Python's own exit status: None 0, an int itself, anything else 1
    (printed to stderr, as Python does)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_program(options: ProgramOptions) -> ProgramOutcome:
    """Run the program to its end; never raises for anything the program does (Ctrl-C and a
    stop request are let through). A KeyboardInterrupt the program raised itself, no SIGINT
    having come (``errors.sigint_watched``), is its failure: exit 130, as Python's own."""
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    if options.module is not None:
        sys.path.insert(0, os.getcwd())  # what `python -m` puts first
        try:
            found = importlib.util.find_spec(options.module)
        except (ImportError, ValueError) as exc:
            found, why = None, f" ({describe(exc)})"
        else:
            why = ""
        if found is None:
            sys.path[:] = saved_path
            raise UsageError(f"-m {options.module}: no such module from {os.getcwd()}{why}; run "
                             "from the folder that holds it, or install it (pip install -e .)")
    started = time.perf_counter()
    try:
        with sigint_watched() as sigint:
            code, error = _execute(options, sigint)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return ProgramOutcome(exit_code=code, error=error, seconds=time.perf_counter() - started)


def _execute(options: ProgramOptions, sigint: SigintWatch) -> tuple[int, str | None]:
    """The program run to its end: (its exit status, the exception that ended it)."""
    from ..frames import frames_of, where

    try:
        if options.module is not None:
            sys.argv = [options.module] + list(options.args)  # run_module sets argv[0]
            runpy.run_module(options.module, run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(str(options.script))
            sys.argv = [str(options.script)] + list(options.args)
            sys.path.insert(0, os.path.dirname(script))  # what `python script.py` puts first
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        return _exit_code(exc), None
    except KeyboardInterrupt as exc:
        if sigint.received:
            raise  # Ctrl-C (or a SIGINT the program was sent): breakscan is interrupted
        return _failed(exc, 128 + signal.SIGINT, where(frames_of(exc), with_function=True))
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported
        return _failed(exc, 1, where(frames_of(exc), with_function=True))
    return 0, None


def _failed(exc: BaseException, code: int, at: str) -> tuple[int, str]:
    """An uncaught exception ended the program: its traceback printed as Python prints it, and
    the exit status Python ends with (130 for KeyboardInterrupt: it ends by SIGINT)."""
    import traceback

    traceback.print_exception(exc)
    return code, f"{describe(exc)}{at}"
