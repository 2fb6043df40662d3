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

import sys
from pathlib import Path
from typing import Any, Callable

from .errors import UsageError
from .options import GATE_KEYS, LIMIT_KEYS, from_config
from .result import ModelRun
from .runner import run_model

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# Keys the section itself may set as defaults for every target (scan keys are per target).
DEFAULT_KEYS = set(GATE_KEYS) | set(LIMIT_KEYS) | {"baseline"}


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


def run_config(section: dict[str, Any], config_path: str | Path,
               overrides: dict[str, Any] | None = None,
               on_stage: Callable[[str], None] | None = None) -> list[ModelRun]:
    """Every target of a [tool.breakscan] section, each scanned and gated on its own.

    ``overrides`` (e.g. the CLI's --timeout) replace the section's defaults, not a target's own
    values. ``on_stage("check 3/7: model.py:Net · explain")`` follows the scans live.
    """
    defaults = {k: v for k, v in section.items() if k != "targets"}
    defaults.update({k: v for k, v in (overrides or {}).items() if v is not None})
    unknown = set(defaults) - DEFAULT_KEYS
    if unknown:
        raise UsageError(f"{config_path} [tool.breakscan]: unknown key(s) "
                         f"{', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(DEFAULT_KEYS))}")
    runs = []
    for number, entry in enumerate(section["targets"], 1):
        where = f"{config_path} target #{number}"
        target = entry.get("target") if isinstance(entry, dict) else None
        if not target:
            runs.append(ModelRun(target=f"target #{number}", result=None,
                                 error=f"{where} has no 'target'", exit_code=2))
            continue
        try:
            options, gate, limits = from_config({**defaults, **entry}, target=target,
                                                where=where)
            options.check(target)
        except UsageError as exc:
            runs.append(ModelRun(target=target, result=None, error=str(exc), exit_code=2))
            continue
        label = f"check {number}/{len(section['targets'])}: {target}"
        stage = (lambda name, label=label: on_stage(f"{label} · {name}")) if on_stage else None
        runs.append(run_model(target, options, gate, limits, on_stage=stage))
        if runs[-1].interrupted:
            break  # Ctrl-C / SIGTERM: report what finished, scan no further target
    return runs
