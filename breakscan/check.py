"""Gate one model or a whole repository: ``breakscan check`` reads ``[tool.breakscan]``.

    [tool.breakscan]
    max-breaks = 0                      # defaults for every target
    baseline = "breakscan-baseline.json"

    [[tool.breakscan.targets]]
    target = "models/encoder.py:Encoder"
    input-shape = ["8,16"]
    fail-on = ["item", "data_dependent_branch"]

Each target is scanned and gated on its own; one that fails (or cannot be scanned) does not stop
the others. Keys are the CLI's option names without the dashes in front.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

from .errors import EXIT_GATE_FAILED, EXIT_OK, UsageError
from .gate import GateConfig, baseline_for, evaluate, parse_categories, read_baseline
from .isolate import DEFAULT_TIMEOUT_S, run_isolated
from .result import ModelRun

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SCAN_KEYS = {"input-shape": "input_shapes", "dtype": "dtype", "device": "device",
             "inputs": "inputs", "init-args": "init_args", "method": "method", "train": "train",
             "vary-batch": "vary_batch", "shapes": "shapes", "dynamic-check": "dynamic_check"}
GATE_KEYS = {"max-breaks", "max-graphs", "max-recompiles", "fail-on", "fullgraph", "baseline"}
LIMIT_KEYS = {"timeout", "memory-limit"}  # how long / how much memory one model's scan may take


def gate_config(values: dict[str, Any], *, target: str, where: str) -> GateConfig:
    """Thresholds from CLI-style keys; reads the target's entry from the baseline file."""
    config = GateConfig(max_breaks=values.get("max-breaks"), max_graphs=values.get("max-graphs"),
                        max_recompiles=values.get("max-recompiles"),
                        fail_on=parse_categories(values.get("fail-on")),
                        fullgraph=bool(values.get("fullgraph", False)))
    for key in ("max-breaks", "max-graphs", "max-recompiles"):
        value = values.get(key)
        if value is not None and (not isinstance(value, int) or value < 0):
            raise UsageError(f"{where}: {key} must be a non-negative integer, got {value!r}")
    if values.get("baseline"):
        targets, root = read_baseline(values["baseline"])
        config.baseline = baseline_for(targets, target, values["baseline"])
        config.baseline_root = root
    return config


def run_model(target: str, scan_kwargs: dict[str, Any], gate: GateConfig | None, *,
              timeout: float | None = DEFAULT_TIMEOUT_S,
              memory_limit_mb: int | None = None,
              on_stage: Callable[[str], None] | None = None) -> ModelRun:
    """Scan (in a child process) and gate one target; a failure becomes the run's exit code.

    An unfinished scan keeps its partial result and is not gated.
    """
    run = run_isolated(target, scan_kwargs, timeout=timeout, memory_limit_mb=memory_limit_mb,
                       on_stage=on_stage)
    if run.error is not None or run.result is None:
        return run
    if gate is not None and gate.active:
        run.result.gate = evaluate(run.result, gate)
        if not run.result.gate.passed:
            run.exit_code = EXIT_GATE_FAILED
    return run


def overall_exit_code(runs: list[ModelRun]) -> int:
    """The most severe code: 3 (a model failed) > 2 (usage) > 1 (gate failed) > 0."""
    return max((run.exit_code for run in runs), default=EXIT_OK)


def load_config(path: str | Path) -> dict[str, Any]:
    file = Path(path)
    if not file.exists():
        raise UsageError(f"config file not found: {path} (breakscan check reads "
                         "[tool.breakscan] from pyproject.toml)")
    try:
        doc = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    section = doc.get("tool", {}).get("breakscan")
    if not section:
        raise UsageError(f"{path} has no [tool.breakscan] section; see the README's 'CI' part")
    if not section.get("targets"):
        raise UsageError(f"{path}: [tool.breakscan] lists no [[tool.breakscan.targets]]")
    return section


def _scan_kwargs(entry: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = set(entry) - set(SCAN_KEYS) - GATE_KEYS - LIMIT_KEYS - {"target"}
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                         f"target, {', '.join(sorted(set(SCAN_KEYS) | GATE_KEYS | LIMIT_KEYS))}")
    kwargs = {SCAN_KEYS[k]: v for k, v in entry.items() if k in SCAN_KEYS}
    if isinstance(kwargs.get("input_shapes"), str):
        kwargs["input_shapes"] = [kwargs["input_shapes"]]
    if isinstance(kwargs.get("init_args"), dict):
        kwargs["init_args"] = json.dumps(kwargs["init_args"])
    if isinstance(kwargs.get("vary_batch"), list):
        kwargs["vary_batch"] = ",".join(str(b) for b in kwargs["vary_batch"])
    return kwargs


def limits(values: dict[str, Any], where: str) -> tuple[float | None, int | None]:
    """(timeout seconds, memory limit MB) from 'timeout' / 'memory-limit'; 0 means none."""
    timeout = values.get("timeout", DEFAULT_TIMEOUT_S)
    memory = values.get("memory-limit")
    for key, value in (("timeout", timeout), ("memory-limit", memory)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or value < 0):
            raise UsageError(f"{where}: {key} must be a non-negative number, got {value!r}")
    return (timeout or None), (int(memory) if memory else None)


def run_config(section: dict[str, Any], config_path: str | Path,
               overrides: dict[str, Any] | None = None,
               on_stage: Callable[[str], None] | None = None) -> list[ModelRun]:
    """Every target of a [tool.breakscan] section, each scanned and gated on its own.

    ``overrides`` (e.g. the CLI's --timeout) replace the section's defaults, not a target's own
    values. ``on_stage("check 3/7: model.py:Net · explain")`` follows the scans live.
    """
    defaults = {k: v for k, v in section.items() if k != "targets"}
    defaults.update({k: v for k, v in (overrides or {}).items() if v is not None})
    unknown = set(defaults) - GATE_KEYS - LIMIT_KEYS
    if unknown:
        raise UsageError(f"{config_path} [tool.breakscan]: unknown key(s) "
                         f"{', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(GATE_KEYS | LIMIT_KEYS))}")
    runs = []
    for number, entry in enumerate(section["targets"], 1):
        where = f"{config_path} target #{number}"
        target = entry.get("target") if isinstance(entry, dict) else None
        if not target:
            runs.append(ModelRun(target=f"target #{number}", result=None,
                                 error=f"{where} has no 'target'", exit_code=2))
            continue
        try:
            values = {**defaults, **entry}
            gate = gate_config(values, target=target, where=where)
            kwargs = _scan_kwargs(entry, where)
            timeout, memory = limits(values, where)
        except UsageError as exc:
            runs.append(ModelRun(target=target, result=None, error=str(exc), exit_code=2))
            continue
        label = f"check {number}/{len(section['targets'])}: {target}"
        stage = (lambda name, label=label: on_stage(f"{label} · {name}")) if on_stage else None
        runs.append(run_model(target, kwargs, gate, timeout=timeout, memory_limit_mb=memory,
                              on_stage=stage))
        if runs[-1].interrupted:
            break  # Ctrl-C / SIGTERM: report what finished, scan no further target
    return runs
