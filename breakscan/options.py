"""The options of a scan, as one frozen object per concern, each checking its own values.

:class:`ScanOptions` says how to load and call the target and what to add to the scan
(recompiles, timings); :class:`GateOptions` the thresholds of ``--max-breaks`` & co;
:class:`Limits` how long and how much memory one isolated scan may take;
:class:`ProgramOptions` what ``breakscan run`` runs. The CLI maps its flags straight onto them,
``[tool.breakscan]`` entries and the baseline file go through :mod:`breakscan.config`, the pytest
marker through :meth:`GateOptions.for_test`. The isolated child gets ``ScanOptions.to_dict()``
and rebuilds the same object; each stage reads the fields it owns (see docs/architecture.md).
:meth:`ScanOptions.check` reads what needs no model (:mod:`breakscan.target`), so a typo is
answered before any scan process starts. Imports no torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import UsageError
from .target import (check_device_name, check_dtype_name, check_fits_memory, check_source_file,
                     is_module_name, parse_init_args, parse_input_sets, parse_inputs, parse_target)

DEFAULT_TIMEOUT_S = 600.0
MAX_MEMORY_LIMIT_MB = (2**63 - 1) >> 20  # the limit in bytes must fit setrlimit's C long


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
    # The user's torch.compile settings: dynamic= (capture, run-time counts, recompile check and
    # timings) and options= (the backend's, for the timings).
    dynamic: bool | None = None
    compile_options: tuple[tuple[str, Any], ...] = ()
    kernels: bool = False  # --kernels: each graph compiled by Inductor, its kernels reported
    # --compile-time: the model compiled cold and warm, each frame's phases (read by measure)
    compile_time: bool = False
    # torch._dynamo.config.nested_graph_breaks for every compile of the scan (None: torch's own)
    nested_graph_breaks: bool | None = None

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
        object.__setattr__(self, "dynamic", parse_dynamic(self.dynamic))
        object.__setattr__(self, "nested_graph_breaks",
                           parse_dynamic(self.nested_graph_breaks, "--nested-graph-breaks"))
        object.__setattr__(self, "compile_options", parse_compile_options(self.compile_options))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for the isolated child (:meth:`from_dict` rebuilds the same object)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "ScanOptions":
        return cls(**values)

    def but(self, **changes: Any) -> "ScanOptions":
        """A copy with some fields changed (fix verification, compare's output check)."""
        return replace(self, **changes)

    def check(self, target: str, gate: "GateOptions | None" = None) -> None:
        """Check what needs no model before a scan process starts: a typo in the target, its
        file, a shape, ``--init-args``, ``--vary-batch``, ``--dtype`` or ``--device``, or a
        ``--max-recompiles`` with no input sets to recompile over, fails in milliseconds with the
        same one-line UsageError the scan would give (the rest is checked when the model
        loads)."""
        spec = parse_target(target)
        if spec.is_file:
            check_source_file(spec.source)
        shapes = parse_inputs(self.input_shapes, self.inputs)
        parse_init_args(self.init_args)
        batches, sets = parse_input_sets(self.vary_batch, self.shapes)
        if isinstance(self.dtype, str):
            check_fits_memory(shapes, self.dtype)
            for shape_set in sets or []:
                check_fits_memory(shape_set, self.dtype, "--shapes")
            for batch in batches or []:
                check_fits_memory([[batch] + s[1:] for s in shapes if s], self.dtype,
                                  "--vary-batch")
        if self.compile_options and self.timing is not None and self.timing.mode:
            raise UsageError("torch.compile takes --mode or --compile-option, not both")
        # A name that is not text (a number in [tool.breakscan]) is left to the child, as before.
        if isinstance(self.dtype, str):
            check_dtype_name(self.dtype)
        if isinstance(self.device, str):
            check_device_name(self.device)
        if gate is not None and gate.max_recompiles is not None and not (self.vary_batch
                                                                         or self.shapes):
            raise UsageError(NO_INPUT_SETS)

    @property
    def compile_settings(self) -> dict[str, Any]:
        """The torch.compile settings this scan ran with, as the report states them."""
        timing = self.timing
        return {"backend": timing.backend if timing else None,
                "mode": timing.mode if timing else None, "dynamic": self.dynamic,
                "options": dict(self.compile_options),
                "nested_graph_breaks": self.nested_graph_breaks}

    @property
    def load_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`breakscan.pipeline.load.load_target`."""
        return dict(input_shapes=list(self.input_shapes) or None, dtype=self.dtype,
                    device=self.device, inputs=self.inputs, init_args=self.init_args,
                    method=self.method, train=self.train)


def parse_dynamic(value: Any, flag: str = "--dynamic") -> bool | None:
    """``--dynamic true|false`` (or a bool, or None: torch's own default); also
    ``--nested-graph-breaks``."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise UsageError(f"{flag} takes true or false, got {value!r}")


def parse_compile_options(value: Any) -> tuple[tuple[str, Any], ...]:
    """``--compile-option KEY=VALUE`` (repeatable), a ``{key: value}`` table or pairs, as
    sorted pairs; a value is read as JSON (``true``, ``3``) or Python's ``True``, else a string."""
    if not value:
        return ()
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = []
        for item in [value] if isinstance(value, str) else value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                items.append((str(item[0]), item[1]))
                continue
            key, sep, raw = str(item).partition("=")
            if not sep or not key.strip():
                raise UsageError(f"--compile-option takes KEY=VALUE, got {item!r}")
            raw = raw.strip()
            try:
                parsed: Any = json.loads({"True": "true", "False": "false",
                                          "None": "null"}.get(raw, raw))
            except ValueError:
                parsed = raw
            items.append((key.strip(), parsed))
    return tuple(sorted(items))


NO_INPUT_SETS = ("--max-recompiles needs input sets to recompile over: add --vary-batch or "
                 "--shapes")


@dataclass(frozen=True)
class GateOptions:
    """The gate's thresholds; None (or empty) means that check is off. Read by gate."""

    max_breaks: int | None = None
    max_graphs: int | None = None
    max_recompiles: int | None = None
    max_graph_calls: int | None = None  # compiled-graph calls per model call, at run time
    max_kernels: int | None = None  # kernels launched per model call (needs --kernels)
    # The cold compile (needs --compile-time): its frames' seconds; the instructions it ran
    # (torch's compile-time counter: a count the machine's load does not move).
    max_compile_time: float | None = None
    max_compile_instructions: int | None = None
    fail_on: tuple[str, ...] = ()
    fullgraph: bool = False
    baseline: dict[str, Any] | None = field(default=None, compare=False)  # this target's entry
    baseline_root: str | None = None  # the baseline file's folder: its paths are relative to it

    def __post_init__(self) -> None:
        seconds = self.max_compile_time
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(
                seconds, (int, float)) or not 0 <= seconds < float("inf")):
            raise UsageError(f"max-compile-time must be a non-negative number of seconds, got "
                             f"{seconds!r}")
        for name in ("max_breaks", "max_graphs", "max_recompiles", "max_graph_calls",
                     "max_kernels", "max_compile_instructions"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise UsageError(f"{name.replace('_', '-')} must be a non-negative integer, "
                                 f"got {value!r}")
        object.__setattr__(self, "fail_on", _categories(self.fail_on))

    @property
    def needs_kernels(self) -> bool:
        """The gate reads what Inductor made of the graphs: the scan must run --kernels."""
        from .rules.kernels import KERNEL_RULES

        kernel_categories = {r.category for r in KERNEL_RULES}
        return self.max_kernels is not None or bool(kernel_categories & set(self.fail_on))

    @property
    def needs_compile_time(self) -> bool:
        """The gate reads the cold compile: the scan must run --compile-time."""
        return self.max_compile_time is not None or self.max_compile_instructions is not None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.max_breaks, self.max_graphs, self.max_recompiles,
                                           self.max_graph_calls, self.max_kernels,
                                           self.max_compile_time, self.max_compile_instructions,
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
    from .rules.categories import CATEGORIES
    from .rules.kernels import KERNEL_RULES

    known = list(CATEGORIES) + [r.category for r in KERNEL_RULES]
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(c.strip() for c in items if c.strip())
    unknown = [c for c in names if c not in known]
    if unknown:
        raise UsageError(f"unknown --fail-on categor{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(unknown)}; choose from {', '.join(known)}")
    return names


@dataclass(frozen=True)
class Limits:
    """How long (seconds, None: no limit), how much memory (MB) and how many CPU threads (None:
    torch's default, all cores) one isolated scan may take."""

    timeout: float | None = DEFAULT_TIMEOUT_S
    memory_limit_mb: int | None = None
    threads: int | None = None  # set by `check -j N` so that N scans share the cores

    def __post_init__(self) -> None:
        for key, value in (("timeout", self.timeout), ("memory-limit", self.memory_limit_mb)):
            # ``not value >= 0`` refuses a NaN (TOML's ``nan``) as well as a negative number
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, float)) or not value >= 0):
                raise UsageError(f"{key} must be a non-negative number, got {value!r}")
        if self.memory_limit_mb and self.memory_limit_mb > MAX_MEMORY_LIMIT_MB:
            raise UsageError(f"memory-limit must be at most {MAX_MEMORY_LIMIT_MB} MB (the most "
                             f"setrlimit takes), got {self.memory_limit_mb!r}")
        object.__setattr__(self, "timeout", self.timeout or None)  # 0 means none
        object.__setattr__(self, "memory_limit_mb",
                           int(self.memory_limit_mb) if self.memory_limit_mb else None)


