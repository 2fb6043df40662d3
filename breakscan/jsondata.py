"""Results as JSON data and back: how a result crosses a process boundary or sits in a cache.

A scanned model runs in the isolated child, and a cache can be restored from another branch:
whatever breakscan reads back was possibly written by someone else. So it is *parsed*, never
unpickled: :func:`dumps` writes plain JSON in which a dataclass is ``{"__dataclass__": name,
"fields": {...}}``, and :func:`loads` builds only the dataclasses named in :data:`ALLOWED`
(breakscan's own result records) from their declared fields. Anything else (an unknown class
name, an unknown or missing field, a structure nested too deep, a file too large, text that is
not JSON) raises :class:`DataError`; no code of the file's choosing runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from . import records as _records, result as _result, verdicts as _verdicts
from .frames import Frame

MAX_BYTES = 512 * 1024 * 1024  # a result is a few MB at most; more is not one of ours
MAX_DEPTH = 64

ALLOWED: dict[str, type] = {
    name: cls for module in (_records, _verdicts, _result) for name, cls in vars(module).items()
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


def _decode(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise DataError("nested too deep")
    if isinstance(value, list):
        return [_decode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__dataclass__", "fields"}:
            return _record(value["__dataclass__"], value["fields"], depth)
        if set(value) == {"__dict__"} and isinstance(value["__dict__"], list):
            pairs = [_decode(p, depth + 1) for p in value["__dict__"]]
            if not all(isinstance(p, list) and len(p) == 2 and _hashable(p[0]) for p in pairs):
                raise DataError("a mapping entry is not a key and a value")
            return {p[0]: p[1] for p in pairs}
        if set(value) == {"__float__"} and value["__float__"] in ("inf", "-inf", "nan"):
            return float(value["__float__"])
        raise DataError("an object that is no record")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise DataError(f"unexpected {type(value).__name__}")


def _hashable(key: Any) -> bool:
    return key is None or isinstance(key, (bool, int, float, str))


def _record(name: Any, fields: Any, depth: int) -> Any:
    cls = ALLOWED.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(fields, dict):
        raise DataError(f"{name!r} is not a result record")
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    if not set(fields) <= set(known):
        raise DataError(f"{name} has no field(s) {sorted(set(fields) - set(known))}")
    values = {k: _decode(v, depth + 1) for k, v in fields.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # a missing field, a value its __post_init__ refuses
        raise DataError(f"{name}: {exc}") from None


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
