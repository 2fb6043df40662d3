"""Options read from files: a ``[tool.breakscan]`` target entry, and the gate's baseline file.

A ``[[tool.breakscan.targets]]`` entry (merged over the section's defaults by
:mod:`breakscan.check`) maps its keys, the CLI's option names without the dashes, onto the
fields of :mod:`breakscan.options`' objects (:func:`from_config`); ``--baseline FILE`` adds the
target's entry of that file to its :class:`~breakscan.options.GateOptions`
(:func:`gate_options`). The file is data from a pull request or a cache: checked, never trusted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import UsageError
from .options import GateOptions, Limits, ScanOptions

# [tool.breakscan] keys (the CLI's option names without the dashes) and the field each sets.
SCAN_KEYS = {"input-shape": "input_shapes", "dtype": "dtype", "device": "device",
             "inputs": "inputs", "init-args": "init_args", "method": "method", "train": "train",
             "vary-batch": "vary_batch", "shapes": "shapes", "dynamic-check": "dynamic_check",
             "dynamic": "dynamic", "compile-option": "compile_options", "kernels": "kernels"}
GATE_KEYS = {"max-breaks": "max_breaks", "max-graphs": "max_graphs",
             "max-recompiles": "max_recompiles", "max-graph-calls": "max_graph_calls",
             "max-kernels": "max_kernels",
             "fail-on": "fail_on", "fullgraph": "fullgraph"}
LIMIT_KEYS = {"timeout": "timeout", "memory-limit": "memory_limit_mb"}
OTHER_KEYS = {"baseline", "target"}


def from_config(values: dict[str, Any], *, target: str,
                where: str) -> tuple[ScanOptions, GateOptions, Limits]:
    """One ``[[tool.breakscan.targets]]`` entry (merged over the section's defaults)."""
    allowed = set(SCAN_KEYS) | set(GATE_KEYS) | set(LIMIT_KEYS) | OTHER_KEYS
    unknown = set(values) - allowed
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(allowed))}")
    try:
        scan = ScanOptions(**{SCAN_KEYS[k]: v for k, v in values.items() if k in SCAN_KEYS})
        gate = gate_options(**{GATE_KEYS[k]: v for k, v in values.items() if k in GATE_KEYS},
                            baseline=values.get("baseline"), target=target)
        limits = Limits(**{LIMIT_KEYS[k]: v for k, v in values.items() if k in LIMIT_KEYS})
        if gate.needs_kernels and not scan.kernels:
            scan = scan.but(kernels=True)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:  # a value of the wrong kind
        raise UsageError(f"{where}: a value of the wrong type ({exc})") from None
    return scan, gate, limits


def read_baseline(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """(targets mapping, folder its paths are relative to)."""
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"baseline file not found: {path} (create it with --write-baseline)") \
            from None
    except (OSError, json.JSONDecodeError) as exc:
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
        for k in ("graph_count", "recompile_count"))
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
