"""Run a job in a child process with a time limit, keeping whatever it found before it stopped.

A user's model can hang, segfault inside a C extension or inductor's compiled code, exhaust
memory or call ``os._exit``. None of that may take breakscan (or the user's CI) down with it, so
the CLI runs every scan (and every fix verification, and compare's output check) in a fresh
``python -m breakscan.process.child`` process. This module is the parent's side and knows no
job type: the request names the job as ``module:function`` (``breakscan.pipeline.scan:scan_job``),
which the child (:mod:`breakscan.process.child`) imports and calls as
``job(request, on_stage, on_progress)``.

- the child starts clean (no Dynamo caches or config changes from an earlier scan) in its own
  session, so a timeout kills it *and* inductor's compiler children; what the model detached
  into a session of its own is ended too (:mod:`.leftovers`), or named as left running;
- the child exits as soon as its result is saved; one that still has not (a hanging atexit
  handler) is killed ``_END_GRACE_S`` later and its saved result used;
- before each stage (load, eager run, explain, recompiles, compile, timing) it appends the
  stage to ``events.jsonl`` and writes the result found so far as JSON data
  (``jsondata``: the parent parses it, never unpickles it: the model runs in the child, so the
  child's files are untrusted); the parent turns a hang, crash or exception into a one-line
  error naming the stage, plus that partial result;
- ``faulthandler`` in the child dumps the Python stack on a crash, or on SIGUSR1 just before a
  timeout kill, so the error can also name the user's line that was running.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import EXIT_MODEL_FAILED, INTERRUPT_CODES, Interrupted, interrupt_signal
from ..model.jobs import JobRequest, request_to_json
from ..model.result import ModelRun, ScanResult
from ..options import Limits
from .child import ENDED
from .leftovers import WORK_VARIABLE, end_processes, remove_stale_work, work_mark

CHILD_MODULE = "breakscan.process.child"  # run as ``python -m``: the child's side
_DUMP_GRACE_S = 0.5  # before the deadline, the child is asked to print its stack (SIGUSR1)
_SNAPSHOT_GRACE_S = 10.0  # how long a stopped job may take to save what it has
_END_GRACE_S = 10.0  # how long a child that saved its result may take to exit
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")  # what torch's thread pools read
MAX_RESULT_BYTES = 512 * 1024 * 1024  # a child's result beyond this is not read


class Cancel(threading.Event):
    """Set from another thread (``check -j``'s main thread on Ctrl-C) to stop a running job as
    if the signal ``signum`` had reached it."""

    signum: int = signal.SIGINT


def run_isolated(job: str, request: JobRequest, *, target: str,
                 limits: Limits = Limits(),
                 on_stage: Callable[[str], None] | None = None,
                 inherit_stdio: bool = False, cancel: Cancel | None = None,
                 returns: type | None = ScanResult, stdout_to_stderr: bool = False) -> ModelRun:
    """Run ``job`` (``module:function``) on ``request`` in a child process; never raises for
    anything the model does.

    ``returns`` is the kind of result the job makes: what the child wrote is parsed as data
    and used only when it is one (``None``: any result record).

    ``request`` is the job's typed request (``model/jobs.py``: serialised there); ``target``
    labels the run. ``limits.timeout``
    (seconds, None for none) bounds the whole job, ``limits.memory_limit_mb`` its memory. The
    returned run has ``error`` and ``stage`` set when the job did not finish, and ``result``
    holds what the finished stages found (``partial``). ``on_stage(name)`` is called in this
    process as the child enters each stage, or reports progress within one (a live line).
    ``inherit_stdio`` gives the child this process's stdin, stdout and stderr (a program run
    talks to the terminal as it would without breakscan; ``stdout_to_stderr``: its stdout goes
    to this process's stderr); otherwise they are files it keeps.
    A job that registered :func:`breakscan.process.child.when_stopped` is asked for its result
    before a timeout or an interruption kills it. ``limits.threads`` caps the child's CPU
    threads (OpenMP/MKL environment, read by torch when it loads); ``cancel`` stops it from
    another thread.
    """
    remove_stale_work()
    with tempfile.TemporaryDirectory(prefix="breakscan-") as tmp:
        work = Path(tmp)
        (work / "owner.json").write_text(json.dumps({"parent": os.getpid()}))
        (work / "request.json").write_text(json.dumps(
            {"job": job, "request": request_to_json(request),
             "memory_limit_mb": limits.memory_limit_mb}))
        started = time.monotonic()
        with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
            streams: dict[str, Any] = {} if inherit_stdio else \
                {"stdin": subprocess.DEVNULL, "stdout": out, "stderr": err}
            if inherit_stdio and stdout_to_stderr:  # stdout carries the report alone
                streams["stdout"] = sys.stderr.fileno()
            child = _start_child(work, streams, limits.threads)
            timed_out, interrupted, left = _supervise(child, work, limits.timeout, on_stage,
                                                      cancel)
        return _outcome(target, work, child.returncode, timed_out=timed_out,
                        timeout=limits.timeout, seconds=time.monotonic() - started,
                        interrupted=interrupted, returns=returns, left_running=left)


def _start_child(work: Path, streams: dict[str, Any], threads: int | None) -> subprocess.Popen:
    """The child on ``work``, in a session of its own, its id added to ``owner.json``."""
    env = dict(os.environ, BREAKSCAN_PARENT_PID=str(os.getpid()), **{WORK_VARIABLE: str(work)})
    if threads:
        env.update({name: str(threads) for name in _THREAD_VARIABLES})
    child = subprocess.Popen(
        [sys.executable, "-m", CHILD_MODULE, str(work)], **streams, env=env,
        start_new_session=True, cwd=os.getcwd())
    (work / "owner.json").write_text(json.dumps({"parent": os.getpid(),
                                                 "child": child.pid}))
    return child


def _supervise(child: subprocess.Popen, work: Path, timeout: float | None,
               on_stage: Callable[[str], None] | None,
               cancel: Cancel | None) -> tuple[bool, int | None, list[str]]:
    """Wait for the child until it ends, times out or is interrupted, then kill its group and
    what it left running; (timed out, the interrupting signal or None, what still runs)."""
    timed_out = False
    interrupted = None
    grace = min(_DUMP_GRACE_S, timeout / 10) if timeout else 0.0
    try:
        try:
            _wait(child, work, (timeout - grace) if timeout else None, on_stage, cancel)
        except subprocess.TimeoutExpired:
            timed_out = _dump_stack_then_kill(child, grace)
            if timed_out:
                _ask_for_result(child, work)
        except (KeyboardInterrupt, Interrupted) as exc:  # Ctrl-C, SIGTERM, SIGHUP
            interrupted = interrupt_signal(exc)
            _ask_for_result(child, work)
    finally:
        left = _kill_group(child, work)  # inductor's compile workers outlive a child
    return timed_out, interrupted, left


def _wait(child: subprocess.Popen, work: Path, timeout: float | None,
          on_stage: Callable[[str], None] | None, cancel: Cancel | None = None) -> None:
    """``child.wait(timeout)``, reporting each stage the child enters to ``on_stage``; raises
    :class:`Interrupted` when ``cancel`` is set. Returns ``_END_GRACE_S`` after the child said
    it has ended (its result saved) even if it has not exited: the caller kills it."""
    deadline = None if timeout is None else time.monotonic() + timeout
    seen = 0
    ended_at = None
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise subprocess.TimeoutExpired(child.args, timeout)
        if cancel is not None and cancel.is_set():
            raise Interrupted(cancel.signum)
        if _exited(child, 0.2 if left is None else min(0.2, left)):
            return
        if ended_at is None and (work / ENDED).exists():
            ended_at = time.monotonic()
        if ended_at is not None and time.monotonic() - ended_at > _END_GRACE_S:
            return
        if on_stage is not None:
            seen = _report_stages(work, on_stage, seen)


def _report_stages(work: Path, on_stage: Callable[[str], None], seen: int) -> int:
    """Each stage the child entered since the ``seen`` first, then its progress; how many."""
    events = _read_events(work)
    stages = [e["stage"] for e in events if "stage" in e]
    for name in stages[seen:]:
        on_stage(name)
    if events and "progress" in events[-1] and stages:  # e.g. the runs of a timing
        on_stage(f"{stages[-1]} {events[-1]['progress']}")
    return len(stages)


def _kill_group(child: subprocess.Popen, work: Path) -> list[str]:
    """Kill the child's process group and what the model detached from it (stopped first, so
    that nothing forks meanwhile); what still runs, named."""
    running = _poll(child) is None
    if running:
        _signal_group(child, signal.SIGSTOP)  # its descendants stay below it, found next
    left = end_processes(child.pid if running else None, work_mark(work))
    _signal_group(child, signal.SIGKILL)
    while not _exited(child, 0.05):
        _signal_group(child, signal.SIGKILL)
    return left


_INTERRUPTS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # what raises in this process


def _poll(child: subprocess.Popen) -> int | None:
    """``child.poll()`` with the interrupting signals held back until it returns: one raised
    between ``Popen``'s lock being taken and its ``try`` (CPython) leaves the lock held, and every
    later ``wait`` hangs forever (measured: 24 of 20,000 interrupts in a waiting loop)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # only read: nothing to undo yet
    try:  # entered before anything is blocked: a handler raising anywhere below restores it
        signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
        return child.poll()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _exited(child: subprocess.Popen, seconds: float) -> bool:
    """Whether the child exits within ``seconds`` (polled; an interrupt raises from the sleep,
    never from inside ``Popen``)."""
    deadline = time.monotonic() + seconds
    while _poll(child) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(0.01, left))
    return True


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _dump_stack_then_kill(child: subprocess.Popen, grace: float) -> bool:
    """Ask for the stack and give the child its last ``grace`` seconds; True if it is still
    running then (the caller kills it)."""
    try:
        child.send_signal(signal.SIGUSR1)  # faulthandler prints every thread's stack
    except ProcessLookupError:
        return False
    return not _exited(child, grace)  # still running: the caller kills it


