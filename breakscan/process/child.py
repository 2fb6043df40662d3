"""The child's side of an isolated job: runs it, reports its stages, saves what it has found.

Started as ``python -m breakscan.process.child <work folder>`` by
:func:`breakscan.process.isolate.run_isolated`. It reads the request, imports the job it names
(``module:function``; this module knows no job type) and calls it, writing each stage, its
progress and the result so far into the work folder, where the parent reads them after a
timeout or a crash. A job can register how to build its result so far (:func:`when_stopped`),
saved when the parent asks (SIGUSR2) before it kills the child. The child ends with its parent,
and as soon as its result is saved: a thread the model left running does not hold it, and what
the model left running in a session of its own is ended with it (:mod:`.leftovers`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import EXIT_INTERNAL, EXIT_MODEL_FAILED, SigintWatch, sigint_watched
from ..model.jobs import request_from_json
from ..model.result import ScanResult
from ..startup import keep_torch_import_notices
from .leftovers import become_subreaper, end_processes, work_mark

_PROGRESS_EVERY_S = 0.25  # the live line reads progress events this often, at most


class _Reporter:
    """Writes stage events and partial results where the parent can read them after a crash."""

    def __init__(self, work: Path):
        self.work = work
        self.events = open(work / "events.jsonl", "a", buffering=1, encoding="utf-8")
        self._progress_at = 0.0
        self.current = "start-up"  # the stage the job is in (what an error names)

    def emit(self, **event: Any) -> None:
        self.events.write(json.dumps(event) + "\n")
        self.events.flush()
        os.fsync(self.events.fileno())

    def save(self, result: Any) -> None:
        from ..model.jsondata import dumps

        tmp = self.work / "result.json.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(dumps(result))
        os.replace(tmp, self.work / "result.json")

    def stage(self, name: str, result: ScanResult | None) -> None:
        if result is not None:
            self.save(result)
        self.emit(stage=name)
        self.current = name
        self._progress_at = 0.0

    def progress(self, text: str) -> None:
        """Progress within the current stage (for the live line only; never a stage, so a
        stopped scan still names the stage): at most a few a second, and not synced to disk."""
        now = time.monotonic()
        if now - self._progress_at >= _PROGRESS_EVERY_S:
            self._progress_at = now
            self.events.write(json.dumps({"progress": text}) + "\n")
            self.events.flush()


_STOP_REPORTER: "_Reporter | None" = None
_STOP_RESULT: Callable[[], Any] | None = None


def when_stopped(build: Callable[[], Any] | None) -> None:
    """Called by a job in the child: ``build()`` makes its result so far, saved when a timeout
    or an interruption is about to kill the job (None: no longer). A no-op outside a child."""
    global _STOP_RESULT
    _STOP_RESULT = build
    if build is not None and _STOP_REPORTER is not None:
        _STOP_REPORTER.emit(snapshots=True)


def _save_when_asked(signum: int, frame: Any) -> None:
    """SIGUSR2 from the parent: save the job's result so far, then let it be killed."""
    build, reporter = _STOP_RESULT, _STOP_REPORTER
    if build is None or reporter is None:
        return
    try:
        reporter.save(build())
    except BaseException:  # noqa: BLE001 - the earlier partial result stays
        pass
    reporter.emit(snapshot=True)


def _traced_line_writer(path: Path) -> Any:
    """A SIGUSR1 handler writing the frame and line Dynamo is tracing (as faulthandler writes
    a frame), when it is tracing; nothing otherwise."""

    def write(signum: int, frame: Any) -> None:
        convert = sys.modules.get("torch._dynamo.symbolic_convert")
        try:
            tx = convert.InstructionTranslator.current_tx() if convert else None
            code, line = tx.f_code, tx.lineno
        except Exception:  # noqa: BLE001 - not tracing, or another torch's internals
            return
        path.write_text(f'Dynamo was tracing (most recent call first):\n  File '
                        f'"{code.co_filename}", line {line} in {code.co_name}\n',
                        encoding="utf-8")

    return write


def _limit_memory(megabytes: int | None) -> None:
    if not megabytes:
        return
    import resource

    from .. import errors

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    errors.MEMORY_LIMIT_MB = megabytes


PARENT_POLL_S = 0.5  # how often a child checks that the breakscan that started it still runs


def _end_with_parent(parent: int) -> None:
    """The child ends (with its whole group: inductor's compile workers) when its parent dies,
    even by SIGKILL, which leaves the parent no chance to kill it: Linux's parent-death signal
    at once, and a watcher thread within PARENT_POLL_S everywhere."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the signal was asked for
        os.killpg(0, signal.SIGKILL)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent:
                os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="breakscan-parent-watch", daemon=True).start()


def _ending(exc: BaseException, stage: str, *, signalled: bool = True) -> tuple[str, int]:
    """The one-line error and exit code of a job that raised ``exc`` during ``stage``: its own
    line for a :class:`~breakscan.errors.BreakscanError`; exit 3 naming the model's line for
    anything the model's code raised, in whatever stage (``errors.raised_by_breakscan`` decides
    by the traceback's frames), a KeyboardInterrupt too when no SIGINT came (not
    ``signalled``); exit 4 only for breakscan's own bug."""
    from ..errors import (BreakscanError, as_model_error, describe, raised_by_breakscan,
                          raised_interrupt)

    if isinstance(exc, BreakscanError):
        return str(exc), exc.exit_code
    if isinstance(exc, MemoryError):
        from ..errors import memory_limit_note

        return f"ran out of memory{memory_limit_note()} (MemoryError)", EXIT_MODEL_FAILED
    if isinstance(exc, KeyboardInterrupt):
        if signalled:
            return "interrupted", EXIT_MODEL_FAILED
        return str(raised_interrupt(exc, f"during {stage}, the model")), EXIT_MODEL_FAILED
    if not raised_by_breakscan(exc):
        return str(as_model_error(exc, f"during {stage}, the model")), EXIT_MODEL_FAILED
    return (f"internal error in breakscan: {describe(exc)} (please report it; --debug shows the "
            "traceback)"), EXIT_INTERNAL


