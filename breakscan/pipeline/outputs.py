"""Outputs compared the same way everywhere, from the same random state.

Every compared call (eager, compiled, a fix's compiled copy) starts from :func:`reseed`: torch's
generators (CPU and every CUDA device), Python's ``random`` and NumPy's global state. A model that
draws random numbers (dropout in train mode, a sampler's noise) still differs once compiled,
because Inductor generates its own; :func:`comparable_randomness` compiles it with
``torch._inductor.config.fallback_random`` so its draws are eager's, and the reports say so.

Outputs are close when each tensor's largest difference is small *relative to that tensor's
magnitude* (:data:`TOLERANCE` per dtype): a value collapsing from 8e-9 to 0 is a change, which an
absolute tolerance would hide, and a float32 reduction reordered by a compiler is not.
"""

from __future__ import annotations

import contextlib
import math
import random
import sys
from typing import Any, Callable, Iterator

import torch

from ..model.verdicts import Correctness

SEED = 0
# The largest difference allowed, as a share of the tensor's largest magnitude, per dtype
# (float32: a compiled reduction's reordering is ~1e-7..1e-6 of the values it sums).
TOLERANCE = {torch.float64: 1e-7, torch.float32: 1e-5, torch.float16: 1e-3,
             torch.bfloat16: 1.6e-2}
_DEFAULT_TOLERANCE = 1e-5
_PLAIN = (int, float, complex, bool, str, bytes, type(None))


def reseed() -> None:
    """The random state every compared call starts from: torch (CPU and CUDA), ``random``,
    NumPy's global generator (when NumPy was imported by the model)."""
    torch.manual_seed(SEED)  # seeds every CUDA device too
    random.seed(SEED)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(SEED)


def _random_state() -> tuple[Any, ...]:
    numpy = sys.modules.get("numpy")
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else []
    return (torch.get_rng_state(), cuda, random.getstate(),
            numpy.random.get_state()[1].tobytes() if numpy is not None else None)


