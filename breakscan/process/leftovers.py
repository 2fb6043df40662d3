"""The processes a job left running, ended with it: what a model detached from the child's
process group (``setsid``, ``start_new_session=True``, a double fork) is found and killed.

Killing the child's process group (:mod:`breakscan.process.isolate`) ends what the model started
in that group; a process in a session of its own escapes it. On Linux two marks find such a
process through ``/proc``: it descends from the child (which is a subreaper, so the orphan of a
double fork stays below it while it lives), or its environment holds the child's work folder
(``BREAKSCAN_WORK``, which finds it after the child has gone). Each found process is stopped
first, so it cannot start another while the rest are found, then all are killed; what still runs
after that (another user's process) is named. Without ``/proc`` only the group is ended.

A run whose breakscan and child were both killed (SIGKILL) leaves its work folder behind; the
next run removes it (:func:`remove_stale_work`).
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

PROC = "/proc"
WORK_VARIABLE = "BREAKSCAN_WORK"  # in the child's environment: its work folder
_ROUNDS = 50  # of finding and stopping: a process can fork between two looks
_GONE_WAIT_S = 1.0  # a killed process takes a moment to become a zombie


def become_subreaper() -> None:
    """In the child: orphans of the model's processes are re-parented to it instead of init, so
    they stay its descendants (Linux's ``PR_SET_CHILD_SUBREAPER``; elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def work_mark(work: object) -> bytes:
    """The environment entry every process the child starts inherits (unless it drops it)."""
    return f"{WORK_VARIABLE}={work}".encode()


def end_processes(root: int | None, mark: bytes | None) -> list[str]:
    """Stop, then kill, every process below ``root`` and every process of this user whose
    environment holds ``mark`` (neither ``root`` nor this process); ``'pid N (command)'`` of each
    that still runs afterwards. Nothing to do without ``/proc``."""
    if not os.path.isdir(PROC):
        return []
    stopped: set[int] = set()
    for _ in range(_ROUNDS):
        new = _found(root, mark) - stopped
        if not new:
            break
        for pid in new:
            _send(pid, signal.SIGSTOP)
        stopped |= new
    for pid in stopped:
        _send(pid, signal.SIGKILL)
    deadline = time.monotonic() + _GONE_WAIT_S
    running = set(stopped)
    while running and time.monotonic() < deadline:
        running = {pid for pid in running if _state(pid) not in ("", "Z", "X")}
        if running:
            time.sleep(0.02)
    return [describe(pid) for pid in sorted(running)]


def describe(pid: int) -> str:
    """``pid N (its command line)``, control characters escaped."""
    try:
        with open(f"{PROC}/{pid}/cmdline", "rb") as fh:
            command = fh.read(4096).replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        command = ""
    command = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in command)
    if len(command) > 120:
        command = command[:119] + "…"
    return f"pid {pid} ({command or '?'})"


def _found(root: int | None, mark: bytes | None) -> set[int]:
    """Live processes below ``root`` or holding ``mark``, this process and ``root`` left out."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [root] if root else []
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in found:
                found.add(pid)
                todo.append(pid)
    if mark:
        found |= {pid for pid in table if pid not in found and _holds(pid, mark)}
    found -= {os.getpid(), root or 0}
    return {pid for pid in found if table[pid][1] not in ("Z", "X")}


def _table() -> dict[int, tuple[int, str]]:
    """Every process: its parent and state, from ``/proc/PID/stat``."""
    table = {}
    for name in os.listdir(PROC):
        if name.isdigit():
            state, parent = _stat(int(name))
            if state:
                table[int(name)] = (parent, state)
    return table


def _stat(pid: int) -> tuple[str, int]:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as fh:
            data = fh.read()
        fields = data[data.rfind(b")") + 2:].split()  # the command in () may hold anything
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return "", 0


def _state(pid: int) -> str:
    return _stat(pid)[0]


def _holds(pid: int, mark: bytes) -> bool:
    try:
        with open(f"{PROC}/{pid}/environ", "rb") as fh:
            return mark in fh.read().split(b"\0")
    except OSError:  # another user's process, or gone
        return False


def _send(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:  # gone, or not ours to signal (then named as left running)
        pass


def remove_stale_work(root: str | None = None) -> None:
    """Remove the work folders of runs whose breakscan and child both died (SIGKILL leaves
    them): each holds ``owner.json`` with both process ids."""
    import shutil

    for folder in Path(root or tempfile.gettempdir()).glob("breakscan-*"):
        try:
            owner = json.loads((folder / "owner.json").read_text())
            pids = [int(owner["parent"]), int(owner.get("child") or 0)]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours, or still being set up
        if not any(_alive(pid) for pid in pids if pid):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's)
    return True
