"""Dynamo's log records routed into lists while it runs, kept off the terminal.

Dynamo reports a graph break or a recompile only as a log record (the ``graph_breaks`` and
``recompiles`` artifacts); breakscan reads them from lists instead of stderr. The logging
internals are private: where they are missing the capture degrades to a note.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import traceback
from typing import Any, Iterator


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str], stacks: list[list[tuple[str, int, str]]] | None = None):
        super().__init__(logging.DEBUG)
        self.sink = sink
        self.stacks = stacks  # the Python stack at each record (who made the call that compiled)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                # The "frame skipped" variant carries the Unsupported message only here.
                text += "\n" + str(record.exc_info[1])
            self.sink.append(text)
            if self.stacks is not None:
                self.stacks.append([(f.filename, f.lineno or 0, f.name)
                                    for f in traceback.extract_stack()])
        except Exception:  # a log handler must never break the scan
            pass


def _logging_internal() -> Any | None:
    try:
        import torch._logging._internal as internal
    except ImportError:
        return None
    needed = ("log_registry", "_get_log_state", "_set_log_state")
    return internal if all(hasattr(internal, n) for n in needed) else None


@contextlib.contextmanager
def dynamo_logs(verbose: bool, notes: list[str],
                recompile_stacks: list[list[tuple[str, int, str]]] | None = None
                ) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Route Dynamo's break/recompile artifacts into lists; keep the rest off the terminal.

    Yields (graph_break_logs, recompile_logs, other_dynamo_log). With ``verbose`` Dynamo's own
    handlers stay in place so its messages also reach stderr. ``recompile_stacks`` gets the
    Python stack of each recompile record. Logging state is restored after.
    """
    breaks: list[str] = []
    recompiles: list[str] = []
    other: list[str] = []
    internal = _logging_internal()
    if internal is None:
        notes.append("torch._logging internals not found: graph-break log records unavailable; "
                     "breaks come from explain only")
        yield breaks, recompiles, other
        return
    saved_state = copy.deepcopy(internal._get_log_state())
    registry = internal.log_registry
    # "torch.__trace" is the structured trace (TORCH_TRACE); its DEBUG records must not reach a
    # host's handlers (pytest attaches its capture to it: dozens of empty lines per test).
    qnames = list(registry.get_log_qnames()) + list(registry.get_artifact_log_qnames()) + \
        ["torch.__trace"]
    saved = [(log, list(log.handlers), log.propagate, log.level)
             for log in map(logging.getLogger, qnames)]
    try:
        # What set_logs(graph_breaks=True, recompiles=True) turns on, without reconfiguring every
        # torch logger (a few ms per call) and also under the user's TORCH_LOGS (which makes
        # set_logs a no-op): the two artifacts (Dynamo formats their records only when they
        # are enabled) and their loggers' level.
        state = internal._get_log_state()
        state.enable_artifact("graph_breaks")
        state.enable_artifact("recompiles")
        if not os.environ.get("TORCH_TRACE"):  # no trace asked for: emit no trace records
            logging.getLogger("torch.__trace").setLevel(logging.WARNING)
        if not verbose:
            for qname in registry.get_log_qnames():
                log = logging.getLogger(qname)
                log.handlers = [_ListHandler(other)]
                log.propagate = False
        for qname in registry.get_artifact_log_qnames():
            if qname.endswith("__graph_breaks") or qname.endswith("__recompiles"):
                log = logging.getLogger(qname)
                sink = breaks if qname.endswith("__graph_breaks") else recompiles
                log.handlers = [_ListHandler(sink, None if sink is breaks else
                                             recompile_stacks)]
                log.setLevel(logging.DEBUG)
                log.propagate = verbose
        yield breaks, recompiles, other
    finally:
        # Put back the exact state, handlers and levels the process had.
        internal._set_log_state(saved_state)
        for log, handlers, propagate, level in saved:
            log.handlers = handlers
            log.propagate = propagate
            if log.level != level:  # setLevel clears every logger's cache: only when needed
                log.setLevel(level)