def _same_state(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return torch.equal(a[0], b[0]) and len(a[1]) == len(b[1]) and \
        all(torch.equal(x, y) for x, y in zip(a[1], b[1])) and a[2] == b[2] and a[3] == b[3]


def draws_random_numbers(run: Callable[[], Any]) -> tuple[bool, Any]:
    """Run once from :func:`reseed`: (whether it drew from any generator, its output). A call
    that entered ``torch.random.fork_rng()`` counts as drawing: the fork restores the state its
    block drew from, so the state alone would not show the draws Inductor makes its own."""
    reseed()
    start = _random_state()
    with _forks_noted() as forked:
        out = run()
    return bool(forked) or not _same_state(start, _random_state()), out


@contextlib.contextmanager
def _forks_noted() -> Iterator[list[bool]]:
    """``torch.random.fork_rng`` noting each call while the block runs (looked up at call time
    by code that writes ``torch.random.fork_rng()``; a name imported before is not seen)."""
    original = torch.random.fork_rng
    forked: list[bool] = []

    def noting(*args: Any, **kwargs: Any) -> Any:
        forked.append(True)
        return original(*args, **kwargs)

    torch.random.fork_rng = noting
    try:
        yield forked
    finally:
        torch.random.fork_rng = original


@contextlib.contextmanager
def comparable_randomness(active: bool) -> Iterator[bool]:
    """Inductor made to draw eager's random numbers (``fallback_random``) while ``active``;
    yields whether it was set (False where this torch has no such setting)."""
    config = getattr(getattr(torch, "_inductor", None), "config", None)
    if not active or config is None or not hasattr(config, "fallback_random"):
        yield False
        return
    with config.patch(fallback_random=True):
        yield True


def _leaves(value: Any) -> list[Any]:
    leaves, _ = torch.utils._pytree.tree_flatten(value)
    return leaves


def _plain(t: torch.Tensor) -> torch.Tensor:
    return t if type(t) is torch.Tensor else t.detach().as_subclass(torch.Tensor)


def tolerance(dtype: torch.dtype) -> float:
    return TOLERANCE.get(dtype, _DEFAULT_TOLERANCE)


def scaled_error(expected: torch.Tensor, actual: torch.Tensor) -> float:
    """The largest difference as a share of the larger of the two tensors' largest magnitudes
    (0 when both are all zero); NaNs must sit in the same places (else infinity)."""
    e, a = expected.detach().double(), actual.detach().double()
    nan_e, nan_a = torch.isnan(e), torch.isnan(a)
    if not torch.equal(nan_e, nan_a):
        return math.inf
    e, a = e[~nan_e], a[~nan_a]
    if not e.numel():
        return 0.0
    if not torch.equal(torch.isinf(e), torch.isinf(a)) or \
            not torch.equal(e[torch.isinf(e)], a[torch.isinf(a)]):
        return math.inf
    finite = ~torch.isinf(e)
    e, a = e[finite], a[finite]
    if not e.numel():
        return 0.0
    scale = max(float(e.abs().max()), float(a.abs().max()))
    diff = float((a - e).abs().max())
    return diff / scale if scale else 0.0


def _compare_tensor(index: int, e: torch.Tensor, a: torch.Tensor) -> tuple[str | None, float,
                                                                           float, float]:
    """(problem, scaled error, max abs error, max rel error) of one tensor leaf (a tensor
    subclass compared as the plain tensor it holds: its own ops may refuse `torch.equal`)."""
    e, a = _plain(e), _plain(a)
    if a.shape != e.shape:
        return f"output {index}: shape {tuple(a.shape)} != {tuple(e.shape)}", math.inf, 0.0, 0.0
    if not (e.is_floating_point() or e.is_complex()):
        same = torch.equal(a.detach().cpu(), e.detach().cpu()) and a.dtype == e.dtype
        return (None if same else f"output {index}: values differ ({e.dtype})"), \
            (0.0 if same else math.inf), 0.0, 0.0
    if e.is_complex():
        e, a = torch.view_as_real(e), torch.view_as_real(a)
    scaled = scaled_error(e, a)
    diff = (a.detach().double() - e.detach().double()).abs()
    diff = diff[~torch.isnan(diff)] if diff.numel() else diff
    max_abs = float(diff.max()) if diff.numel() else 0.0
    magnitude = float(e.detach().double().abs().nan_to_num(0.0).max()) if e.numel() else 0.0
    max_rel = max_abs / magnitude if magnitude else (0.0 if max_abs == 0 else math.inf)
    allowed = tolerance(e.dtype)
    problem = None if scaled <= allowed else (
        f"output {index}: differs by {scaled:.3g} of its largest magnitude "
        f"({magnitude:.3g}; {e.dtype} allows {allowed:g})")
    return problem, scaled, max_abs, max_rel


def _compare_float(index: int, e: float, a: float) -> tuple[str | None, float, float]:
    """(problem, scaled error, abs error) of two Python floats. A float a model returns is most
    often read off a float32 tensor (``float(t.mean())``), so it carries that tensor's rounding:
    judged like a float32 tensor leaf, relative to its magnitude (NaN equals NaN)."""
    if math.isnan(e) or math.isnan(a):
        same = math.isnan(e) and math.isnan(a)
        return (None if same else f"output {index}: {a!r} != {e!r}"), \
            (0.0 if same else math.inf), 0.0
    if math.isinf(e) or math.isinf(a):
        return (None if e == a else f"output {index}: {a!r} != {e!r}"), \
            (0.0 if e == a else math.inf), 0.0
    scale = max(abs(e), abs(a))
    scaled = abs(a - e) / scale if scale else 0.0
    allowed = tolerance(torch.float32)
    problem = None if scaled <= allowed else (
        f"output {index}: {a!r} != {e!r} (differs by {scaled:.3g} of its magnitude; a Python "
        f"float is judged as float32, which allows {allowed:g})")
    return problem, scaled, abs(a - e)


def compare_outputs(expected: Any, actual: Any) -> Correctness:
    """Every output leaf compared: tensors by their difference relative to their magnitude
    (:data:`TOLERANCE`), shapes and integer values exactly, Python floats as float32 values
    (:func:`_compare_float`), other Python values by equality."""
    exp, act = _leaves(expected), _leaves(actual)
    if len(exp) != len(act):
        return Correctness(match=False, max_abs_error=None, max_rel_error=None,
                           message=f"the output has {len(act)} leaves, expected {len(exp)}")
    max_abs = max_rel = worst = 0.0
    problems: list[str] = []
    opaque = 0
    for index, (e, a) in enumerate(zip(exp, act)):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            problem, scaled, abs_error, rel_error = _compare_tensor(index, e, a)
            if problem:
                problems.append(problem)
            worst = max(worst, scaled)
            max_abs, max_rel = max(max_abs, abs_error), max(max_rel, rel_error)
        elif type(e) is float and type(a) is float:
            problem, scaled, abs_error = _compare_float(index, e, a)
            if problem:
                problems.append(problem)
            worst, max_abs = max(worst, scaled), max(max_abs, abs_error)
        elif isinstance(e, _PLAIN) and isinstance(a, _PLAIN):
            if e != a:
                problems.append(f"output {index}: {a!r} != {e!r}")
                worst = math.inf
        else:
            opaque += 1  # e.g. a KV-cache object: no value equality to compare with
    note = f"{opaque} non-tensor output(s) not compared" if opaque else None
    return Correctness(match=not problems, max_abs_error=_finite(max_abs),
                       max_rel_error=_finite(max_rel), message="; ".join(problems) or note,
                       scaled_error=_finite(worst))


def _finite(value: float) -> float | None:
    """JSON has no infinity: a difference that cannot be measured (shapes differ) is None."""
    return value if math.isfinite(value) else None


def eager_outputs(loaded: Any) -> Any:
    """A loaded target's eager outputs from :func:`reseed` (detached copies): the reference."""
    return eager_reference(loaded)[0]


def eager_call(loaded: Any) -> Any:
    """One eager call of a loaded target in its grad mode (callers reseed first)."""
    with contextlib.nullcontext() if loaded.training else torch.no_grad():
        return loaded.fn(*loaded.args, **loaded.kwargs)


def eager_reference(loaded: Any) -> tuple[Any, bool]:
    """(the eager outputs from :func:`reseed` and the model's state as built, detached; whether
    the call drew random numbers). A model that keeps state is put back first (``state.py``),
    so every reference is its first call, and what that call changed is recorded."""
    state = getattr(loaded, "state", None)
    if state is not None:
        state.fresh()
    random_draws, out = draws_random_numbers(lambda: eager_call(loaded))
    if state is not None:
        state.after_first_call()
    return detached(out), random_draws


def detached(out: Any) -> Any:
    return torch.utils._pytree.tree_map(
        lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, out)