def _ask_for_result(child: subprocess.Popen, work: Path) -> None:
    """A job that can report half-way (``when_stopped``) is asked to save its result now
    (SIGUSR2); wait until it has, it exits, or ``_SNAPSHOT_GRACE_S`` pass."""
    if _poll(child) is not None or not any("snapshots" in e for e in _read_events(work)):
        return
    try:
        child.send_signal(signal.SIGUSR2)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + _SNAPSHOT_GRACE_S
    while time.monotonic() < deadline and _poll(child) is None:
        if any("snapshot" in e for e in _read_events(work)):
            return
        time.sleep(0.05)


def _read_events(work: Path) -> list[dict[str, Any]]:
    path = work / "events.jsonl"
    if not path.exists():
        return []
    events = []
    text = _tail(path, EVENTS_BYTES)  # the child can write anything there: read its end only
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # a line cut short (a killed child), or junk
            continue
        if isinstance(event, dict) and all(
                isinstance(event.get(k, ""), str) for k in ("stage", "error", "traceback",
                                                            "progress")) and \
                isinstance(event.get("exit_code", 0), int):
            events.append(event)
    return events


def _read_partial(work: Path) -> Any:
    """The result the child saved, parsed as data (anything unreadable: none)."""
    from ..model.jsondata import DataError, loads

    try:
        with open(work / "result.json", "rb") as fh:
            return loads(fh.read(MAX_RESULT_BYTES + 1))
    except (OSError, DataError):
        return None


