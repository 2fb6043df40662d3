"""Results as JSON data and back: how a result crosses a process boundary or sits in a cache.

A scanned model runs in the isolated child, and a cache can be restored from another branch:
whatever breakscan reads back was possibly written by someone else. So it is *parsed*, never
unpickled: :func:`dumps` writes plain JSON in which a dataclass is ``{"__dataclass__": name,
"fields": {...}}``, and :func:`loads` builds only the dataclasses named in :data:`ALLOWED`
(breakscan's own result records) from their declared fields. Anything else (an unknown class
name, an unknown or missing field, a structure nested too deep, a file too large, text that is
not JSON, a field whose value is not of its declared type) raises :class:`DataError`; no code
of the file's choosing runs.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from typing import Any, Callable

from ..frames import Frame
from . import compile_time as _compile_time
from . import records as _records
from . import result as _result
from . import verdicts as _verdicts

MAX_BYTES = 512 * 1024 * 1024  # a result is a few MB at most; more is not one of ours
MAX_DEPTH = 64

ALLOWED: dict[str, type] = {
    name: cls for module in (_records, _verdicts, _result, _compile_time) for name, cls in vars(module).items()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
    and not name.startswith("Raw")}
ALLOWED["Frame"] = Frame


class DataError(ValueError):
    """The data is not a breakscan result this version wrote."""


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if ALLOWED.get(name) is not type(value):
            raise DataError(f"{name} is not a result record")
        return {"__dataclass__": name,
                "fields": {f.name: _encode(getattr(value, f.name))
                           for f in dataclasses.fields(value) if f.init}}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    return str(value)  # e.g. a torch.dtype in compile settings: kept as its text


def dumps(value: Any) -> str:
    """``value`` (result records, lists, dicts, plain values) as JSON text."""
    return json.dumps(_encode(value), separators=(",", ":"))


_PLAIN = (str, int, float, bool, type(None))


def _decode(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _PLAIN:  # most values: decided by one look-up
        return value
    if depth > MAX_DEPTH:
        raise DataError("nested too deep")
    if kind is list:
        return [v if type(v) in _PLAIN else _decode(v, depth + 1) for v in value]
    if kind is dict:
        if len(value) == 2 and "__dataclass__" in value and "fields" in value:
            return _record(value["__dataclass__"], value["fields"], depth)
        if len(value) == 1 and type(value.get("__dict__")) is list:
            pairs = [_decode(p, depth + 1) for p in value["__dict__"]]
            if not all(isinstance(p, list) and len(p) == 2 and _hashable(p[0]) for p in pairs):
                raise DataError("a mapping entry is not a key and a value")
            return {p[0]: p[1] for p in pairs}
        if len(value) == 1 and value.get("__float__") in ("inf", "-inf", "nan"):
            return float(value["__float__"])
        raise DataError("an object that is no record")
    raise DataError(f"unexpected {kind.__name__}")


def _hashable(key: Any) -> bool:
    return key is None or isinstance(key, (bool, int, float, str))


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> tuple[frozenset[str], dict[str, Callable[[Any], bool]]]:
    """A record's init fields and each one's type test (built once per class)."""
    hints = _hints(cls)
    names = frozenset(f.name for f in dataclasses.fields(cls) if f.init)
    return names, {name: _checker(hints.get(name, Any)) for name in names}


def _record(name: Any, fields: Any, depth: int) -> Any:
    cls = ALLOWED.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(fields, dict):
        raise DataError(f"{name!r} is not a result record")
    known, checks = _fields(cls)
    if not known.issuperset(fields):
        raise DataError(f"{name} has no field(s) {sorted(set(fields) - known)}")
    values = {k: v if type(v) in _PLAIN else _decode(v, depth + 1) for k, v in fields.items()}
    for key, value in values.items():
        if not checks[key](value):
            raise DataError(f"{name}.{key} is not {_shown(_hints(cls).get(key))}: "
                            f"{type(value).__name__}")
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # a missing field, a value its __post_init__ refuses
        raise DataError(f"{name}: {exc}") from None


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """The declared type of each field (the records' annotations, resolved once per class)."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an annotation this Python cannot evaluate: its fields go unchecked
        return {}


def _shown(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _conforms(value: Any, hint: Any) -> bool:
    """Is ``value`` (already decoded) of the declared type ``hint``? Exact for what the records
    use (None, bool, int, float, str, lists, tuples, dicts, unions, records); a JSON list stands
    for a tuple; an int for a float; a bool is never a number."""
    return _checker(hint)(value)


def _any(value: Any) -> bool:
    return True


@functools.lru_cache(maxsize=None)
def _checker(hint: Any) -> Callable[[Any], bool]:
    """The test of :func:`_conforms` for one declared type, built once (a result has ~10^5
    values: interpreting ``typing`` for each would dominate reading it)."""
    if hint is Any or hint is object:
        return _any
    if hint is None or hint is type(None):
        return lambda v: v is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = tuple(_checker(a) for a in args)
        return lambda v: any(check(v) for check in options)
    if origin is typing.Literal:
        return lambda v: v in args
    if hint is bool:
        return lambda v: isinstance(v, bool)
    if hint is int:
        return lambda v: isinstance(v, int) and not isinstance(v, bool)
    if hint is float:
        return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if hint is str:
        return lambda v: isinstance(v, str)
    if origin is tuple and args and args[-1] is not Ellipsis:
        each = tuple(_checker(a) for a in args)
        return lambda v: isinstance(v, (list, tuple)) and len(v) == len(each) and all(
            check(x) for check, x in zip(each, v))
    if origin in (list, tuple) or hint in (list, tuple):
        item = _checker(args[0]) if args else _any
        return lambda v: isinstance(v, (list, tuple)) and all(map(item, v))
    if origin is dict or hint is dict:
        key, val = (_checker(args[0]), _checker(args[1])) if args else (_any, _any)
        return lambda v: isinstance(v, dict) and all(key(k) and val(x) for k, x in v.items())
    if isinstance(hint, type):
        return lambda v: isinstance(v, hint)
    return _any  # a construct the records do not use: not checked


def loads(text: str | bytes) -> Any:
    """Parse what :func:`dumps` wrote; :class:`DataError` for anything else."""
    if len(text) > MAX_BYTES:
        raise DataError("larger than any result")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, 5,000 digits
        raise DataError(f"not JSON: {exc}") from None
    try:
        return _decode(raw, 0)
    except RecursionError:
        raise DataError("nested too deep") from None
