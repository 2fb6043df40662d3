"""A Dynamo run's process-wide state: cleaned before and after, read while it lasts.

Its caches, counters, compilation metrics, transformed code and config are global to the
process; a scan starts from nothing and leaves nothing behind (``clean_dynamo``), records its
calls quietly (``recorded``: logs, warnings and prints into lists) and reads what Dynamo kept
(metrics, each transformed code object). Private utilities are feature-detected: a missing one
skips its step or adds a note saying what is lost.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from ..model.raw import CodeEvent
from ..model.records import FrameMetric
from .logs import dynamo_logs


def _utils_attr(name: str) -> Callable[..., Any] | None:
    return getattr(getattr(torch._dynamo, "utils", None), name, None)


def clean_dynamo_state() -> None:
    """Start from nothing: caches, counters, metrics and the duplicate-break filter."""
    torch._dynamo.reset()
    for name in ("clear_compilation_metrics", "reset_graph_break_dup_checker"):
        fn = _utils_attr(name)
        if fn is not None:
            fn()
    counters = getattr(torch._dynamo.utils, "counters", None)
    if counters is not None:
        counters.clear()


def log_breaks_again() -> None:
    """Dynamo logs a break it has logged before in a short form, without the user stack;
    after this it logs each in full again."""
    reset = _utils_attr("reset_graph_break_dup_checker")
    if reset is not None:
        reset()


def read_metrics(notes: list[str], seen: list[Any] | None = None) -> list[FrameMetric]:
    """Dynamo's compilation metrics (one per frame compile). ``seen`` (a list this function
    fills) leaves out the records an earlier read returned: a later call's compiles only."""
    getter = _utils_attr("get_compilation_metrics")
    if getter is None:
        notes.append("torch._dynamo.utils.get_compilation_metrics not found: skipped frames are "
                     "known only from the log records")
        return []
    earlier = {id(m) for m in seen} if seen is not None else set()
    rows = []
    for m in getter():
        if id(m) in earlier:
            continue
        if seen is not None:
            seen.append(m)  # the reference keeps the id from being reused
        rows.append(FrameMetric(
            compile_id=str(m.compile_id) if getattr(m, "compile_id", None) else None,
            name=getattr(m, "co_name", None), file=getattr(m, "co_filename", None),
            first_line=getattr(m, "co_firstlineno", None),
            graph_op_count=getattr(m, "graph_op_count", None),
            fail_type=getattr(m, "fail_type", None), fail_reason=getattr(m, "fail_reason", None),
            fail_file=getattr(m, "fail_user_frame_filename", None),
            fail_line=getattr(m, "fail_user_frame_lineno", None),
            compile_s=getattr(m, "entire_frame_compile_time_s", None)))
    return _named_from_frame_id(rows, getter())


def _named_from_frame_id(rows: list[FrameMetric], every: Any) -> list[FrameMetric]:
    """The row of a compile that hit the recompile limit has no code name or file (measured
    on 2.13: ``0/8 None None``); the frame's earlier compiles (``0/0``..``0/7``) name it."""
    named = {}
    for m in every:
        cid = str(getattr(m, "compile_id", "") or "")
        if "/" in cid and getattr(m, "co_name", None):
            named[cid.split("/")[0]] = (m.co_name, m.co_filename, m.co_firstlineno)
    for row in rows:
        if row.name is None and row.compile_id and "/" in row.compile_id:
            found = named.get(row.compile_id.split("/")[0])
            if found:
                row.name, row.file, row.first_line = found
    return rows


@dataclass
class DynamoSession:
    """What a quiet Dynamo run recorded (filled while the ``with`` block runs)."""

    graph_break_logs: list[str]
    recompile_logs: list[str]
    dynamo_log: list[str]
    output: io.StringIO  # what the model printed
    notes: list[str]


@contextlib.contextmanager
def clean_dynamo() -> Iterator[None]:
    """Dynamo state that starts from nothing and is cleaned again on exit (nothing leaks into
    the next scan); compiled code made inside the block stays cached until then."""
    clean_dynamo_state()
    try:
        yield
    finally:
        clean_dynamo_state()


