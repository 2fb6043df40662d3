"""Options read from files: a ``[tool.breakscan]`` target entry, and the gate's baseline file.

A ``[[tool.breakscan.targets]]`` entry (merged over the section's defaults by
:mod:`breakscan.runs.check`) maps its keys, the CLI's option names without the dashes, onto the
fields of :mod:`breakscan.options`' objects (:func:`from_config`); ``--baseline FILE`` adds the
target's entry of that file to its :class:`~breakscan.options.GateOptions`
(:func:`gate_options`). The file is data from a pull request or a cache: checked, never trusted.
Every key's TOML type is checked first (:data:`KEY_TYPES`), so ``kernels = "false"`` is one line
naming the key, never read as true.
"""

from __future__ import annotations

import json
import os
import reprlib
import sys
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .errors import UsageError
from .options import GateOptions, Limits, ScanOptions

# [tool.breakscan] keys (the CLI's option names without the dashes) and the field each sets.
SCAN_KEYS = {"input-shape": "input_shapes", "dtype": "dtype", "device": "device",
             "inputs": "inputs", "init-args": "init_args", "method": "method", "train": "train",
             "vary-batch": "vary_batch", "shapes": "shapes", "dynamic-check": "dynamic_check",
             "dynamic": "dynamic", "compile-option": "compile_options", "kernels": "kernels",
             "nested-graph-breaks": "nested_graph_breaks", "compile-time": "compile_time"}
GATE_KEYS = {"max-breaks": "max_breaks", "max-graphs": "max_graphs",
             "max-recompiles": "max_recompiles", "max-graph-calls": "max_graph_calls",
             "max-kernels": "max_kernels", "max-compile-time": "max_compile_time",
             "max-compile-instructions": "max_compile_instructions",
             "fail-on": "fail_on", "fullgraph": "fullgraph"}
LIMIT_KEYS = {"timeout": "timeout", "memory-limit": "memory_limit_mb"}
OTHER_KEYS = {"baseline", "target"}
MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a pyproject.toml, or a baseline, is far smaller


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # TOML's true is no number


# The TOML types a value may have, each with the words an error names it by.
FORMS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    "boolean": ("a boolean (true or false)", lambda v: isinstance(v, bool)),
    "integer": ("an integer", _integer),
    "number": ("a number", lambda v: _integer(v) or isinstance(v, float)),
    "strings": ("a list of strings", lambda v: isinstance(v, list)
                and all(isinstance(i, str) for i in v)),
    "integers": ("a list of integers", lambda v: isinstance(v, list) and all(map(_integer, v))),
    "table": ("a table", lambda v: isinstance(v, dict)),
}

# Every key's accepted forms. Written out rather than read from the option dataclasses: a file
# gives the natural TOML forms (a list for a tuple, a table for --init-args' JSON), and the
# dataclasses also take what the CLI's parsers give them.
KEY_TYPES: dict[str, tuple[str, ...]] = {
    "input-shape": ("string", "strings"), "dtype": ("string",), "device": ("string",),
    "inputs": ("string",), "init-args": ("string", "table"), "method": ("string",),
    "train": ("boolean",), "vary-batch": ("string", "integers"), "shapes": ("string", "strings"),
    "dynamic-check": ("boolean",), "dynamic": ("boolean",), "compile-option": ("strings", "table"),
    "kernels": ("boolean",), "nested-graph-breaks": ("boolean",), "max-breaks": ("integer",), "max-graphs": ("integer",),
    "max-recompiles": ("integer",), "max-graph-calls": ("integer",), "max-kernels": ("integer",),
    "compile-time": ("boolean",), "max-compile-time": ("number",),
    "max-compile-instructions": ("integer",),
    "fail-on": ("string", "strings"), "fullgraph": ("boolean",), "timeout": ("number",),
    "memory-limit": ("integer",), "baseline": ("string",), "target": ("string",),
}


def check_types(values: dict[str, Any], where: str) -> None:
    """Each known key's value has a type :data:`KEY_TYPES` accepts, or one UsageError line
    naming the key and the type it wants."""
    for key, value in values.items():
        forms = KEY_TYPES.get(key, ())
        if forms and not any(FORMS[form][1](value) for form in forms):
            wanted = " or ".join(FORMS[form][0] for form in forms)
            raise UsageError(f"{where}: a value of the wrong type: {key} takes {wanted}, got "
                             f"{_shown(value)}")


