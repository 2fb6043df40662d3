"""The options of a scan, as one frozen object per concern, built here from every source.

:class:`ScanOptions` says how to load and call the target and what to add to the scan
(recompiles, timings); :class:`GateOptions` the thresholds of ``--max-breaks`` & co;
:class:`Limits` how long and how much memory one isolated scan may take. The CLI maps its flags
straight onto them, ``[tool.breakscan]`` entries go through :func:`from_config`, the pytest
marker through :meth:`GateOptions.for_test`. The isolated child gets ``ScanOptions.to_dict()``
and rebuilds the same object; each stage reads the fields it owns (see docs/architecture.md).
The values that need no model (target, shapes, ``--init-args``, batch sizes) are parsed here,
so :meth:`ScanOptions.check` answers a typo before any scan process starts. Imports no torch.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
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
    # The user's torch.compile settings: dynamic= (capture, run-time counts, recompile check and
    # timings) and options= (the backend's, for the timings).
    dynamic: bool | None = None
    compile_options: tuple[tuple[str, Any], ...] = ()

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

    def check(self, target: str) -> None:
        """Check what needs no model before a scan process starts: a typo in the target, its
        file, a shape, ``--init-args`` or ``--vary-batch`` fails in milliseconds with the same
        one-line UsageError the scan would give (the rest is checked when the model loads)."""
        spec = parse_target(target)
        if spec.is_file:
            check_source_file(spec.source)
        parse_inputs(self.input_shapes, self.inputs)
        parse_init_args(self.init_args)
        parse_input_sets(self.vary_batch, self.shapes)
        if self.compile_options and self.timing is not None and self.timing.mode:
            raise UsageError("torch.compile takes --mode or --compile-option, not both")

    @property
    def compile_settings(self) -> dict[str, Any]:
        """The torch.compile settings this scan ran with, as the report states them."""
        timing = self.timing
        return {"backend": timing.backend if timing else None,
                "mode": timing.mode if timing else None, "dynamic": self.dynamic,
                "options": dict(self.compile_options)}

    @property
    def load_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`breakscan.pipeline.load.load_target`."""
        return dict(input_shapes=list(self.input_shapes) or None, dtype=self.dtype,
                    device=self.device, inputs=self.inputs, init_args=self.init_args,
                    method=self.method, train=self.train)


@dataclass(frozen=True)
class TargetSpec:
    """A parsed ``FILE.py:NAME[.method]`` or ``package.module:NAME[.method]``."""

    source: str  # the file path or module name
    is_file: bool
    name: str
    method: str | None

    def __str__(self) -> str:
        suffix = f".{self.method}" if self.method else ""
        return f"{self.source}:{self.name}{suffix}"


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def parse_target(text: str) -> TargetSpec:
    """Parse ``FILE.py:NAME``, ``FILE.py:NAME.method`` or ``pkg.mod:NAME``."""
    if ":" not in text:
        raise UsageError(f"target {text!r} has no ':NAME' — write it as FILE.py:ClassName "
                         "or package.module:ClassName")
    source, _, attr = text.rpartition(":")
    if not source:
        raise UsageError(f"target {text!r} names no file or module before ':'")
    if not re.fullmatch(rf"{_IDENT}(\.{_IDENT})?", attr):
        raise UsageError(f"target {text!r}: {attr!r} is not NAME or NAME.method "
                         "(a Python identifier, optionally followed by .method)")
    name, _, method = attr.partition(".")
    is_file = source.endswith(".py") or os.sep in source or "/" in source
    if not is_file and os.path.isfile(source):  # e.g. README.md:Net, or model.pyw:Net
        raise UsageError(f"target file {source} is not a .py file")
    if not is_file and not re.fullmatch(rf"{_IDENT}(\.{_IDENT})*", source):
        raise UsageError(f"target {text!r}: {source!r} is neither a .py file nor a module name")
    return TargetSpec(source=source, is_file=is_file, name=name, method=method or None)


def parse_shape(text: str, option: str = "--input-shape") -> list[int]:
    """Parse ``8,16`` (or ``8x16``) into ``[8, 16]``; ``()`` is a 0-d scalar.

    ``option`` names the flag the text came from, for the error message.
    """
    if text.strip() in ("()", "[]"):
        return []  # an explicit 0-d scalar input
    cleaned = text.strip().strip("()[]")
    if cleaned == "":
        raise UsageError(f"empty {option}: write e.g. {option} 8,16 (or () for a 0-d scalar)")
    parts = re.split(r"\s*[,x×]\s*", cleaned)
    dims: list[int] = []
    for part in parts:
        if not re.fullmatch(r"\d+", part):
            raise UsageError(f"bad {option} {text!r}: each dimension must be a "
                             f"non-negative integer, e.g. {option} 8,16")
        dims.append(int(part))
    return dims


def parse_init_args(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--init-args is not valid JSON ({exc.msg} at column {exc.colno}); "
                         """write it like '{"width": 12}'""") from None
    except (RecursionError, ValueError):  # nested thousands deep, a 5,000-digit number
        raise UsageError("--init-args is nested too deep or holds a number too long; "
                         """write it like '{"width": 12}'""") from None
    if not isinstance(value, dict):
        raise UsageError("--init-args must be a JSON object of keyword arguments, "
                         """e.g. '{"width": 12}'""")
    return value


def parse_batches(text: str) -> list[int]:
    """``--vary-batch 1,4,16`` -> [1, 4, 16]."""
    sizes = parse_shape(text, "--vary-batch")
    if not sizes or any(b == 0 for b in sizes):
        raise UsageError(f"bad --vary-batch {text!r}: give positive batch sizes, e.g. 1,4,16")
    return sizes


