"""What a scan is pointed at, parsed without a model: the target, its inputs and their dtype.

``FILE.py:NAME[.method]`` or ``package.module:NAME``, ``--input-shape``/``--inputs``,
``--init-args``, ``--vary-batch``/``--shapes``, ``--dtype`` and ``--device`` are read here as
text, so :meth:`breakscan.options.ScanOptions.check` answers a typo in the parent before any
scan process starts, with the same one-line UsageError the child's
:func:`breakscan.pipeline.load.load_target` gives. :func:`check_loadable` refuses a target whose
module cannot be found or whose file defines no such name, read with ``ast``: nothing is
imported (no torch, none of the user's code).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError

# The names --dtype accepts: the keys of breakscan.pipeline.load.DTYPES, which maps them onto
# torch dtypes in the child (a test keeps the two the same).
DTYPE_NAMES = frozenset({"float32", "float", "float64", "double", "float16", "half",
                         "bfloat16", "int64", "long", "int32", "int", "bool"})


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


def is_module_name(text: str) -> bool:
    """``pkg.module``: dotted Python identifiers (a target's module, ``breakscan run -m``)."""
    return re.fullmatch(rf"{_IDENT}(\.{_IDENT})*", text) is not None


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
    if not is_file and not is_module_name(source):
        raise UsageError(f"target {text!r}: {source!r} is neither a .py file nor a module name")
    return TargetSpec(source=source, is_file=is_file, name=name, method=method or None)


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
    if not path.is_file():  # a FIFO, /dev/zero (a link named z.py): reading it never ends
        raise UsageError(not_regular(what, source))
    return path


def not_regular(what: str, source: str | os.PathLike[str]) -> str:
    """The one line for a target (or ``--inputs``) file that is a FIFO, a device or a socket."""
    return f"{what} {source} is not a regular file; name a .py file"


MAX_SOURCE_BYTES = 64 * 1024 * 1024  # a model's source file, read with ast: far less


def read_source(path: str | os.PathLike[str], what: str = "target") -> bytes | None:
    """A target's source file read before any scan: a FIFO or a device (which would hang the
    parent or never end) is a UsageError; a file that is missing, unreadable or over
    :data:`MAX_SOURCE_BYTES` is None (left to the scan, under its ``--timeout``)."""
    from .files import read_regular

    if os.path.exists(path) and not os.path.isdir(path) and not os.path.isfile(path):
        raise UsageError(not_regular(what, path))
    try:  # opened without blocking: a file swapped for a FIFO since is refused, not waited on
        return read_regular(path, f"{what} file", MAX_SOURCE_BYTES)
    except (OSError, UsageError):
        return None


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
        if len(part) > 18 or int(part) >= 2**62:  # torch's sizes are 64-bit integers
            raise UsageError(f"bad {option} {text!r}: dimension {part[:24]}"
                             f"{'…' if len(part) > 24 else ''} is too large for a tensor")
        dims.append(int(part))
    return dims


_DTYPE_BYTES = {"float64": 8, "double": 8, "int64": 8, "long": 8, "complex64": 8,
                "complex128": 16, "float16": 2, "half": 2, "bfloat16": 2, "int16": 2,
                "int8": 1, "uint8": 1, "bool": 1}


def check_fits_memory(shapes: list[list[int]], dtype: str, option: str = "--input-shape",
                      memory: int | None = None) -> None:
    """Refuse, before any process starts, inputs larger than this machine's memory (a typo's
    extra digit): one line saying how large, never torch's allocator failing in a child."""
    if memory is None:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            return
    size = _DTYPE_BYTES.get(str(dtype).removeprefix("torch."), 4)
    for shape in shapes:
        count = 1
        for dim in shape:
            count *= dim
        if count * size > memory:
            shown = ",".join(map(str, shape))
            raise UsageError(f"{option} {shown} is {count:.3g} elements ({count * size / 2**30:,.0f}"
                             f" GiB as {dtype}), more than this machine's "
                             f"{memory / 2**30:,.0f} GiB of memory: use a smaller {option}")


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


def check_dtype_name(text: str) -> None:
    """``--dtype``: one of :data:`DTYPE_NAMES`, in any case (the child's ``parse_dtype``)."""
    if text.lower() not in DTYPE_NAMES:
        raise UsageError(f"unknown --dtype {text!r}; choose one of "
                         f"{', '.join(sorted(DTYPE_NAMES))}")


def check_device_name(text: str) -> None:
    """``--device``: ``auto``, ``cpu`` or ``cuda…`` in any case (the child's ``resolve_device``;
    whether this machine has CUDA, and which index, only the child can tell)."""
    text = text.lower()
    if text not in ("auto", "cpu") and not text.startswith("cuda"):
        raise UsageError(f"unknown --device {text!r}; choose cpu, cuda or auto")


def no_module_error(source: str) -> UsageError:
    """The one-line error for a module target that cannot be imported from here."""
    return UsageError(f"no module named {source!r} importable from {os.getcwd()}: run breakscan "
                      "from the folder that holds it (or add that folder to PYTHONPATH), or pass "
                      "its file instead, e.g. path/to/model.py:NAME")


def check_loadable(spec: TargetSpec) -> None:
    """Refuse a target that certainly cannot load, without importing anything: its module is
    found by no finder, or its file (parsed with ``ast``) binds no ``NAME`` and makes no names
    at run time. ``check`` answers thousands of such targets in a second instead of a scan
    process each; the error is the one the scan would give. Anything unsure is left to the
    scan."""
    if spec.is_file:
        path: Path | None = Path(spec.source)
    else:
        path = _module_origin(spec.source)
    if path is None or path.suffix != ".py" or spec.name.startswith("__"):
        return
    source = read_source(path, "target" if spec.is_file else f"module {spec.source}'s file")
    read = _bound_names(source, path.stem) if source is not None else None
    if read is None or spec.name in read[0]:
        return
    if path.name == "__init__.py" and ((path.parent / spec.name).is_dir()
                                       or (path.parent / f"{spec.name}.py").is_file()):
        return  # a submodule: an attribute of the package once something imports it
    # the classes and functions at its top level, as the scan's hint
    raise missing_name_error(spec, read[1], "no class or function")


def missing_name_error(spec: TargetSpec, known: list[str], nothing: str) -> UsageError:
    """``model.py has no 'Nte'; did you mean Net?`` (else what it defines, else ``nothing``):
    the same words before a scan process starts and inside it."""
    import difflib

    close = difflib.get_close_matches(spec.name, known, n=3)
    if close:
        hint = f"; did you mean {', '.join(close)}?"
    elif known:
        hint = f"; it defines {', '.join(known[:8])}{' …' if len(known) > 8 else ''}"
    else:
        hint = f"; it defines {nothing}"
    return UsageError(f"{spec.source} has no {spec.name!r}{hint}")


def _module_origin(source: str) -> Path | None:
    """The file of module ``source``, looked up as the scan imports it (the working directory,
    then sys.path) without importing anything; None when unsure (found by another finder);
    the scan's UsageError when certainly not there."""
    import importlib.util
    from importlib.machinery import PathFinder

    parts = source.split(".")
    if parts[0] in sys.modules:
        return None
    found = PathFinder.find_spec(parts[0], [os.getcwd(), *sys.path])
    if found is None:
        try:
            found = importlib.util.find_spec(parts[0])  # an editable install's finder, say
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise no_module_error(source)
        return None
    for depth in range(1, len(parts)):
        init = found.origin or ""
        if _names_at_run_time(init):  # __path__ or sys.modules changed: unsure
            return None
        locations = found.submodule_search_locations
        found = PathFinder.find_spec(".".join(parts[:depth + 1]), list(locations or []))
        if found is None:
            raise no_module_error(source)
    return Path(found.origin) if found.origin else None


def _names_at_run_time(file: str) -> bool:
    """Whether a package's ``__init__`` may change where its submodules come from."""
    if not file.endswith(".py"):
        return False
    try:
        source = read_source(file, "package")
    except UsageError:  # a FIFO: unsure, left to the scan
        return True
    if source is None:
        return True
    text = source.decode("utf-8", errors="replace")
    return any(word in text for word in ("__path__", "sys.modules", "__getattr__"))


_RUN_TIME_NAMES = frozenset({"globals", "locals", "exec", "__import__", "__builtins__",
                             "builtins"})


@functools.lru_cache(maxsize=64)  # by content: many targets in one file are read once
def _bound_names(source: bytes, stem: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """Every name a file's ``source`` binds anywhere (an over-count: a name bound only in a function
    counts too) and its public top-level classes and functions; None when it may make names at
    run time (:func:`_makes_names`) or does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if _makes_names(node, stem):
            return None
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    if "__getattr__" in names:
        return None
    defined = tuple(node.name for node in tree.body if isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not node.name.startswith("_"))
    return frozenset(names), defined


def _makes_names(node: ast.AST, stem: str) -> bool:
    """Whether ``node`` may bind module names no statement spells: ``from x import *``,
    ``globals()``, ``exec``, ``vars()``, ``sys.modules``, ``setattr`` on a call's result, the
    file importing itself."""
    if isinstance(node, ast.Name):
        return node.id in _RUN_TIME_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr == "modules" and isinstance(node.value, ast.Name) and \
            node.value.id == "sys"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any(alias.name == "*" or alias.name.rpartition(".")[2] == stem
                   for alias in node.names) or (isinstance(node, ast.ImportFrom)
                                                and (node.module or "").rpartition(".")[2] == stem)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "vars" and not node.args:
            return True
        return node.func.id == "setattr" and bool(node.args) and \
            isinstance(node.args[0], (ast.Call, ast.Subscript))
    return False