def _shown(value: Any) -> str:
    """A value as the file wrote it, cut short (a table may be nested hundreds deep)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return json.dumps(value[:60] + ("..." if len(value) > 60 else ""))
    kind = {list: "an array ", dict: "a table "}.get(type(value), "")
    return kind + reprlib.repr(value)


def load_config(path: str | Path) -> dict[str, Any]:
    """The ``[tool.breakscan]`` section of a TOML file, checked to hold target tables; a file
    that is missing, not TOML, nested deeper than the reader recurses, not a regular file (a
    FIFO, ``/dev/zero``) or over :data:`MAX_CONFIG_BYTES` is a UsageError."""
    from .files import read_regular

    try:
        doc = tomllib.loads(read_regular(path, "config", MAX_CONFIG_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"config file not found: {path} (breakscan check reads "
                         "[tool.breakscan] from pyproject.toml)") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8: a binary or corrupted file
        raise UsageError(f"{path} is not valid TOML: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    except UsageError:
        if os.path.isdir(path):
            raise UsageError(f"{path} is a folder, not a config file") from None
        raise
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise UsageError(f"{path}: arrays or inline tables nested too deep to read") from None
    tool = doc.get("tool", {})
    section = tool.get("breakscan") if isinstance(tool, dict) else None
    if not section:
        raise UsageError(f"{path} has no [tool.breakscan] section; see breakscan's "
                         "docs/ci.md")
    if not isinstance(section, dict):
        raise UsageError(f"{path}: tool.breakscan must be a table ([tool.breakscan]), not "
                         f"{type(section).__name__}")
    targets = section.get("targets")
    if not targets:
        raise UsageError(f"{path}: [tool.breakscan] lists no [[tool.breakscan.targets]]")
    if not isinstance(targets, list) or not all(isinstance(t, dict) for t in targets):
        raise UsageError(f"{path}: tool.breakscan.targets must be tables "
                         "([[tool.breakscan.targets]] entries)")
    return section


def from_config(values: dict[str, Any], *, target: str,
                where: str) -> tuple[ScanOptions, GateOptions, Limits]:
    """One ``[[tool.breakscan.targets]]`` entry (merged over the section's defaults)."""
    allowed = set(SCAN_KEYS) | set(GATE_KEYS) | set(LIMIT_KEYS) | OTHER_KEYS
    unknown = set(values) - allowed
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(allowed))}")
    check_types(values, where)
    try:
        scan = ScanOptions(**{SCAN_KEYS[k]: v for k, v in values.items() if k in SCAN_KEYS})
        gate = gate_options(**{GATE_KEYS[k]: v for k, v in values.items() if k in GATE_KEYS},
                            baseline=values.get("baseline"), target=target)
        limits = Limits(**{LIMIT_KEYS[k]: v for k, v in values.items() if k in LIMIT_KEYS})
        if gate.needs_kernels and not scan.kernels:
            scan = scan.but(kernels=True)
        if gate.needs_compile_time and not scan.compile_time:
            scan = scan.but(compile_time=True)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:  # a value of the wrong kind
        raise UsageError(f"{where}: a value of the wrong type ({exc})") from None
    return scan, gate, limits


def read_baseline(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """(targets mapping, folder its paths are relative to); a regular file only."""
    from .files import read_regular

    try:
        doc = json.loads(read_regular(path, "baseline", MAX_CONFIG_BYTES))
    except FileNotFoundError:
        raise UsageError(f"baseline file not found: {path} (create it with --write-baseline)") \
            from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise UsageError(f"cannot read baseline {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("targets"), dict):
        raise UsageError(f"{path} is not a breakscan baseline (no 'targets' table)")
    return doc["targets"], str(Path(path).resolve().parent)


def baseline_for(targets: dict[str, Any], target: str, path: str) -> dict[str, Any]:
    """``target``'s entry, checked to be what ``--write-baseline`` writes (the file is data
    from a pull request or a cache: never trusted)."""
    if target not in targets:
        raise UsageError(f"baseline {path} has no entry for {target}; known: "
                         f"{', '.join(map(str, targets)) or 'none'} (rewrite it with "
                         "--write-baseline)")
    entry = targets[target]
    breaks = entry.get("breaks", []) if isinstance(entry, dict) else None
    well_formed = isinstance(breaks, list) and all(
        isinstance(b, dict) and all(isinstance(b.get(k), str) for k in ("category", "file", "code"))
        for b in breaks) and all(
        isinstance(entry.get(k), int) or entry.get(k) is None
        for k in ("graph_count", "recompile_count")) and \
        isinstance(entry.get("torch_version", ""), str) and \
        isinstance(entry.get("dynamo_settings", {}), dict) and \
        all(entry.get(k) in (None, True, False) for k in ("dynamic", "nested_graph_breaks"))
    if not well_formed:
        raise UsageError(f"baseline {path}: the entry for {target} is not what "
                         "--write-baseline writes (rewrite it with --write-baseline)")
    return entry


def gate_options(*, baseline: str | None = None, target: str, **thresholds: Any) -> GateOptions:
    """The gate for ``target``: thresholds plus its entry read from the baseline file."""
    if not baseline:
        return GateOptions(**thresholds)
    targets, root = read_baseline(baseline)
    return GateOptions(**thresholds, baseline=baseline_for(targets, target, str(baseline)),
                       baseline_root=root)
