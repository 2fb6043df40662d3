"""An interrupt never leaves breakscan waiting forever on its child.

CPython's ``Popen.poll``/``wait`` take a lock and then enter a ``try``; a signal handler that
raises between the two (Ctrl-C, or breakscan's SIGTERM/SIGHUP handler) leaves the lock held and
every later ``wait`` hangs. CI hit it once: ``breakscan run`` interrupted while waiting on the
program never printed anything again. The supervisor therefore polls with those signals held
back (``isolate._poll``) and sleeps between polls.
"""

import random
import signal
import subprocess

import pytest

from breakscan.process import isolate


@pytest.fixture
def sleeper():
    child = subprocess.Popen(["sleep", "600"])
    yield child
    child.kill()
    child.wait()


def test_the_interrupting_signals_are_held_back_while_popen_holds_its_lock(sleeper,
                                                                           monkeypatch):
    seen = []
    real_poll = sleeper.poll

    def poll():
        seen.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        return real_poll()

    monkeypatch.setattr(sleeper, "poll", poll)
    assert isolate._poll(sleeper) is None
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGHUP} <= seen[0]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # restored


def test_thousands_of_interrupts_while_waiting_never_leave_the_lock_held(sleeper,
                                                                         monkeypatch):
    """The waiting loop interrupted at random moments (SIGALRM from a timer, raising
    KeyboardInterrupt as Ctrl-C does, and held back as Ctrl-C is): Popen's lock is free after
    every one, and the child is still reaped. Waiting with ``Popen.wait`` instead leaves it held
    about once in 800 interrupts."""
    monkeypatch.setattr(isolate, "_INTERRUPTS", isolate._INTERRUPTS | {signal.SIGALRM})

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    watched = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM}
    random.seed(0)
    held, left_blocked = 0, set()
    try:
        for _ in range(6000):
            try:
                signal.setitimer(signal.ITIMER_REAL, random.uniform(1e-5, 2e-3))
                isolate._exited(sleeper, 0.2)
            except KeyboardInterrupt:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            left_blocked = watched & signal.pthread_sigmask(signal.SIG_BLOCK, [])
            if left_blocked:
                break  # every later wait would sit its time out
            held += sleeper._waitpid_lock.locked()
            if sleeper._waitpid_lock.locked():
                sleeper._waitpid_lock.release()  # so that the next round measures again
    finally:
        signal.signal(signal.SIGALRM, previous)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, watched)  # never leak into later tests
    assert held == 0
    # nor a signal left blocked: a process started afterwards inherits the mask, and a
    # breakscan started so never sees Ctrl-C (a test of Ctrl-C once failed that way)
    assert left_blocked == set()
    sleeper.kill()
    assert isolate._exited(sleeper, 10)