TAIL_BYTES = 256 * 1024  # of a child's stderr: enough for its last traceback and stack dump
EVENTS_BYTES = 4 * 1024 * 1024  # of its events: the last stages and its end


def _tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The end of a file, read without loading it whole (a model may write gigabytes)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


_NO_USER_LINE = " (no line of your code was on the stack)"


def user_line_from_stack(stderr: str) -> str:
    """' at file:line in fn' of the line to act on in a faulthandler dump (most recent first):
    in the thread that was running (``Current thread``), the user's own innermost line, else
    a library's; never the standard library's (a timer's ``traceback.py``). Empty without a
    dump; ' (no line of your code was on the stack)' when the dump names none."""
    from ..frames import acting_frame, display_path, is_stdlib_file, parse_stack, user_frame

    if 'File "' not in stderr:
        return ""
    blocks = re.split(r"^(?=(?:Current thread|Thread) 0x)", stderr, flags=re.MULTILINE)
    current = next((b for b in blocks if b.startswith("Current thread")), stderr)
    frames = parse_stack(current, most_recent_first=True)
    frame = user_frame(frames) or acting_frame(frames)
    if frame is None or is_stdlib_file(frame.file):
        return _NO_USER_LINE
    return f" at {display_path(frame.file)}:{frame.line}" + (
        f" in {frame.function}" if frame.function else "")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _outcome(target: str, work: Path, returncode: int, *, timed_out: bool,
             timeout: float | None, seconds: float, interrupted: int | None = None,
             returns: type | None = ScanResult,
             left_running: list[str] | None = None) -> ModelRun:
    """The run, with a note naming each process the model left that could not be ended."""
    run = _from_files(target, work, returncode, timed_out=timed_out, timeout=timeout,
                      interrupted=interrupted, returns=returns)
    if left_running:
        note = f"left running: {', '.join(left_running)} (breakscan could not end it)"
        notes = getattr(run.result, "notes", None)
        if isinstance(notes, list):
            notes.append(note)
        elif run.error is not None:
            run.error = f"{run.error}; {note}"
        else:
            run.detail = f"{run.detail}\n{note}".strip()
    return run


