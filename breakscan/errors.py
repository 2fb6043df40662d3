"""Errors a scan can end with, each tied to a documented exit code.

The CLI prints ``str(error)`` as one line and exits with ``error.exit_code``; a traceback is
shown only with ``--debug``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

# Set in the isolated scan process from --memory-limit, so out-of-memory messages name it.
MEMORY_LIMIT_MB: int | None = None


def out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, MemoryError) or "can't allocate memory" in str(exc) or \
        type(exc).__name__ == "OutOfMemoryError"


def memory_limit_note() -> str:
    return f" (the scan's --memory-limit is {MEMORY_LIMIT_MB} MB)" if MEMORY_LIMIT_MB else ""


EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_MODEL_FAILED = 3
EXIT_INTERNAL = 4  # a bug in breakscan itself: please report it


INTERRUPT_CODES = {1: "SIGHUP", 2: "SIGINT", 15: "SIGTERM"}  # exit code = 128 + signal number


class Interrupted(BaseException):
    """SIGTERM or SIGHUP reached breakscan (Ctrl-C arrives as KeyboardInterrupt): like
    KeyboardInterrupt it is no ``Exception``, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def interrupt_signal(exc: BaseException) -> int:
    """The signal number behind an interruption (2 for Ctrl-C)."""
    return getattr(exc, "signum", 2)


class SigintWatch:
    """Whether a SIGINT reached this process while watched (:func:`sigint_watched`): a
    KeyboardInterrupt without one is no Ctrl-C but the model's own ``raise KeyboardInterrupt``."""

    def __init__(self, received: bool = False):
        self.received = received


@contextlib.contextmanager
def sigint_watched() -> Iterator[SigintWatch]:
    """Within: SIGINT's handler notes in the watch that the signal came, then does what it did
    (Ctrl-C still raises KeyboardInterrupt). Where no SIGINT can raise (SIGINT ignored or
    default, or another thread: Python handles signals in its main thread) nothing is
    installed and none is received; a handler set outside Python counts as received (unknown)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield SigintWatch()
        return
    previous = signal.getsignal(signal.SIGINT)
    watch = SigintWatch(received=previous is None)
    if not callable(previous):
        yield watch
        return

    def noted(signum: int, frame: object) -> object:
        watch.received = True
        return previous(signum, frame)

    signal.signal(signal.SIGINT, noted)
    try:
        yield watch
    finally:
        if signal.getsignal(signal.SIGINT) is noted:  # unless the model set its own
            signal.signal(signal.SIGINT, previous)


class BreakscanError(Exception):
    exit_code = EXIT_USAGE


class UsageError(BreakscanError):
    """The user's command or input is wrong (missing file, bad shape text, unknown NAME)."""

    exit_code = EXIT_USAGE


class ModelError(BreakscanError):
    """The model's own code failed: import, construction or forward raised."""

    exit_code = EXIT_MODEL_FAILED


def user_frame_hint(exc: BaseException) -> str:
    """' at file:line' of the line to act on in ``exc``'s traceback (see frames.acting_frame)."""
    from .frames import raised_at, where

    return where(raised_at(exc))


# torch's C++ backtrace appended to a message ("Exception raised from THPUtils_unpackLong at …
# frame #0: c10::Error::Error(…"): never shown, it says nothing a user can act on.
_CPP_TRACE = re.compile(r"\s*Exception raised from \S+ at .*", re.DOTALL)


def describe(exc: BaseException) -> str:
    """``Type: message`` squeezed onto one line (a Dynamo error with its GB id up front, so a
    cut line keeps it)."""
    from .messages import dynamo_summary

    text = _CPP_TRACE.sub("", dynamo_summary(str(exc)) or str(exc))
    text = " ".join(text.split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def as_model_error(exc: BaseException, what: str, hint: str = "") -> ModelError:
    """One-line ModelError for an exception raised by the user's own code; a KeyboardInterrupt
    is re-raised (Ctrl-C, or the model's own: the run's end tells them apart, see
    :func:`sigint_watched`)."""
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if isinstance(exc, SystemExit):
        return ModelError(f"{what} called sys.exit({exc.code}){user_frame_hint(exc)}")
    if out_of_memory(exc):
        return ModelError(f"{what} ran out of memory{memory_limit_note()}: {describe(exc)}"
                          f"{user_frame_hint(exc)}")
    return ModelError(f"{what} failed: {describe(exc)}{user_frame_hint(exc)}{hint}")


def raised_interrupt(exc: BaseException, what: str) -> ModelError:
    """A KeyboardInterrupt the model's code raised itself (no SIGINT came, see
    :func:`sigint_watched`): the model's failure, one line naming its line."""
    return ModelError(f"{what} raised {describe(exc)}{user_frame_hint(exc)}")


# What torch says when a forward that needs gradients runs under torch.no_grad().
_NEEDS_GRAD = ("does not require grad", "doesn't require gradient")


def no_grad_hint(exc: BaseException, training: bool) -> str:
    """For a forward that needs gradients (``torch.autograd.grad``, a hook on a tensor) scanned
    in the default mode: say the mode it ran in and how to scan it with gradients."""
    if training or not any(words in str(exc) for words in _NEEDS_GRAD):
        return ""
    return (" — breakscan calls the model in eval mode under torch.no_grad() unless --train is "
            "given; a forward that needs gradients scans with --train")


def raised_by_breakscan(exc: BaseException, *, calling_model: bool = False) -> bool:
    """Is ``exc`` a bug in breakscan (exit 4) rather than the model's failure (exit 3)?

    Decided by where it was raised, never by its type: below breakscan's innermost frame in the
    traceback, a frame of the user's code, a library's or code generated from the model's
    graphs means the model failed (breakscan called it, and it raised); nothing below means
    breakscan's own line raised. Below it only torch and Python's own library: breakscan's bug,
    unless ``calling_model`` (the call was the model's, which may be torch's own module).
    Meant for the scan's child process, where breakscan calls no library but torch.
    """
    from .frames import frames_of, is_own_file, is_stdlib_file, is_torch_file

    frames = frames_of(exc)
    own = [index for index, frame in enumerate(frames) if is_own_file(frame.file)]
    below = frames[own[-1] + 1:] if own else frames
    if not below:
        return True
    if any(not (is_torch_file(f.file) or is_stdlib_file(f.file)) for f in below):
        return False
    return not calling_model


@contextlib.contextmanager
def running_model(what: str, hint: str = "") -> Iterator[None]:
    """Around a stage's calls of the model: an exception the model's code raised leaves as a
    one-line :class:`ModelError` (exit 3) naming its line, ``hint`` appended; breakscan's own
    bug (see :func:`raised_by_breakscan`) and Ctrl-C leave unchanged."""
    try:
        yield
    except BreakscanError:
        raise
    except (Exception, SystemExit) as exc:
        if raised_by_breakscan(exc, calling_model=True):
            raise
        raise as_model_error(exc, what, hint) from exc
