"""The state a model keeps between calls, found and put back, so compared runs start alike.

Many real models change between calls: a diffusers scheduler advances ``_step_index`` (PNDM
appends to ``ets``), a cache fills, a counter counts, a table is built on first access. Calling
such a model again is a different call: the eager reference and the compiled call, or the
original and a fix, then compare step 2 with step 1, and a scheduler with 10 steps fails on its
11th timed call. :class:`ModelState` records every attribute and buffer of the model's modules
(and of the plain objects they hold, a scheduler being no module) and can tell what changed and
put it back; :class:`CallState` uses two of them per loaded model:

- every compared run starts from the state the model was built with (:meth:`CallState.fresh`),
  so call *k* is compared with call *k*;
- timed calls are natural, as a user's loop makes them (a counter that recompiles on every call
  still does), unless called again and again the model fails (a scheduler past its last step):
  then each timed call starts from its state after one call (:meth:`CallState.steady`), the
  same "call 2" every time, and the report says so;
- what changed is reported once (:meth:`CallState.report`): on every call, or only on the
  first (a table built, a ``functools.cached_property`` filled, a hook registered).

BatchNorm's running statistics are left out: train mode updates them on every call by design
and its outputs do not read them.
"""

from __future__ import annotations

import collections
import types
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch
from torch import nn

from ..model.verdicts import ModelStateReport

_MISSING = object()
# A module's own bookkeeping that is not state between calls: its weights and submodules (its
# buffers are added one by one), the mode the scan sets. Its hook dicts are state: a model that
# registers a hook on its first call has one more after it.
_MODULE_BOOKKEEPING = frozenset({"_parameters", "_buffers", "_modules", "training"})
# What torch.compile itself sets on the objects it compiles: never the model's state, never put
# back (deleting ``_is_torch_compile`` would change how Dynamo treats the object).
_TORCH_OWN = ("_is_torch_compile", "_torchdynamo", "_dynamo", "_compiled_call_impl")
_RUNNING_STATS = frozenset({"running_mean", "running_var", "num_batches_tracked"})
_PLAIN = (int, float, complex, bool, str, bytes, type(None), torch.dtype, torch.device)
_DEPTH = 3  # plain objects followed this deep below a module (model.scheduler.config)
_NOT_STATE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType, nn.Module, torch.Tensor)


def model_objects(model: Any) -> Iterator[tuple[str, Any]]:
    """(dotted name, object) of every module and every plain object they hold."""
    seen: set[int] = set()
    roots = list(model.named_modules()) if isinstance(model, nn.Module) else [("", model)]
    stack = [(name, obj, 0) for name, obj in reversed(roots)]
    while stack:
        name, obj, depth = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield name, obj
        if depth >= _DEPTH:
            continue
        for attr, value in _attributes(obj):
            if hasattr(value, "__dict__") and not isinstance(value, _NOT_STATE) and \
                    not type(value).__module__.startswith("torch"):
                stack.append((f"{name}.{attr}" if name else attr, value, depth + 1))


def _attributes(obj: Any) -> list[tuple[str, Any]]:
    """The attributes that are state: an instance's own, a module's buffers (its parameters
    and hooks are not state between calls: they are its weights and breakscan's own)."""
    try:
        own = dict(vars(obj))
    except TypeError:
        return []
    own = {k: v for k, v in own.items() if not k.startswith(_TORCH_OWN)}
    if isinstance(obj, nn.Module):
        found = [(k, v) for k, v in own.items() if k not in _MODULE_BOOKKEEPING]
        norm = isinstance(obj, nn.modules.batchnorm._NormBase)
        found += [(k, v) for k, v in obj._buffers.items()
                  if not (norm and k in _RUNNING_STATS)]
        return found
    return list(own.items())


def _saved(value: Any) -> tuple[str, Any, Any]:
    """(how, the object, what to compare it with later)."""
    if isinstance(value, torch.Tensor):
        return "tensor", value, value.detach().clone()
    if isinstance(value, (list, collections.deque)):
        return "list", value, list(value)
    if isinstance(value, dict):
        return "dict", value, dict(value)
    if isinstance(value, set):
        return "set", value, set(value)
    return "value", value, None


def _same(saved: tuple[str, Any, Any], current: Any) -> bool:
    how, obj, copy = saved
    if current is _MISSING:
        return False
    if how == "value":
        if current is obj:
            return True
        if isinstance(obj, _PLAIN) and isinstance(current, _PLAIN) or \
                isinstance(obj, tuple) and isinstance(current, tuple):
            try:
                return bool(type(obj) is type(current) and obj == current)
            except Exception:
                return False
        return False
    if current is not obj:
        return False
    if how == "tensor":
        plain = current.detach()
        return plain.shape == copy.shape and plain.dtype == copy.dtype and \
            bool(torch.equal(plain, copy))
    if how == "dict":
        return len(current) == len(copy) and all(
            k in copy and current[k] is copy[k] for k in current)
    if how == "set":
        return current == copy
    return len(current) == len(copy) and all(a is b for a, b in zip(current, copy))


