"""The options of a scan, as one frozen object per concern, built here from every source.

:class:`ScanOptions` says how to load and call the target and what to add to the scan
(recompiles, timings); :class:`GateOptions` the thresholds of ``--max-breaks`` & co;
:class:`Limits` how long and how much memory one isolated scan may take. The CLI maps its flags
straight onto them, ``[tool.breakscan]`` entries go through :func:`from_config`, the pytest
marker through :meth:`GateOptions.for_test`. The isolated child gets ``ScanOptions.to_dict()``
and rebuilds the same object; each stage reads the fields it owns (see docs/architecture.md).
Imports no torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .errors import UsageError

DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class TimingOptions:
    """How to time compiled execution (--time, --backend, --mode, --threads): read by measure."""

    backend: str = "inductor"
    mode: str | None = None
    threads: int = 1
    max_run_time: float = 2.0  # seconds per variant for the adaptive run count
    fullgraph: bool = True  # also time fullgraph=True (fix verification skips it)
    dynamic: bool | None = None  # torch.compile(dynamic=...) (the dynamic=True fix)


@dataclass(frozen=True)
class ScanOptions:
    """How to load and call the target (read by load), and what the scan adds: recompiles over
    ``vary_batch`` / ``shapes`` (read by recompiles) and ``timing`` (read by measure)."""

    input_shapes: tuple[str, ...] = ()  # one "8,16" per positional input
    dtype: str = "float32"
    device: str = "cpu"
    inputs: str | None = None  # FILE.py:make_inputs
    init_args: str | None = None  # JSON keyword arguments for the constructor
    method: str | None = None
    train: bool = False
    verbose: bool = False
    vary_batch: str | None = None  # "2,4,16"
    shapes: tuple[str, ...] = ()  # one input set per string, inputs separated by spaces
    dynamic_check: bool = True  # replay recompiling sets with dynamic=True
    timing: TimingOptions | None = None

    def __post_init__(self) -> None:
        # Accept the natural Python forms (a list, one string, a list of batch sizes) and keep
        # one canonical form, so equal options compare and serialise equal.
        for name in ("input_shapes", "shapes"):
            value = getattr(self, name)
            if value is None or isinstance(value, str):
                value = () if value is None else (value,)
            object.__setattr__(self, name, tuple(value))
        if isinstance(self.vary_batch, (list, tuple)):
            object.__setattr__(self, "vary_batch", ",".join(str(b) for b in self.vary_batch))
        if isinstance(self.init_args, dict):
            object.__setattr__(self, "init_args", json.dumps(self.init_args))
        if isinstance(self.timing, dict):
            object.__setattr__(self, "timing", TimingOptions(**self.timing))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for the isolated child (:meth:`from_dict` rebuilds the same object)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "ScanOptions":
        return cls(**values)

    def but(self, **changes: Any) -> "ScanOptions":
        """A copy with some fields changed (fix verification, compare's output check)."""
        return replace(self, **changes)

    @property
    def load_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`breakscan.load.load_target`."""
        return dict(input_shapes=list(self.input_shapes) or None, dtype=self.dtype,
                    device=self.device, inputs=self.inputs, init_args=self.init_args,
                    method=self.method, train=self.train)


@dataclass(frozen=True)
class GateOptions:
    """The gate's thresholds; None (or empty) means that check is off. Read by gate."""

    max_breaks: int | None = None
    max_graphs: int | None = None
    max_recompiles: int | None = None
    fail_on: tuple[str, ...] = ()
    fullgraph: bool = False
    baseline: dict[str, Any] | None = field(default=None, compare=False)  # this target's entry
    baseline_root: str | None = None  # the baseline file's folder: its paths are relative to it

    def __post_init__(self) -> None:
        for name in ("max_breaks", "max_graphs", "max_recompiles"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise UsageError(f"{name.replace('_', '-')} must be a non-negative integer, "
                                 f"got {value!r}")
        object.__setattr__(self, "fail_on", _categories(self.fail_on))

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.max_breaks, self.max_graphs, self.max_recompiles,
                                           self.baseline)) or bool(self.fail_on) or self.fullgraph

    @classmethod
    def for_test(cls, **limits: Any) -> "GateOptions":
        """The pytest fixture's and ``assert_max_graph_breaks``' rule: only the limits given
        apply, and with none at all, ``max_breaks=0``."""
        gate = cls(**{k: v for k, v in limits.items() if v is not None})
        return gate if gate.active else replace(gate, max_breaks=0)


def _categories(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``item,data_dependent_branch`` (or a list) as known break categories."""
    if not value:
        return ()
    from .categories import CATEGORIES

    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(c.strip() for c in items if c.strip())
    unknown = [c for c in names if c not in CATEGORIES]
    if unknown:
        raise UsageError(f"unknown --fail-on categor{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(unknown)}; choose from {', '.join(CATEGORIES)}")
    return names


@dataclass(frozen=True)
class Limits:
    """How long (seconds, None: no limit) and how much memory (MB) one isolated scan may take."""

    timeout: float | None = DEFAULT_TIMEOUT_S
    memory_limit_mb: int | None = None

    def __post_init__(self) -> None:
        for key, value in (("timeout", self.timeout), ("memory-limit", self.memory_limit_mb)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, float)) or value < 0):
                raise UsageError(f"{key} must be a non-negative number, got {value!r}")
        object.__setattr__(self, "timeout", self.timeout or None)  # 0 means none
        object.__setattr__(self, "memory_limit_mb",
                           int(self.memory_limit_mb) if self.memory_limit_mb else None)


# [tool.breakscan] keys (the CLI's option names without the dashes) and the field each sets.
SCAN_KEYS = {"input-shape": "input_shapes", "dtype": "dtype", "device": "device",
             "inputs": "inputs", "init-args": "init_args", "method": "method", "train": "train",
             "vary-batch": "vary_batch", "shapes": "shapes", "dynamic-check": "dynamic_check"}
GATE_KEYS = {"max-breaks": "max_breaks", "max-graphs": "max_graphs",
             "max-recompiles": "max_recompiles", "fail-on": "fail_on", "fullgraph": "fullgraph"}
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
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    except TypeError as exc:  # a value of the wrong kind for a field
        raise UsageError(f"{where}: {exc}") from None
    return scan, gate, limits


def gate_options(*, baseline: str | None = None, target: str, **thresholds: Any) -> GateOptions:
    """The gate for ``target``: thresholds plus its entry read from the baseline file."""
    if not baseline:
        return GateOptions(**thresholds)
    from .gate import baseline_for, read_baseline

    targets, root = read_baseline(baseline)
    return GateOptions(**thresholds, baseline=baseline_for(targets, target, str(baseline)),
                       baseline_root=root)


__all__ = ["ScanOptions", "TimingOptions", "GateOptions", "Limits", "from_config",
           "gate_options", "DEFAULT_TIMEOUT_S"]