def parse_shape_set(text: str) -> list[list[int]]:
    """One ``--shapes`` value: the shapes of all positional inputs, separated by spaces."""
    parts = text.split()
    if not parts:
        raise UsageError("empty --shapes value: write e.g. --shapes 8,32 (one shape per input, "
                         "separated by spaces)")
    return [parse_shape(p, "--shapes") for p in parts]


def parse_inputs(input_shapes: Any, inputs: str | None) -> list[list[int]]:
    """The shapes of ``--input-shape`` (each once per positional input), or [] with ``--inputs``;
    exactly one of the two must be given."""
    shapes = [parse_shape(s) for s in (input_shapes or [])]
    if inputs and shapes:
        raise UsageError("use either --input-shape or --inputs, not both")
    if not inputs and not shapes:
        raise UsageError("no inputs given: pass --input-shape 8,16 (once per positional input) "
                         "or --inputs FILE.py:make_inputs")
    return shapes


def parse_input_sets(vary_batch: str | list[int] | None, shapes: Any
                     ) -> tuple[list[int] | None, list[list[list[int]]] | None]:
    """``--vary-batch`` as batch sizes, or ``--shapes`` as shape sets (at most one of them)."""
    if vary_batch and shapes:
        raise UsageError("use either --vary-batch or --shapes, not both")
    if vary_batch:
        return (parse_batches(vary_batch) if isinstance(vary_batch, str)
                else list(vary_batch)), None
    return None, ([parse_shape_set(s) for s in shapes] if shapes else None)


def parse_dynamic(value: Any) -> bool | None:
    """``--dynamic true|false`` (or a bool, or None: torch.compile's own default)."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise UsageError(f"--dynamic takes true or false, got {value!r}")


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


def check_source_file(source: str, what: str = "target") -> Path:
    """The path of a ``.py`` file a target or ``--inputs`` names, or its one-line UsageError."""
    path = Path(source)
    if not path.exists():
        raise UsageError(f"{what} file not found: {source} (check the path; it is relative to "
                         f"{os.getcwd()})")
    if path.is_dir():
        raise UsageError(f"{what} {source} is a directory; name a .py file inside it, "
                         f"e.g. {source}/model.py:NAME")
    if path.suffix != ".py":
        raise UsageError(f"{what} {source} is not a .py file")
    return path


@dataclass(frozen=True)
class GateOptions:
    """The gate's thresholds; None (or empty) means that check is off. Read by gate."""

    max_breaks: int | None = None
    max_graphs: int | None = None
    max_recompiles: int | None = None
    max_graph_calls: int | None = None  # compiled-graph calls per model call, at run time
    fail_on: tuple[str, ...] = ()
    fullgraph: bool = False
    baseline: dict[str, Any] | None = field(default=None, compare=False)  # this target's entry
    baseline_root: str | None = None  # the baseline file's folder: its paths are relative to it

    def __post_init__(self) -> None:
        for name in ("max_breaks", "max_graphs", "max_recompiles", "max_graph_calls"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise UsageError(f"{name.replace('_', '-')} must be a non-negative integer, "
                                 f"got {value!r}")
        object.__setattr__(self, "fail_on", _categories(self.fail_on))

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.max_breaks, self.max_graphs, self.max_recompiles,
                                           self.max_graph_calls,
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
    from .analysis.categories import CATEGORIES

    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(c.strip() for c in items if c.strip())
    unknown = [c for c in names if c not in CATEGORIES]
    if unknown:
        raise UsageError(f"unknown --fail-on categor{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(unknown)}; choose from {', '.join(CATEGORIES)}")
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
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, float)) or value < 0):
                raise UsageError(f"{key} must be a non-negative number, got {value!r}")
        object.__setattr__(self, "timeout", self.timeout or None)  # 0 means none
        object.__setattr__(self, "memory_limit_mb",
                           int(self.memory_limit_mb) if self.memory_limit_mb else None)


@dataclass(frozen=True)
class ProgramOptions:
    """``breakscan run``: the program (a script or ``-m module``) with its own arguments, and how
    to record it (read by :mod:`breakscan.pipeline.program` and :func:`breakscan.pipeline.scan.run_program`)."""

    script: str | None = None
    module: str | None = None
    args: tuple[str, ...] = ()  # the program's own sys.argv[1:]
    capture_only: bool = False  # every backend swapped for "eager": a fast break/recompile scan
    quiet: bool = False  # the program's output goes into the report instead of the terminal
    verbose: bool = False  # Dynamo's own logs shown

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
        if self.module is not None and not re.fullmatch(rf"{_IDENT}(\.{_IDENT})*", self.module):
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


# [tool.breakscan] keys (the CLI's option names without the dashes) and the field each sets.
SCAN_KEYS = {"input-shape": "input_shapes", "dtype": "dtype", "device": "device",
             "inputs": "inputs", "init-args": "init_args", "method": "method", "train": "train",
             "vary-batch": "vary_batch", "shapes": "shapes", "dynamic-check": "dynamic_check",
             "dynamic": "dynamic", "compile-option": "compile_options"}
GATE_KEYS = {"max-breaks": "max_breaks", "max-graphs": "max_graphs",
             "max-recompiles": "max_recompiles", "max-graph-calls": "max_graph_calls",
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


__all__ = ["ScanOptions", "TimingOptions", "GateOptions", "Limits", "from_config",
           "gate_options", "DEFAULT_TIMEOUT_S"]