class ModelState:
    """The state of a model's objects at one moment (see the module docstring)."""

    def __init__(self, model: Any) -> None:
        self._owners: dict[str, tuple[Any, bool]] = {}  # name -> (object, is a module)
        self._saved: dict[str, tuple[str, Any, Any]] = {}  # "owner.attr" -> _saved(value)
        for name, obj in model_objects(model):
            self._owners[name] = (obj, isinstance(obj, nn.Module))
            for attr, value in _attributes(obj):
                self._saved[_path(name, attr)] = _saved(value)

    def _current(self) -> dict[str, Any]:
        now: dict[str, Any] = {}
        for name, (obj, _) in self._owners.items():
            for attr, value in _attributes(obj):
                now[_path(name, attr)] = value
        return now

    def changed(self) -> list[str]:
        """The attributes and buffers that differ from this state now (added ones included)."""
        now = self._current()
        gone = [p for p in self._saved if p not in now]
        return sorted(gone + [p for p, v in now.items()
                              if p not in self._saved or not _same(self._saved[p], v)])

    def restore(self, paths: list[str] | None = None) -> None:
        """Put the named attributes (all that changed when None) back to this state."""
        for path in self.changed() if paths is None else paths:
            name, _, attr = path.rpartition(".")
            owner = self._owners.get(name)
            if owner is not None:
                _put_back(owner[0], attr, self._saved.get(path))


def _path(name: str, attr: str) -> str:
    return f"{name}.{attr}" if name else attr


def _put_back(obj: Any, attr: str, saved: tuple[str, Any, Any] | None) -> None:
    is_buffer = isinstance(obj, nn.Module) and attr in obj._buffers
    current = obj._buffers.get(attr, _MISSING) if is_buffer else vars(obj).get(attr, _MISSING)
    if saved is None:  # added since: removed again
        if is_buffer:
            del obj._buffers[attr]
        elif current is not _MISSING:
            delattr(obj, attr)
        return
    how, value, copy = saved
    if how == "tensor":
        with torch.no_grad():
            if value.shape == copy.shape:
                value.copy_(copy)
            else:
                value.data = copy.clone()
    elif how == "list":
        value.clear()
        value.extend(copy)
    elif how in ("dict", "set"):
        try:
            value.clear()
            value.update(copy)
        except Exception:  # a frozen mapping that was replaced, never changed in place
            pass
    if current is not value:
        if isinstance(obj, nn.Module) and (is_buffer or isinstance(value, torch.Tensor)) and \
                attr in getattr(obj, "_buffers", {}):
            obj._buffers[attr] = value
        else:
            object.__setattr__(obj, attr, value) if isinstance(obj, nn.Module) else \
                setattr(obj, attr, value)


@dataclass
class CallState:
    """One loaded model's state: as built, after one call, and what its calls change."""

    model: Any
    initial: ModelState = field(init=False)
    after_first: ModelState | None = None  # taken after a first call that changed something
    first_call: list[str] = field(default_factory=list)  # changed by a call from the start
    every_call: list[str] | None = None  # changed again by a later call (None: not seen yet)

    def __post_init__(self) -> None:
        self.initial = ModelState(self.model)

    def fresh(self) -> None:
        """Back to the state the model was built with (nothing to do for most models)."""
        self.initial.restore()

    def after_first_call(self) -> None:
        """After a call made from :meth:`fresh`: what it changed, and the state it left."""
        changed = self.initial.changed()
        self.first_call = sorted(set(self.first_call) | set(changed))
        self.after_first = ModelState(self.model) if changed else None

    def after_later_call(self) -> None:
        """After a call made from the state a first call left: what changed again."""
        if self.after_first is not None:
            self.every_call = self.after_first.changed()

    @property
    def keeps_state(self) -> bool:
        """A call from the state as built changed something on the model."""
        return self.after_first is not None

    def steady(self) -> None:
        """Before a timed call of a model that fails when called naturally: back to its state
        after one call (each such call the same second call); nothing otherwise."""
        if self.after_first is None:
            return
        if self.every_call is None:  # not seen yet: whatever differs from after one call
            changed = self.after_first.changed()
            if not changed:  # right after the first call: nothing to put back yet
                return
            self.every_call = changed
        self.after_first.restore(self.every_call)

    def report(self) -> ModelStateReport | None:
        if not self.first_call:
            return None
        every = set(self.every_call or ())
        return ModelStateReport(every_call=sorted(every),
                                first_call_only=[p for p in self.first_call if p not in every],
                                known=self.every_call is not None)


def later_call_hint(state: CallState | None) -> str:
    """Appended to the error of a call after the first: the first call with the same inputs
    succeeded, so the inputs are not the cause; what the model keeps, when that is known."""
    text = "; call 1 with the same inputs succeeded"
    if state is None or not state.first_call:
        return text
    kept = state.every_call or state.first_call
    return text + ": the model keeps state between calls (" + ", ".join(kept[:6]) + \
        (f" and {len(kept) - 6} more" if len(kept) > 6 else "") + ")"


def failed_for_its_state(call_state: CallState | None, exc: BaseException) -> bool:
    """Whether a natural call's failure may come from the state the model keeps, so that calls
    from its state after one call are worth a try: the model keeps state, and the exception is
    not Dynamo refusing a path (a graph break under ``fullgraph=True``, the recompile limit),
    which restoring state would only hide. An index past a scheduler's table may surface while
    Dynamo traces (an ``IndexError`` from fake tensors): that one is retried."""
    if call_state is None or not call_state.keeps_state:
        return False
    exc_module = getattr(torch._dynamo, "exc", None)
    refusals = tuple(getattr(exc_module, name) for name in ("Unsupported",
                                                             "FailOnRecompileLimitHit")
                     if hasattr(exc_module, name))
    return not isinstance(exc, refusals)