@dataclass(frozen=True)
class ProgramOptions:
    """``breakscan run``: the program (a script or ``-m module``) with its own arguments, and how
    to record it (read by :mod:`breakscan.pipeline.program` and :func:`breakscan.pipeline.program_scan.run_program`)."""

    script: str | None = None
    module: str | None = None
    args: tuple[str, ...] = ()  # the program's own sys.argv[1:]
    capture_only: bool = False  # every backend swapped for "eager": a fast break/recompile scan
    quiet: bool = False  # the program's output goes into the report instead of the terminal
    verbose: bool = False  # Dynamo's own logs shown
    kernels: bool = False  # --kernels: each graph's Inductor compile inspected, its kernels reported

    @property
    def command(self) -> list[str]:
        """The command line the program runs as."""
        head = ["python", "-m", self.module] if self.module else ["python", str(self.script)]
        return head + list(self.args)

    def check(self) -> None:
        """What needs no program run: one of script and module, an existing .py script."""
        if (self.script is None) == (self.module is None):
            raise UsageError("give a script (breakscan run train.py ...) or a module "
                             "(breakscan run -m pkg.module ...)")
        if self.module is not None and not is_module_name(self.module):
            raise UsageError(f"-m {self.module}: not a module name (e.g. mypkg.train)")
        if self.script is not None:
            path = Path(self.script)
            if not path.exists():
                raise UsageError(f"{self.script}: no such file")
            if not path.is_file():
                raise UsageError(f"{self.script} is not a file (for a package, use -m "
                                 f"{path.name} from its parent folder)")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "args": list(self.args)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ProgramOptions":
        return cls(**{**data, "args": tuple(data.get("args", ()))})


__all__ = ["ScanOptions", "TimingOptions", "GateOptions", "Limits", "DEFAULT_TIMEOUT_S"]
