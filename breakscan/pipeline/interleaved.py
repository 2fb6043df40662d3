"""Two compiled models timed against each other in one process (the same-process A/B): a fix's
original and fixed model (``--fix``), or ``breakscan compare``'s A and B.

Both are compiled here and timed in alternating blocks with the same inputs and thread count,
the order within a pair alternating so a drift of the machine falls on both; the speedup comes
with its bootstrap interval and verdict, or none when a side's blocks spread more than their
median (``stats.ab_timing``).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from ..dynamo.backend import compile_model, own_backend
from ..dynamo.session import dynamo_session
from ..errors import describe, raised_by_breakscan
from ..model.stats import ab_timing
from ..model.verdicts import ABTiming, Correctness
from .call import synchronize
from .measure import NOISE, WARMUP_CALLS, OnProgress, short_error
from .outputs import comparable_randomness, compare_outputs, reseed
from .state import CallState, failed_for_its_state

AB_MIN_BLOCKS = 10  # block pairs, at least, whatever the time budget
AB_BLOCK_S = 0.01  # the faster model's block runs at least this long (calls calibrated to it)


@dataclass
class Variant:
    """One side of a before/after timing: a callable, its inputs and how it is compiled."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    compile_only: list[tuple[Any, str]] | None = None
    dynamic: bool | None = None
    config: dict[str, Any] = field(default_factory=dict)  # torch._dynamo.config while compiled
    env: dict[str, str] = field(default_factory=dict)  # environment variables while it runs
    state: CallState | None = None  # the model's state between calls (``state.py``)
    steady: bool = False  # timed calls from the state after one call (``time_interleaved``)

    def compiled(self, device: torch.device, label: str, backend: str, mode: str | None,
                 options: dict[str, Any] | None) -> Callable[[], Any]:
        """The compiled model bound to its inputs (call it within :meth:`context`), with a
        backend of its own (``own_backend``): never the other variant's compiled code."""
        target = compile_model(self.fn, self.compile_only, dynamic=self.dynamic,
                               backend=own_backend(backend, mode, options, self.dynamic, label))

        def call(first: bool = False) -> Any:
            """``first``: the compared call, from the state as built; else a timed one,
            natural, or from the state after one call once natural calls failed."""
            if self.state is not None and first:
                self.state.fresh()
            elif self.state is not None and self.steady:
                self.state.steady()
            out = target(*self.args, **self.kwargs)
            synchronize(device)
            return out
        return call

    def context(self, training: bool) -> contextlib.ExitStack:
        """Its Dynamo config and grad mode, entered once per timed block, not per call."""
        import torch._dynamo.config as dynamo_config

        stack = contextlib.ExitStack()
        stack.enter_context(dynamo_config.patch(**self.config))
        stack.enter_context(environment(self.env))
        stack.enter_context(contextlib.nullcontext() if training else torch.no_grad())
        return stack


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """``env`` set in ``os.environ`` for the block, the previous values restored after (an
    environment switch applies to the fixed model only, never to the original)."""
    previous = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# time_interleaved's "why": the original raises compiled with the backend, the fixed one runs
ORIGINAL_FAILS = "only the fixed model compiles with this backend"


def _block(call: Callable[[], Any], number: int, context: contextlib.ExitStack) -> float:
    with context:
        start = time.perf_counter()
        for _ in range(number):
            call()
        return (time.perf_counter() - start) / number


def _compile_both(variants: tuple[Variant, Variant], device: torch.device, training: bool,
                  stage: Callable[[str], None], **options: Any
                  ) -> tuple[list[Callable[[], Any]], list[Any], str | None]:
    """Each variant compiled and called once from the same random state: (the bound calls,
    their first outputs, why one did not compile)."""
    calls: list[Any] = []
    outs: list[Any] = []
    original_failed = None
    for label, variant in zip(("original", "fixed"), variants):
        stage(f"compile ({options['backend']}, {label})")
        reseed()
        try:
            call = variant.compiled(device, label, options["backend"], options["mode"],
                                    options["options"])
            with variant.context(training):
                outs.append(call(first=True))
        except Exception as exc:
            why = short_error(f"the {label} model did not compile: {describe(exc)}")
            if label == "fixed":
                return [], [], why
            original_failed, call = why, None  # does the fix make it compile? (see below)
            outs.append(None)
        calls.append(call)
    if original_failed is not None:  # the fixed one compiled: nothing to time it against
        return [None, calls[1]], outs, None
    return calls, outs, None


