"""Whose file is it, which frame is the one to act on, and how a path is shown: decided here only.

Every other module asks this one: the break's reported line (:func:`acting_frame`), the user's
own call into a library (:func:`user_frame`), the line an error message or a hung scan's stack
dump names (:func:`acting_frame` over :func:`parse_stack`), the HTML report's source views
(:func:`is_user_file`), and every path a report, a diff or a baseline shows
(:func:`display_path`, :func:`relative_to`). Imports no torch (it finds torch's folder without
loading it), so the parent process and the reporters stay cheap.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import linecache
import os
import re
import site
import stat
import sysconfig
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

Owner = str  # "user" | "third_party" | "torch" (the JSON schema's values)


@dataclass
class Frame:
    """One frame of a stack: a Dynamo user stack, a traceback or a faulthandler dump."""

    file: str
    line: int
    function: str
    code: str = ""

    def location(self) -> str:
        return f"{self.file}:{self.line}"


def split_location(loc: str) -> tuple[str, int] | None:
    """``"file.py:12"`` (what :meth:`Frame.location` writes) back into (file, line)."""
    file, _, line = loc.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else None


def _folder(path: str | None) -> str | None:
    return os.path.abspath(path) + os.sep if path else None


def _torch_dir() -> str:
    spec = importlib.util.find_spec("torch")  # finds torch without importing it (1 s)
    origin = spec.origin if spec is not None else None
    return _folder(os.path.dirname(origin)) if origin else os.sep + "torch" + os.sep


_TORCH_DIR = _torch_dir()
_OWN_DIR = _folder(os.path.dirname(__file__))
_STDLIB_DIRS = tuple(sorted({d for d in (_folder(sysconfig.get_paths().get(k))
                                         for k in ("stdlib", "platstdlib")) if d}))


def _library_dirs() -> tuple[str, ...]:
    dirs = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    dirs |= set(getattr(site, "getsitepackages", lambda: [])())
    user_site = getattr(site, "getusersitepackages", lambda: None)()
    dirs |= {user_site} if user_site else set()
    return tuple(sorted(d for d in (_folder(p) for p in dirs) if d))


_LIBRARY_DIRS = _library_dirs()
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def is_torch_file(path: str) -> bool:
    return os.path.abspath(path).startswith(_TORCH_DIR)


def inner_site(brk: Any) -> Frame | None:
    """Where a break shown at the user's line was taken, when that is deeper, in a file that is
    not torch's (``functools.cached_property``'s ``with self.lock``): whether *that* line runs
    again says whether the break recurs (the user's line runs whenever its frame runs eagerly),
    and its code says what the user can do about it."""
    chain = [f for f in getattr(brk, "call_chain", None) or [] if not is_torch_file(f.file)]
    if not chain:
        return None
    deepest = chain[-1]
    return None if (deepest.file, deepest.line) == (brk.file, brk.line) else deepest


def is_own_file(path: str) -> bool:
    """breakscan's own code: never the line to act on."""
    return os.path.abspath(path).startswith(_OWN_DIR)


def is_stdlib_file(path: str) -> bool:
    """Python's own library (``copy.py``, ``inspect.py``, ``logging``), not installed packages."""
    if path.startswith("<frozen"):
        return True
    full = os.path.abspath(path)
    parts = full.split(os.sep)
    return full.startswith(_STDLIB_DIRS) and not any(p in parts for p in _PACKAGE_FOLDERS)


def owner_of(path: str) -> Owner:
    """``torch`` for torch's own files, ``third_party`` for installed packages and the standard
    library, else ``user``."""
    full = os.path.abspath(path)
    if full.startswith(_TORCH_DIR):
        return "torch"
    if any(p in full.split(os.sep) for p in _PACKAGE_FOLDERS) or full.startswith(_LIBRARY_DIRS) \
            or path.startswith("<frozen"):
        return "third_party"
    return "user"


def package_path(path: str) -> str | None:
    """A file's path inside the installed package holding it (``transformers/models/bert/
    modeling_bert.py``), from the last package folder (site-packages) on; None for a file in no
    package folder, or a lone module there (no package to name)."""
    parts = os.path.abspath(path).split(os.sep)
    at = max((i for i, p in enumerate(parts) if p in _PACKAGE_FOLDERS), default=None)
    if at is None or len(parts) - at < 3:
        return None
    return "/".join(parts[at + 1:])


@functools.lru_cache(maxsize=64)
def package_version(top: str) -> str:
    """The installed version of the package whose top module is ``top``, or ""."""
    from importlib import metadata
    for name in (top, *metadata.packages_distributions().get(top, [])[:1]):
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(name)
    return ""


def is_user_file(path: str) -> bool:
    """A real file of the user's own code (not generated ``<string>`` code, not breakscan)."""
    return not path.startswith("<") and owner_of(path) == "user" and not is_own_file(path)


# A traceback's `File "m.py", line 3, in f` (a Dynamo user stack, an FX node's stack trace, an
# exception's text) and a faulthandler dump's `File "m.py", line 3 in f`.
# A file name may itself hold '"' (Python prints it raw): the name ends at '", line N'.
STACK_LINE = re.compile(r'^\s*File "(?P<file>.+?)", line (?P<line>\d+)'
                        r'(?:,? in (?P<function>.+?))?\s*$')
# A step of Dynamo's branch provenance: `# File "m.py", line 3, in f, code: y = x.sum()`.
PROVENANCE_LINE = re.compile(r'# File "(?P<file>.+?)", line (?P<line>\d+), in (?P<fn>[^,]+), '
                             r'code: (?P<code>.*)$')


def parse_stack(text: str, *, most_recent_first: bool = False) -> list[Frame]:
    """The frames a printed stack names, outermost first, each with the source line printed
    under it (a faulthandler dump lists the most recent call first: say so and it is turned
    around)."""
    lines = text.splitlines()
    frames: list[Frame] = []
    for idx, line in enumerate(lines):
        m = STACK_LINE.match(line)
        if not m:
            continue
        code = ""
        if idx + 1 < len(lines) and not STACK_LINE.match(lines[idx + 1]):
            following = lines[idx + 1].strip()
            if following and not set(following) <= set("^~ "):
                code = following
        frames.append(Frame(m["file"], int(m["line"]), (m["function"] or "").strip(), code))
    return frames[::-1] if most_recent_first else frames


def provenance_frame(line: str) -> Frame | None:
    """The frame one line of Dynamo's branch provenance names, with its code (else None)."""
    m = PROVENANCE_LINE.search(line)
    return Frame(m["file"], int(m["line"]), m["fn"].strip(), m["code"].strip()) if m else None


def frames_of(exc: BaseException) -> list[Frame]:
    """An exception's traceback as frames, outermost first (a SyntaxError's own line last)."""
    import traceback

    frames = [Frame(f.filename, f.lineno or 0, f.name) for f in
              traceback.extract_tb(exc.__traceback__)]
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append(Frame(exc.filename, exc.lineno or 0, "<module>"))
    return frames


def raised_at(exc: BaseException) -> list[Frame]:
    """Where an exception was raised, outermost first: its traceback, then the user's stack
    Dynamo was tracing when it raised (after "from user code:" in its text). A break inside a
    ``torch.cond`` branch raises from the ``cond`` call; the line to act on is the branch's."""
    _, marker, tail = str(exc).partition("from user code:")
    return frames_of(exc) + (parse_stack(tail) if marker else [])


@dataclass(frozen=True)
class LibraryHelper:
    """A library's generic utility module: a break inside it is acted on at the frame outside it
    that called it (the model's line), never inside the helper."""

    path: str  # inside the installed package, ``/`` separators
    switch: str = ""  # what turns the helper off without editing anything (named in the advice)
    functions: tuple[str, ...] = ()  # the helper functions the switch turns off
    what: str = ""  # what those functions do, in words
    off: str = ""  # what the switch does


# transformers' import utilities wrap torch._check/_check_tensor_all (`torch_compilable_check`,
# off under its environment switch); its generic utilities wrap conversions (`torch_int`).
LIBRARY_HELPERS = (
    LibraryHelper("transformers/utils/import_utils.py", "TRANSFORMERS_DISABLE_TORCH_CHECK=1",
                  ("torch_compilable_check",),
                  what="a runtime check (`torch._check_tensor_all` on a tensor condition) that "
                       "needs the condition's value on the host",
                  off="transformers then skips these checks"),
    LibraryHelper("transformers/utils/generic.py"),
)


def library_helper(path: str) -> LibraryHelper | None:
    """The helper module ``path`` is, when it is one of an installed library's."""
    if owner_of(path) != "third_party":
        return None
    full = os.path.abspath(path).replace(os.sep, "/")
    return next((h for h in LIBRARY_HELPERS if full.endswith("/" + h.path)), None)


def switched_helper(frames: Iterable[Frame]) -> tuple[Frame, LibraryHelper] | None:
    """The innermost frame of a helper function that a switch turns off, with its helper."""
    for frame in reversed(list(frames)):
        helper = library_helper(frame.file)
        if helper is not None and frame.function in helper.functions:
            return frame, helper
    return None


def acting_frame(frames: Iterable[Frame]) -> Frame | None:
    """The line to act on: the innermost frame outside torch, breakscan, the standard library
    and libraries' generic helpers (:data:`LIBRARY_HELPERS`).

    ``copy.py:76 return copier(x)`` is never the line to act on when a library or user frame
    called it, nor transformers' ``torch_compilable_check`` when the model's line called it; a
    chain of torch, stdlib and helper frames alone falls back to its innermost helper (else
    stdlib) one.
    """
    chain = [f for f in frames if not is_torch_file(f.file) and not is_own_file(f.file)]
    outside = [f for f in chain if not is_stdlib_file(f.file)]
    for frame in reversed(outside):
        if library_helper(frame.file) is None:
            return frame
    return (outside or chain)[-1] if chain else None


def user_frame(frames: Iterable[Frame]) -> Frame | None:
    """The innermost frame of the user's own code: where to act on a break inside a library."""
    for frame in reversed(list(frames)):
        if owner_of(frame.file) == "user" and not is_own_file(frame.file):
            return frame
    return None


def where(frames: Iterable[Frame], *, with_function: bool = False) -> str:
    """`` at file:line`` (and `` in fn``) of the acting frame, or "" (for one-line messages)."""
    frame = acting_frame(frames)
    if frame is None:
        return ""
    return f" at {display_path(frame.file)}:{frame.line}" + (
        f" in {frame.function}" if with_function and frame.function else "")


def _launcher(path: str) -> bool:
    """``runpy``, which starts a program for ``breakscan run`` (as for ``python -m``)."""
    return path == "<frozen runpy>" or (os.path.basename(path) == "runpy.py" and
                                        is_stdlib_file(path))


def model_stack(stack: list[Frame]) -> list[Frame]:
    """The part of a Dynamo user stack that belongs to the model (or the program).

    Dynamo prepends the frames above the compiled call (breakscan, the CLI, pytest, runpy…);
    cut after breakscan's or runpy's last frame and drop torch's ``nn.Module`` call machinery.
    """
    start = 0
    for idx, frame in enumerate(stack):
        if is_own_file(frame.file) or _launcher(frame.file):
            start = idx + 1
    return [f for f in stack[start:] if not (is_torch_file(f.file) and f.function in
                                              ("_call_impl", "_wrapped_call_impl", "__call__"))]


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (``/`` separators) when it is inside it, else None."""
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")


# Where source may be read from. None: any regular file (a scan reads the code it ran). A
# trace names files someone else's job wrote: only Python files inside these folders.
_SOURCE_ROOTS: ContextVar[tuple[str, ...] | None] = ContextVar("source_roots", default=None)
MAX_SOURCE_BYTES = 16 * 1024 * 1024


@contextlib.contextmanager
def sources_within(roots: Iterable[str] | None) -> Iterator[None]:
    """Read source only inside ``roots`` (Python files) while the block runs."""
    token = _SOURCE_ROOTS.set(tuple(os.path.realpath(r) for r in roots)
                              if roots is not None else None)
    try:
        yield
    finally:
        _SOURCE_ROOTS.reset(token)


def source_allowed(path: str, roots: Iterable[str] | None = None) -> bool:
    """May breakscan read ``path`` as source? A regular file (never a FIFO, a device or a
    directory) of sane size, and with ``roots`` (or :func:`sources_within`) a ``.py`` file
    inside one of them."""
    if not path or path.startswith("<"):
        return False
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
        return False
    allowed = tuple(os.path.realpath(r) for r in roots) if roots is not None \
        else _SOURCE_ROOTS.get()
    if allowed is None:
        return True
    real = os.path.realpath(path)
    return real.endswith(".py") and any(_inside(real, root) is not None for root in allowed)


def source_lines(path: str, roots: Iterable[str] | None = None) -> list[str]:
    """The lines of a source file breakscan may read (else none)."""
    return linecache.getlines(path) if source_allowed(path, roots) else []


def source_line(path: str, line: int, roots: Iterable[str] | None = None) -> str:
    lines = source_lines(path, roots)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def module_ast(file: str) -> ast.Module | None:
    """The parsed source of ``file`` (None when it cannot be read or parsed): for the few
    questions a log record does not answer (which block a line sits in, where a name was set)."""
    if not source_allowed(file):
        return None
    try:
        return _parsed(file, os.stat(file).st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=64)
def _parsed(file: str, mtime_ns: int) -> ast.Module | None:
    try:
        with open(file, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None


def relative_to(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it is inside it, else unchanged (never ``../``)."""
    return _inside(path, root) or path


def display_path(path: str) -> str:
    """How reports, diffs and messages show a file: an installed package's from its top module
    (``transformers/models/bert/modeling_bert.py``), even in a ``.venv`` under the working
    directory; else relative to it; ``stdlib:functools.py``; else absolute (JSON keeps that)."""
    if not path or path.startswith("<"):
        return path
    return _displayed(path, os.getcwd())


@functools.lru_cache(maxsize=4096)
def _displayed(path: str, cwd: str) -> str:
    """:func:`display_path` for one working directory (a zoo's report shows a file many times)."""
    found = package_path(path) or _inside(path, cwd)  # a package first: a project's own .venv
    if found:
        return found
    full = os.path.abspath(path)
    root = next((d for d in _STDLIB_DIRS if full.startswith(d)), "") if is_stdlib_file(full) else ""
    return "stdlib:" + full[len(root):].replace(os.sep, "/") if root else full


def repo_path(path: str) -> str:
    """A path as CI tools want it: relative to the repository root (``$GITHUB_WORKSPACE`` when
    set, else the working directory); a file outside it keeps its path."""
    return relative_to(path, os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