def _from_files(target: str, work: Path, returncode: int, *, timed_out: bool,
               timeout: float | None, interrupted: int | None,
               returns: type | None) -> ModelRun:
    """The run as the child's files tell it: a saved result once the child said it was done
    (even if it then hung and was killed), else the one-line error and the partial result."""
    events = _read_events(work)
    stage = next((e["stage"] for e in reversed(events) if "stage" in e), "start-up")
    final = next((e for e in reversed(events) if "done" in e or "error" in e), None)
    stderr = _tail(work / "stderr") + _tail(work / "stack")
    tail = "\n".join(stderr.strip().splitlines()[-40:])
    if final is not None and "done" in final and interrupted is None:
        result = _read_partial(work)
        if result is not None and (returns is None or isinstance(result, returns)):
            return ModelRun(target=target, result=result)
        if result is not None:  # data of the wrong kind: not trusted, not used
            return ModelRun(target=target, result=None, exit_code=EXIT_MODEL_FAILED,
                            stage=stage, error=f"the scan process returned a "
                            f"{type(result).__name__}, not a result (during {stage})")
    partial = _read_partial(work)
    if not isinstance(partial, ScanResult):
        partial = None
    if interrupted is not None:
        message = f"interrupted ({INTERRUPT_CODES.get(interrupted, interrupted)}) during {stage}"
        code, detail = 128 + interrupted, tail
    elif final is not None and "error" in final:  # its last word, even if it then hung
        message, code = final["error"], final.get("exit_code", EXIT_MODEL_FAILED)
        detail = final.get("traceback", "")
    elif timed_out:
        where = user_line_from_stack(stderr)
        traced = _tail(work / "traced")
        if where in ("", _NO_USER_LINE) and traced:  # Dynamo was tracing: the line it traced
            found = user_line_from_stack(traced)
            if found not in ("", _NO_USER_LINE):
                where = found + " (Dynamo was tracing it)"
        what = "program" if stage.startswith("program") else "model"
        message = (f"timed out after {timeout:g} s during {stage}{where}; the {what} may hang "
                   "(raise --timeout if it is just slow)")
        code, detail = EXIT_MODEL_FAILED, tail
    elif returncode < 0:
        name = _signal_name(-returncode)
        why = " (killed from outside, often for running out of memory)" \
            if -returncode == signal.SIGKILL else ""
        message = (f"the scan process crashed with {name}{why} during {stage}"
                   f"{user_line_from_stack(stderr)}")
        code, detail = EXIT_MODEL_FAILED, tail
    else:
        message = (f"the scan process exited with status {returncode} during {stage} without "
                   f"finishing (os._exit or a native abort?){user_line_from_stack(stderr)}")
        code, detail = EXIT_MODEL_FAILED, tail
    if partial is not None:
        partial.partial, partial.stopped_at, partial.error = True, stage, message
    return ModelRun(target=target, result=partial, error=message, exit_code=code, stage=stage,
                    detail=detail)