def _alternate(block: Callable[[int, int], float], max_run_time: float,
               on_progress: OnProgress | None) -> tuple[list[float], list[float], int]:
    """Blocks of both models, pair after pair, the order alternating: (original's seconds per
    call, fixed's, calls per block)."""
    for k in (0, 1):
        block(k, WARMUP_CALLS)
    # Blocks of the faster model last at least AB_BLOCK_S: short blocks are noisy.
    fastest = min(block(k, 1) for k in (0, 1))
    number = max(1, math.ceil(AB_BLOCK_S / max(fastest, 1e-9)))
    before: list[float] = []
    after: list[float] = []
    budget, start = 2 * max_run_time, time.perf_counter()
    while len(before) < AB_MIN_BLOCKS or time.perf_counter() - start < budget:
        if len(before) % 2 == 0:
            before.append(block(0, number))
            after.append(block(1, number))
        else:
            after.append(block(1, number))
            before.append(block(0, number))
        if on_progress is not None:
            spent = min(time.perf_counter() - start, budget)
            on_progress(f"{len(before)} block pairs, {spent:.1f}/{budget:g} s")
    return before, after, number


def time_interleaved(original: Variant, fixed: Variant, *, device: torch.device,
                     training: bool, backend: str = "inductor", mode: str | None = None,
                     threads: int = 1, max_run_time: float = 2.0,
                     expected: tuple[Any, Any] | None = None, random: bool = False,
                     compile_options: dict[str, Any] | None = None,
                     on_stage: Callable[[str], None] | None = None,
                     on_progress: OnProgress | None = None
                     ) -> tuple[ABTiming | None, tuple[Correctness | None, Correctness | None],
                                str | None]:
    """Compile both models in this process and time them in alternating blocks.

    Returns (the A/B timing, each model's first compiled outputs vs its ``expected`` eager
    outputs — (original, fixed) —, why it could not be timed). Same inputs, same thread count,
    the order within a pair alternating so a drift of the machine falls on both; at least
    ``AB_MIN_BLOCKS`` pairs, then until ``2 × max_run_time`` is spent. ``random``: the models
    draw random numbers, so both are compiled to draw eager's (``comparable_randomness``).
    """
    stage = on_stage or (lambda name: None)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)  # before compiling: inductor bakes the count in
    try:
        with dynamo_session(training=training), comparable_randomness(random):
            variants = (original, fixed)
            calls, outs, why = _compile_both(variants, device, training, stage, backend=backend,
                                             mode=mode, options=compile_options)
            if why is not None:
                return None, (None, None), why
            correctness: tuple[Correctness | None, Correctness | None] = (None, None)
            if expected is not None:
                correctness = (compare_outputs(expected[0], outs[0]) if calls[0] else None,
                               compare_outputs(expected[1], outs[1]))
            if calls[0] is None:  # only the fixed model compiles: ``ORIGINAL_FAILS``
                return None, correctness, ORIGINAL_FAILS
            stage("timing (original and fixed, interleaved)")

            def block(k: int, number: int) -> float:
                return _block(calls[k], number, variants[k].context(training))

            try:
                before, after, number = _alternate(block, max_run_time, on_progress)
            except Exception as exc:  # called again and again, a model that keeps state fails
                if not any(failed_for_its_state(v.state, exc) for v in variants) or \
                        raised_by_breakscan(exc, calling_model=True):
                    raise
                for variant in variants:  # both from their state after one call, and again
                    variant.steady = True
                before, after, number = _alternate(block, max_run_time, on_progress)
    finally:
        torch.set_num_threads(previous_threads)
    return ab_timing(before, after, calls_per_block=number, threads=threads, backend=backend,
                     noise=NOISE), correctness, None
