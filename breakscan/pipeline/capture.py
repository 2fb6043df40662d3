"""Stage 2 — capture: one compiled model, called the way a user calls it, feeds everything.

A scan compiles the model once (the eager backend under explain's own graph-accumulating
backend) and calls that one compiled model, with no reset between the calls:

1. the **first call** is the first-call capture: explain's numbers come from it (they equal a
   bare ``torch._dynamo.explain`` of the fresh model), and during it breakscan records what
   explain throws away: the ``graph_breaks``/``recompiles`` log artifacts (the complete break
   list, including frames Dynamo skipped), the code objects Dynamo produced (bytecode hook, which
   names the resume function at every break) and the compilation metrics (skipped frames,
   recompile-limit hits), all through the hooks of ``dynamo.py``;
2. the **later call** runs what the first call compiled: what compiles anew on it is what only
   later calls hit, and which resume functions and skipped frames ran on it tells which of the
   first call's breaks later calls hit too;
3. the **counted calls** give the run-time counts (graph calls, returns to Python).

Between 1 and 2 the pipeline runs the model eagerly (``run_eager``), tracing which lines ran.
Nothing here interprets the data; see ``analyse`` and ``impact``.

A later or counted call that raises is judged by where it raised (``errors.raised_by_breakscan``),
never by calling again: the model's code failing at run time ends the scan (exit 3, its line),
torch.compile failing on the model (raised while compiling) is the scan's ``compile_error``, and
breakscan's own call counter failing leaves a note (the call made again without it).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from typing import Any, Callable, Iterator

import torch

from ..dynamo.backend import CaptureBackend, compile_model, count_by_key, python_calls
from ..dynamo.logs import dynamo_logs
from ..dynamo.regions import GraphCompile, record_regions
from ..dynamo.session import (bytecode_hook, clean_dynamo, clean_dynamo_state, dynamic_shapes,
                              log_breaks_again, read_metrics, recorded)
from ..errors import (BreakscanError, as_model_error, describe, no_grad_hint, raised_by_breakscan,
                      user_frame_hint)
from ..frames import frames_of, is_torch_file
from ..model.raw import (CallCounts, CodeEvent, CodeKey, RawCapture, RawFailure, RawLaterCall,
                         RawProgram, RawRegion, RawRuntime)
from .call import ModelCall
from .state import later_call_hint


@contextlib.contextmanager
def lines_run(files: set[str]) -> Iterator[dict[str, set[int]]]:
    """Record which lines of ``files`` execute (sys.settrace, other files are not traced).

    Lets a scan tell a static finding the run never reached ("not exercised by these inputs")
    from one it ran through.
    """
    executed: dict[str, set[int]] = {f: set() for f in files}
    if not files:
        yield executed
        return

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            executed[frame.f_code.co_filename].add(frame.f_lineno)
        return local

    def global_(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename in executed:
            executed[frame.f_code.co_filename].add(frame.f_lineno)
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        yield executed
    finally:
        sys.settrace(previous)


MAX_MODEL_OUTPUT = 1024 * 1024  # a result keeps the last MiB of what the model printed


def bounded_output(text: str) -> str:
    """A model's printed text as a result keeps it: its last :data:`MAX_MODEL_OUTPUT` characters
    (a result travels to the parent, the cache and a shard's file)."""
    if len(text) <= MAX_MODEL_OUTPUT:
        return text
    return (f"[breakscan kept the last {MAX_MODEL_OUTPUT:,} of {len(text):,} characters the "
            "model printed]\n" + text[-MAX_MODEL_OUTPUT:])


def run_eager(call: ModelCall, *, label: str,
              executed: dict[str, set[int]] | None = None, after_first: bool = False) -> str:
    """Run the model once without Dynamo so its own failures get a clean one-line error.

    ``executed`` (file -> line set) is filled with the lines of those files that ran.
    ``after_first``: the compiled first call with the same inputs ran, so a failure here is
    not the inputs' (no --input-shape hint; the error says so).
    """
    out = io.StringIO()
    grad = contextlib.nullcontext() if call.training else torch.no_grad()
    try:
        with grad, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
                lines_run(set(executed or ())) as seen:
            call.fn(*call.args, **call.kwargs)
        for file, lines in seen.items():
            executed[file] |= lines
    except BaseException as exc:
        if after_first:
            raise as_model_error(exc, f"{label} (call 2)", later_call_hint(call.state)) \
                from exc
        message = str(exc).lower()
        hint = ""
        floats = any(isinstance(a, torch.Tensor) and a.is_floating_point() for a in call.args)
        if floats and ("'indices'" in message or "embedding" in message):
            hint = " — the model's first layer takes token ids: pass --dtype int64"
        elif isinstance(exc, (RuntimeError, ValueError, IndexError)) and (
                "shape" in message or "size" in message):
            hint = INPUT_HINT
        hint = hint or no_grad_hint(exc, call.training)
        raise as_model_error(exc, label, hint) from exc
    return bounded_output(out.getvalue())


# Said of a shape error on the model's first eager run; never of a changed model (a fix) whose
# original ran with the same inputs.
INPUT_HINT = " — check --input-shape / --dtype against what the model expects"

RUNTIME_CALLS = 3  # calls counted after the first and the later call; counts are averaged


def raw_failure(exc: BaseException) -> RawFailure:
    """An exception as data (its text and traceback), for the analysis to read."""
    return RawFailure(type(exc).__name__, str(exc), frames_of(exc))


# torch.compile's compiling, as a traceback shows it: Dynamo converting a frame, the backend's
# compile; a Dynamo error whose traceback Dynamo cut ends at its entry, eval_frame.
_COMPILING = tuple(os.path.join("_dynamo", name) for name in ("convert_frame.py",
                                                             "output_graph.py"))
_DYNAMO_ENTRY = os.path.join("_dynamo", "eval_frame.py")


def raised_compiling(exc: BaseException) -> bool:
    """Was ``exc`` raised while torch.compile compiled the model (torch.compile fails on it),
    rather than by the model's code running?"""
    frames = [(f.file, is_torch_file(f.file)) for f in frames_of(exc)]
    if frames and frames[-1][1] and frames[-1][0].endswith(_DYNAMO_ENTRY):
        return True
    return any(torch and file.endswith(_COMPILING) for file, torch in frames)


@contextlib.contextmanager
def compiled_call(what: str, hint: str = "") -> Iterator[None]:
    """One call of the compiled model after the first: what the model's code raised while
    running leaves as a one-line ModelError naming its line (the model fails on this call;
    earlier calls ran). torch.compile failing on the model (:func:`raised_compiling`) and
    breakscan's own bug (``errors.raised_by_breakscan``) leave unchanged."""
    try:
        yield
    except BreakscanError:
        raise
    except (Exception, SystemExit) as exc:
        if raised_by_breakscan(exc, calling_model=True) or raised_compiling(exc):
            raise
        raise as_model_error(exc, what, hint) from exc


class ScanPass:
    """One compiled model and its calls (see the module's docstring); made by :func:`scan_pass`.

    ``failure`` is the first exception the compiled model raised: when the eager run of the
    same inputs succeeds, torch.compile fails on the model.
    """

    def __init__(self, call: ModelCall, *, verbose: bool, keep_inputs: bool = False) -> None:
        self._args, self._kwargs = call.args, call.kwargs
        self._state = call.state  # named in the error of a later call that fails
        self._training, self._verbose, self._dynamic = call.training, verbose, call.dynamic
        self.backend = CaptureBackend(keep_inputs)
        self.compiled = compile_model(call.fn, call.compile_only, backend=self.backend)
        self.failure: RawFailure | None = None
        self._metrics: list[Any] = []  # Dynamo's records read so far (a later read skips them)

    def _call(self, since: tuple[int, int, int], python: dict[CodeKey, int] | None = None
              ) -> tuple[RawCapture, BaseException | None, str | None]:
        """Call the compiled model once, recording what compiles on this call; ``python``
        gets the calls of every code object. Returns the records, the exception the model
        raised, and why breakscan's own counter failed (the call then made again without it)."""
        error = counter_error = None
        notes: list[str] = []
        with recorded(training=self._training, verbose=self._verbose, notes=notes) as session, \
                bytecode_hook(notes) as events, dynamic_shapes(self._dynamic):
            start = time.perf_counter()
            try:
                if python is None:
                    self.compiled(*self._args, **self._kwargs)
                else:
                    counts, counter_error = self._counting(
                        lambda key: True, 1, lambda _: "the compiled model's later call (call 2)")
                    python.update(counts)
            except BreakscanError:
                raise  # the model's code failed on this call (see compiled_call)
            except (Exception, SystemExit) as exc:
                # Dynamo failing on the model, or the model's own error (the eager run gives that
                # its clean one-line message); keep what the logs captured.
                error = exc
                if self.failure is None and isinstance(exc, Exception):
                    self.failure = raw_failure(exc)
            seconds = time.perf_counter() - start
            metrics = read_metrics(notes, self._metrics)
        explain = self.backend.output(since) if error is None else None
        return RawCapture(explain=explain,
                          explain_error=f"{describe(error)}{user_frame_hint(error)}"
                          if error is not None else None,
                          graph_break_logs=list(session.graph_break_logs),
                          recompile_logs=list(session.recompile_logs), code_events=list(events),
                          metrics=metrics, dynamo_log=list(session.dynamo_log),
                          model_output=bounded_output(session.output.getvalue()), seconds=seconds,
                          notes=notes), error, counter_error

    def first_call(self) -> RawCapture:
        """The fresh model's first compiled call: explain's output and every record it made."""
        raw, _, _ = self._call((0, 0, 0))
        return raw

    def first_graphs(self, count: int) -> list[tuple[Any, list[Any]]]:
        """The first call's graph modules with the example inputs each was compiled for."""
        return list(zip(self.backend.explain.graphs[:count], self.backend.inputs[:count]))

    def later_call(self) -> RawLaterCall:
        """The second call: what compiles anew on it, which graphs and which code ran."""
        log_breaks_again()  # a break the first call logged is logged in full when it recurs
        since = self.backend.mark()
        before = list(self.backend.calls)
        counts: dict[CodeKey, int] = {}
        raw, error, counter_error = self._call(since, counts)
        ran = sum(1 for i, n in enumerate(self.backend.calls)
                  if n > (before[i] if i < len(before) else 0))
        return RawLaterCall(raw, ran, counts, describe(error) if error is not None else None,
                            counter_error)

    def counted_calls(self, wanted: Callable[[CodeKey], bool]) -> RawRuntime:
        """A few more calls, counting graph calls and the calls of the code ``wanted`` accepts
        (resume functions, frames Dynamo skipped). A call the model's code fails on ends the
        scan (:func:`compiled_call`); one torch.compile fails on is the model's failure to
        compile; breakscan's counter failing leaves the counts unmeasured."""
        if self.failure is not None:
            return RawRuntime(0, 0, CallCounts(), error=self.failure.exception, failure=self.failure)
        before = list(self.backend.calls)
        graph_calls = sum(before)
        with recorded(training=self._training), dynamic_shapes(self._dynamic):
            try:
                counts, counter_error = self._counting(  # natural calls 3, 4, 5
                    wanted, RUNTIME_CALLS,
                    lambda n: f"the compiled model's counted call {n} of {RUNTIME_CALLS} "
                              f"(call {n + 2})")
            except BreakscanError:
                raise
            except Exception as exc:  # raised compiling: torch.compile fails on the model
                self.failure = raw_failure(exc)
                return RawRuntime(0, 0, CallCounts(), error=describe(exc), failure=self.failure)
        if counter_error is not None:
            return RawRuntime(0, 0, CallCounts(), error=f"breakscan's run-time counter failed, not the "
                                             f"model (it runs when called again): {counter_error}")
        each = [n - (before[i] if i < len(before) else 0) for i, n in enumerate(self.backend.calls)]
        return RawRuntime(RUNTIME_CALLS, sum(self.backend.calls) - graph_calls, counts,
                          each_graph=each)

    def _counting(self, wanted: Callable[[CodeKey], bool], calls: int,
                  what: Callable[[int], str]) -> tuple[CallCounts, str | None]:
        """``calls`` calls with the calls of ``wanted`` code counted: (the counts, why the
        counter failed). ``what(n)`` names the n-th call in a model's error. A call that
        raises is judged by where (:func:`compiled_call`), never by calling again: the model's
        failure propagates; breakscan's counter failing (its own line raised) drops the counts,
        and the call it broke is made again without it, so that call's records are whole."""
        number = 1
        try:
            with python_calls(wanted) as counts:
                for number in range(1, calls + 1):
                    with compiled_call(what(number), later_call_hint(self._state)):
                        self.compiled(*self._args, **self._kwargs)
            return counts, None
        except BreakscanError:
            raise
        except (Exception, SystemExit) as exc:
            if not raised_by_breakscan(exc, calling_model=True):
                raise  # torch.compile failed on the model (raised while compiling)
            counter_error = describe(exc)
        with compiled_call(what(number), later_call_hint(self._state)):
            self.compiled(*self._args, **self._kwargs)
        return CallCounts(), counter_error


@contextlib.contextmanager
def scan_pass(call: ModelCall, *, verbose: bool = False,
              keep_inputs: bool = False) -> Iterator[ScanPass]:
    """The scan's one compiled model, from clean Dynamo state to clean Dynamo state.

    ``call.compile_only=[(owner, method)]`` compiles only that method while ``call.fn`` runs
    eagerly; ``call.dynamic`` is the user's ``torch.compile(dynamic=...)``; ``keep_inputs`` keeps
    each graph's example inputs for :meth:`ScanPass.first_graphs` (``--kernels``).
    """
    with clean_dynamo():
        yield ScanPass(call, verbose=verbose, keep_inputs=keep_inputs)


class ProgramCapture:
    """Records a program while it runs; :meth:`snapshot` reads what it has so far (also when
    the program is stopped half-way)."""

    def __init__(self, recorder: Any, session_logs: tuple[list[str], list[str], list[str]],
                 events: list[CodeEvent], stacks: list[Any], notes: list[str],
                 output: io.StringIO | None, started: float) -> None:
        self._recorder = recorder
        self._logs = session_logs
        self._events = events
        self._stacks = stacks
        self._notes = notes
        self._output = output
        self._started = started

    def snapshot(self) -> RawProgram:
        breaks, recompiles, other = self._logs
        notes = list(self._notes)
        capture = RawCapture(
            explain=self._recorder.explain.output(), explain_error=None,
            graph_break_logs=list(breaks), recompile_logs=list(recompiles),
            code_events=list(self._events), metrics=read_metrics(notes), dynamo_log=list(other),
            model_output=bounded_output(self._output.getvalue()) if self._output else "",
            seconds=time.perf_counter() - self._started, notes=notes)
        regions = [RawRegion(r.name, r.kind, r.compiled_at, r.calls, r.graph_calls,
                             count_by_key(list(r.python_calls.values())), dict(r.graph_counts))
                   for r in list(self._recorder.regions)]
        return RawProgram(capture, regions, self._recorder.outside.graph_calls,
                          list(self._stacks))


@contextlib.contextmanager
def program_capture(*, capture_only: bool, verbose: bool, quiet: bool,
                    inspect: GraphCompile | None = None) -> Iterator[ProgramCapture]:
    """Record everything ``torch.compile`` does while the block runs a program, leaving the
    program as it is: its backend (unless ``capture_only``), its grad mode, warnings and
    output (``quiet``: its output is kept for the report instead); ``inspect`` (--kernels)
    watches each graph's compile (``record_regions``)."""
    notes: list[str] = []
    stacks: list[Any] = []
    output = io.StringIO() if quiet else None
    redirect = contextlib.ExitStack()
    if output is not None:
        redirect.enter_context(contextlib.redirect_stdout(output))
        redirect.enter_context(contextlib.redirect_stderr(output))
    clean_dynamo_state()
    with dynamo_logs(verbose, notes, recompile_stacks=stacks) as logs, \
            bytecode_hook(notes) as events, \
            record_regions(notes, capture_only=capture_only, inspect=inspect) as rec, \
            redirect:
        yield ProgramCapture(rec, logs, events, stacks, notes, output, time.perf_counter())