@contextlib.contextmanager
def recorded(*, training: bool, verbose: bool = False,
             notes: list[str] | None = None) -> Iterator[DynamoSession]:
    """Calls of compiled code whose logs, warnings and prints are recorded, not shown."""
    notes = [] if notes is None else notes
    output = io.StringIO()
    grad = contextlib.nullcontext() if training else torch.no_grad()
    with dynamo_logs(verbose, notes) as (break_logs, recompile_logs, other_logs), \
            warnings.catch_warnings(record=True) as caught, grad, \
            contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        warnings.simplefilter("always")
        yield DynamoSession(break_logs, recompile_logs, other_logs, output, notes)
        other_logs.extend(f"{w.category.__name__}: {w.message}" for w in caught)


@contextlib.contextmanager
def dynamo_session(*, training: bool, verbose: bool = False) -> Iterator[DynamoSession]:
    """A run from clean Dynamo state whose logs, warnings and prints are recorded, not shown.

    Read anything that lives in Dynamo's state (compilation metrics) inside the block: the state
    is cleaned again on exit so nothing leaks into the next scan.
    """
    with clean_dynamo(), recorded(training=training, verbose=verbose) as session:
        yield session


@contextlib.contextmanager
def bytecode_hook(notes: list[str]) -> Iterator[list[CodeEvent]]:
    """Record each code object Dynamo transformed, with its compile id."""
    events: list[CodeEvent] = []
    register = getattr(getattr(torch._dynamo, "convert_frame", None), "register_bytecode_hook", None)
    if register is None:
        notes.append("torch._dynamo.convert_frame.register_bytecode_hook not found: resume "
                     "functions are not tied to breaks")
        yield events
        return

    def hook(code: Any, new_code: Any) -> None:
        compile_id = None
        with contextlib.suppress(Exception):
            current = torch._guards.CompileContext.current_compile_id()
            compile_id = str(current) if current is not None else None
        events.append(CodeEvent(code.co_name, code.co_filename, code.co_firstlineno, compile_id))

    handle = register(hook)
    try:
        yield events
    finally:
        handle.remove()


def recompile_limit() -> int | None:
    """Dynamo's recompile limit (``cache_size_limit`` on older torch)."""
    config = torch._dynamo.config
    return getattr(config, "recompile_limit", getattr(config, "cache_size_limit", None))


def dynamic_shapes(dynamic: bool | None) -> contextlib.AbstractContextManager[Any]:
    """What ``torch.compile(dynamic=...)`` sets, for passes that cannot take the argument
    (explain): True assumes every size dynamic, False turns automatic dynamic shapes off."""
    if dynamic is None:
        return contextlib.nullcontext()
    config = torch._dynamo.config
    if dynamic:
        return config.patch(assume_static_by_default=False)
    return config.patch(automatic_dynamic_shapes=False, assume_static_by_default=True)


def nested_graph_breaks(value: bool | None) -> contextlib.AbstractContextManager[Any]:
    """``torch._dynamo.config.nested_graph_breaks`` set for the block (None: as it is). A break
    in a nested function then splits only that function, not every frame around it (False in
    2.13 and 2.14; proposed as the default in a later release). A torch without it refuses a
    value in one line."""
    if value is None:
        return contextlib.nullcontext()
    if not hasattr(torch._dynamo.config, "nested_graph_breaks"):
        from ..errors import UsageError

        raise UsageError(f"--nested-graph-breaks: torch {torch.__version__} has no "
                         "torch._dynamo.config.nested_graph_breaks")
    return torch._dynamo.config.patch(nested_graph_breaks=value)


def nested_in_force() -> bool | None:
    """The nested_graph_breaks setting now (None on a torch without it)."""
    value = getattr(torch._dynamo.config, "nested_graph_breaks", None)
    return value if isinstance(value, bool) else None


def settings_in_force() -> dict[str, Any]:
    """Dynamo's settings whose value differs from their default in this process (plain values
    only); {} on a torch whose config module keeps no defaults (feature-detected)."""
    import torch._dynamo.config as config

    entries = getattr(config, "_config", None)
    if not isinstance(entries, dict):
        return {}
    changed: dict[str, Any] = {}
    for name, entry in entries.items():
        if getattr(entry, "alias", None) or getattr(entry, "deprecated", False):
            continue  # an old name of another setting, or one that does nothing
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value, default = getattr(config, name, None), getattr(entry, "default", None)
        if isinstance(value, (bool, int, float, str)) and value != default and \
                not name.startswith("_"):
            changed[name] = value
    return changed