def run_here(job: str, request: dict[str, Any], *, target: str,
             on_stage: Callable[[str], None] | None = None) -> Any:
    """``job`` run in this process, ended as a child ends it (``_ending``): the run's result, or
    its one-line error and exit code. For the Python API and tests, where torch is already
    imported (a child spends ~3 s importing it); unlike a child, no time or memory limit
    applies and what the job leaves in the process (Dynamo's caches) stays, except the
    caller's imports (:func:`_modules_put_back`)."""
    from ..model.result import ModelRun

    with _modules_put_back(), sigint_watched() as sigint:
        stage = "start-up"

        def entered(name: str, result: Any = None) -> None:
            nonlocal stage
            stage = name
            if on_stage is not None:
                on_stage(name)

        try:
            result = _job_function(job)(request, entered, lambda text: None)
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - as a child reports it
            if isinstance(exc, KeyboardInterrupt) and sigint.received:
                raise  # Ctrl-C stays Ctrl-C; the model's own KeyboardInterrupt is its failure
            message, code = _ending(exc, stage, signalled=False)
            return ModelRun(target=target, result=None, exit_code=code, stage=stage,
                            error=message, detail=traceback.format_exc())
        return ModelRun(target=target, result=result)


def _job_function(job: str) -> Callable[..., Any]:
    """The function a job's ``module:function`` name stands for (this module knows no job)."""
    import importlib

    module, _, function = job.partition(":")
    return getattr(importlib.import_module(module), function)


@contextlib.contextmanager
def _modules_put_back() -> Iterator[None]:
    """Give the caller its ``sys.modules`` back after a job run in its process: a fix's job
    drops the target's modules to import its rewritten copy (whose files it then removes), and
    ``import model`` must not find that copy afterwards. Modules the job dropped or replaced
    are restored; those it imported from files that are gone are dropped; the rest it
    imported (torch's lazily loaded modules) stay, as they must."""
    before = dict(sys.modules)
    try:
        yield
    finally:
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if name not in before and file and not os.path.exists(file):
                del sys.modules[name]
        for name, module in before.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module


def _child_main(work: Path) -> int:
    import faulthandler

    # This file runs as __main__; jobs import it as breakscan.process.child: keep the stop state there.
    from breakscan.process import child as imported

    parent = int(os.environ.get("BREAKSCAN_PARENT_PID") or 0)
    if parent:
        _end_with_parent(parent)
    become_subreaper()  # what the model detaches stays below this process: ended with it

    # Stacks go to a file of their own: a program run keeps the terminal's stderr.
    stack_file = open(work / "stack", "w")
    faulthandler.enable(file=stack_file, all_threads=True)
    # Before the stack: while Dynamo traces, the user's line is not on the Python stack (Dynamo
    # runs, it does not); the line it is tracing is written next to the stack.
    signal.signal(signal.SIGUSR1, _traced_line_writer(work / "traced"))
    faulthandler.register(signal.SIGUSR1, file=stack_file, all_threads=True, chain=True)
    signal.signal(signal.SIGUSR2, imported._save_when_asked)
    # Temporary folders of this scan (a fix's rewritten copy) live in the work folder, which
    # the parent removes even when it had to kill this process.
    os.environ["BREAKSCAN_WORK"] = str(work)
    request = json.loads((work / "request.json").read_text())
    reporter = imported._STOP_REPORTER = _Reporter(work)
    sigint = SigintWatch(received=True)  # until watched: a KeyboardInterrupt is Ctrl-C's
    try:
        _limit_memory(request.get("memory_limit_mb"))
        job = _job_function(request["job"])
        with sigint_watched() as sigint:  # no SIGINT came: the model raised it itself
            result = job(request_from_json(request["request"]), reporter.stage,
                         reporter.progress)
        reporter.save(result)
    except BaseException as exc:  # noqa: BLE001 - everything becomes a one-line error
        message, code = _ending(exc, reporter.current, signalled=sigint.received)
        reporter.emit(error=message, exit_code=code, traceback=traceback.format_exc())
        return 0
    reporter.emit(done=True)
    return 0


ENDED = "ended"  # the file that tells the parent this child has saved its last word


def _end(work: Path, code: int) -> None:
    """End now that the result is saved, whatever the model left behind: Python's own exit
    would wait forever for a thread the model started (not a daemon). The ``ended`` file lets
    the parent stop waiting soon; the atexit handlers still run (a program's own), then what
    the model left running is ended, stdout and stderr flushed, and the process exits."""
    for step in (lambda: (work / ENDED).touch(), atexit._run_exitfuncs):
        try:
            step()  # a handler's error is printed and passed over by atexit itself
        except BaseException:  # noqa: BLE001 - the result is saved; nothing may keep the exit
            pass
    end_processes(os.getpid(), work_mark(work))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a stream the model closed or replaced
            pass
    os._exit(code)


if __name__ == "__main__":
    keep_torch_import_notices()
    _end(Path(sys.argv[1]), _child_main(Path(sys.argv[1])))
