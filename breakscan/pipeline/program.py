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
import sys
import time
from dataclasses import dataclass

from ..errors import UsageError, describe
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
    stop request are let through)."""
    from ..frames import frames_of, where

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
        if options.module is not None:
            sys.argv = [options.module] + list(options.args)  # run_module sets argv[0]
            runpy.run_module(options.module, run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(str(options.script))
            sys.argv = [str(options.script)] + list(options.args)
            sys.path.insert(0, os.path.dirname(script))  # what `python script.py` puts first
            runpy.run_path(script, run_name="__main__")
        code, error = 0, None
    except SystemExit as exc:
        code, error = _exit_code(exc), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported
        code, error = 1, f"{describe(exc)}{where(frames_of(exc), with_function=True)}"
        import traceback

        traceback.print_exc()  # what Python prints for an uncaught exception
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return ProgramOutcome(exit_code=code, error=error, seconds=time.perf_counter() - started)
