"""The pipeline: load → capture → analyse, returning one :class:`ScanResult`.

This is the Python API behind the CLI::

    from breakscan import scan
    result = scan("sample_models/item_logging.py:LogInsideForward", input_shapes=["8,16"])
    print(result.summary.graph_break_count, result.breaks[0].location())

Or, for a model already in memory, :func:`scan_callable`.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch

from ..analysis.analyse import analyse
from ..analysis.compile_error import apply_compile_error, compile_error
from ..analysis.impact import apply_costs, apply_later_call, apply_runtime, counted_code
from ..analysis.origins import link_module_constants
from ..analysis.recompiles import link_shape_branches
from ..dynamo.inductor import InspectingInductor
from ..dynamo.session import nested_graph_breaks, nested_in_force, settings_in_force
from ..frames import inner_site
from ..model.jobs import ScanRequest
from ..model.raw import RawCapture, RawFailure
from ..model.result import ScanResult
from ..model.verdicts import TimingReport
from ..options import ScanOptions, TimingOptions
from ..startup import torch_import_notices
from ..target import parse_input_sets
from .blocks import counting_blocks
from .call import ModelCall, model_call
from .compile_time import attribute_frames, measure_compile_time
from .capture import bounded_output, run_eager, scan_pass
from .constants import module_constants
from .inputs import describe_inputs, positional_names
from .kernels import apply_kernels, inspect_graphs, timed_compile_kernels, timing_inspector
from .load import LoadedTarget, importable_folder, input_sets, load_target
from .measure import FrameCosts, OnProgress, measure
from .recompiles import check_recompiles
from .static import cross_check, lint_model

OnStage = Callable[[str, "ScanResult | None"], None]


def no_progress(stage: str, result: ScanResult | None) -> None:
    pass


class StageClock:
    """An ``on_stage`` that also times the stages: each ends where the next begins, the last
    at :meth:`seconds`. What a scan spent, shown in every report."""

    def __init__(self, on_stage: OnStage | None = None) -> None:
        self._on_stage = on_stage or no_progress
        self._times: dict[str, float] = {}
        self._current: str | None = None
        self._started = 0.0

    def __call__(self, stage: str, result: ScanResult | None) -> None:
        if result is not None:  # a scan stopped in this stage reports the ones before it
            result.stages = self.seconds()
        self._stop()
        self._current, self._started = stage, time.perf_counter()
        self._on_stage(stage, result)

    def _stop(self) -> None:
        if self._current is not None:
            spent = time.perf_counter() - self._started
            self._times[self._current] = self._times.get(self._current, 0.0) + spent
            self._current = None

    def seconds(self) -> dict[str, float]:
        """Seconds per stage so far, in order (the running stage ends now)."""
        self._stop()
        return {name: round(spent, 3) for name, spent in self._times.items()}


def scan_loaded(loaded: LoadedTarget, options: ScanOptions = ScanOptions(), *,
                shape_sets: list[tuple[Any, ...]] | None = None,
                on_stage: OnStage | None = None,
                on_progress: OnProgress | None = None) -> ScanResult:
    """Capture and analyse a loaded target; ``shape_sets`` adds recompiles, ``options.timing``
    timings (``options.verbose`` and ``options.dynamic_check`` are read here too).

    ``on_stage(name, result_so_far)`` is called as each stage starts (the result is None until
    explain has been analysed): the isolated runner uses it to keep partial results.
    ``on_progress(text)`` hears progress within a stage (the runs of a timing).
    """
    with nested_graph_breaks(options.nested_graph_breaks):
        return _scan_loaded(loaded, options, shape_sets, on_stage, on_progress)


def _scan_loaded(loaded: LoadedTarget, options: ScanOptions,
                 shape_sets: list[tuple[Any, ...]] | None, on_stage: OnStage | None,
                 on_progress: OnProgress | None) -> ScanResult:
    progress = on_stage if isinstance(on_stage, StageClock) else StageClock(on_stage)
    call = model_call(loaded, options)
    folder = loaded.search_paths[0] if loaded.search_paths else None
    result, graphs = _capture(loaded, call, options, progress, folder)
    timing = options.timing
    with importable_folder(folder):
        if result.compile_error is not None and (shape_sets or timing):
            result.notes.append("recompiles and timings not measured: torch.compile fails on "
                                "the model (see the compile error)")
            shape_sets = timing = None
        # --time with Inductor and --kernels: the timed compile is the inspected one.
        inspector = timing_inspector(timing, call) if graphs and timing else None
        if options.compile_time and result.compile_error is None:
            # first of the Inductor compiles in this process, so that its cold run is cold
            _compile_time(result, call, timing, shape_sets, progress)
        if graphs and inspector is None:
            _kernels(result, graphs, call, progress)
        elif options.kernels and not result.graphs and result.compile_error is None:
            apply_kernels(result, [])  # no graph, no Inductor kernel: 0 is a measurement
        if shape_sets:
            _recompiles(result, call, shape_sets, options, progress)
        if timing:
            _timings(result, call, timing, progress, on_progress, inspector, graphs)
    if result.compile_time is not None:  # once the breaks are in their final (ranked) order
        attribute_frames(result, result.compile_time)
    result.stages = progress.seconds()
    if options.verbose:  # what torch said while being imported ("No CUDA runtime is found")
        result.dynamo_log.extend(torch_import_notices())
    return result


def _capture(loaded: LoadedTarget, call: ModelCall, options: ScanOptions, progress: StageClock,
             folder: str | None) -> tuple[ScanResult, list[tuple[Any, list[Any]]]]:
    """Lint, then the scan's one compiled model: its first call (explain), the eager run, its
    later call and the counted calls, analysed; with ``--kernels`` also the first call's graph
    modules and their example inputs."""
    progress("lint", None)
    static, lint_note = lint_model(loaded)
    executed: dict[str, set[int]] = {f.file: set() for f in static}
    constants = module_constants(loaded.model)  # before any call can change them
    progress("explain", None)
    with importable_folder(folder), \
            scan_pass(call, verbose=options.verbose, keep_inputs=options.kernels) as calls:
        # The first call of the fresh model is the one users' first compiled call makes: capture
        # it before anything else runs the model (a hook installed once, a warning issued once,
        # a lazily built buffer all take a Python path only that call takes).
        call.fresh()  # a switch's precomputing call left nothing behind
        raw = calls.first_call()
        if call.state is not None:
            call.state.after_first_call()
        result = _result(loaded, raw, options)
        # Eagerly: the model's own failures get a clean one-line error; lines run are traced.
        # A scan stopped here still reports the first call's capture (when explain ran).
        progress("eager run", result if raw.explain_error is None else None)
        for brk in result.breaks:  # did a break's line run again? (the later call reads it)
            executed.setdefault(brk.file, set())
            site = inner_site(brk)
            if site is not None:  # shown at the user's line, taken deeper (a library's lock)
                executed.setdefault(site.file, set())
        with counting_blocks(loaded.model) as result.repeated_blocks:  # regional compile
            printed = run_eager(call, label=f"{loaded.spec.name}.{loaded.method}",
                                executed=executed, after_first=raw.explain_error is None)
        result.model_output = bounded_output(printed + result.model_output)
        if call.state is not None:  # the eager run is the model's call 2: what changed again
            call.state.after_later_call()
            result.model_state = call.state.report()
            if result.model_state is not None:  # said once, in every format's notes
                result.notes.append(result.model_state.sentence())
        progress("later call", result)
        apply_later_call(result, calls.later_call(), executed)
        unchanged = {(c.cls, c.attr, repr(c.value)) for c in module_constants(loaded.model)}
        link_module_constants(result, [c for c in constants
                                       if (c.cls, c.attr, repr(c.value)) in unchanged])
        result.static = cross_check(static, result, executed)
        if lint_note:
            result.notes.append(lint_note)
        progress("run-time counts", result)
        runtime = calls.counted_calls(counted_code(result))
        graphs = calls.first_graphs(len(result.graphs)) if options.kernels else []
    if runtime.failure is not None:  # eager ran, the compiled call raised
        apply_compile_error(result, runtime.failure)
        graphs = []
    apply_runtime(result, runtime)
    return result, graphs


def _compile_time(result: ScanResult, call: ModelCall, timing: TimingOptions | None,
                  shape_sets: list[tuple[Any, ...]] | None, progress: StageClock) -> None:
    """--compile-time, the first of the scan's Inductor compiles (so that its cold run is
    cold); a compile that raises is a note, the rest of the scan goes on."""
    progress("compile time", result)
    mode = timing.mode if timing else None  # Inductor's, whatever --time's backend is
    try:
        result.compile_time = measure_compile_time(call, mode, shape_sets)
    except Exception as exc:
        result.notes.append(f"compile time not measured: torch.compile (backend=inductor) "
                            f"raised {describe(exc)}")
        return


def _kernels(result: ScanResult, graphs: list[tuple[Any, list[Any]]], call: ModelCall,
             progress: StageClock) -> None:
    """--kernels: each captured graph compiled once by Inductor; findings at the user's lines."""
    progress("kernels", result)
    apply_kernels(result, inspect_graphs(graphs, training=call.training, notes=result.notes))


def _recompiles(result: ScanResult, call: ModelCall, shape_sets: list[tuple[Any, ...]],
                options: ScanOptions, progress: StageClock) -> None:
    progress("recompiles", result)
    result.recompiles = check_recompiles(
        call.fn, shape_sets, training=call.training,
        dynamic_check=options.dynamic_check, dynamic=call.dynamic,
        on_stage=lambda name: progress(name, result))
    result.summary.recompile_count = len(result.recompiles.recompiles)
    link_shape_branches(result.recompiles, result.static)


def _timings(result: ScanResult, call: ModelCall, timing: TimingOptions, progress: StageClock,
             on_progress: OnProgress | None, inspector: InspectingInductor | None = None,
             graphs: list[tuple[Any, list[Any]]] | None = None) -> None:
    """Eager vs compiled; with ``inspector`` (--kernels, Inductor) the compiled variant's
    compile is also the inspection of the captured ``graphs``."""
    def timing_stage(name: str, report: TimingReport) -> None:
        result.timings = report
        progress(name, result)

    costs = FrameCosts()
    failures: list[RawFailure] = []
    result.timings = measure(call, timing, on_stage=timing_stage, on_progress=on_progress,
                             frame_costs=costs, backend=inspector, failures=failures)
    if failures and result.compile_error is None:  # eager and the capture ran, this raised
        result.compile_error = compile_error(failures[0])  # the capture's breaks all stay
        result.compile_error.backend = timing.backend
        return
    if result.timings.outside_s_per_call is not None:
        apply_costs(result, costs.gaps, costs.compile_s)
    if result.timings.fullgraph and result.summary.graph_break_count:
        result.timings.notes.append(
            "fullgraph=True compiled although a plain torch.compile breaks: it also "
            "turns on capture_scalar_outputs and capture_dynamic_output_shape_ops")
    if inspector is not None and graphs:
        found = timed_compile_kernels(result, inspector)
        if found is None:  # not the captured graphs: each compiled once more (a note says why)
            _kernels(result, graphs, call, progress)
        else:
            apply_kernels(result, found)


def _result(loaded: LoadedTarget, raw: RawCapture, options: ScanOptions) -> ScanResult:
    in_force = settings_in_force()
    found = analyse(raw, in_force)
    # A module's own signature is (*args, **kwargs); name the inputs after its method's.
    signature_of = getattr(loaded.fn, loaded.method, loaded.fn) \
        if isinstance(loaded.fn, torch.nn.Module) else loaded.fn
    return ScanResult.start(
        str(loaded.spec), found, torch_version=str(torch.__version__), method=loaded.method,
        device=str(loaded.device), training=loaded.training,
        inputs=describe_inputs(loaded.args, loaded.kwargs,
                               positional_names(signature_of, len(loaded.args))),
        compile_settings=dict(options.compile_settings, nested_graph_breaks=nested_in_force()),
        dynamo_settings=in_force,
        capture_seconds=round(raw.seconds, 4), notes=raw.notes, model_output=raw.model_output, dynamo_log=raw.dynamo_log)


def scan(target: str, options: ScanOptions | None = None, *,
         on_stage: OnStage | None = None, on_progress: OnProgress | None = None,
         **fields: Any) -> ScanResult:
    """Scan ``FILE.py:NAME[.method]`` (or ``pkg.mod:NAME``) and return the result.

    ``options`` is a :class:`~breakscan.options.ScanOptions`; its fields may also be given as
    keywords (``scan(target, input_shapes=["8,16"], vary_batch="1,4,16")``). ``vary_batch`` or
    ``shapes`` also call the compiled model with those inputs and report recompiles; ``timing``
    (a :class:`TimingOptions`) also times eager vs compiled execution.
    Raises :class:`breakscan.errors.UsageError` (exit 2) or :class:`ModelError` (exit 3).
    Runs in this process; :func:`breakscan.runs.runner.scan_isolated` runs it in a child process
    with a time limit, as the CLI does.
    """
    options = ScanOptions(**fields) if options is None else options.but(**fields)
    clock = StageClock(on_stage)
    clock("load", None)
    loaded = load_target(target, **options.load_options)
    sets = shape_sets_for(loaded, options.vary_batch, list(options.shapes))
    return scan_loaded(loaded, options, shape_sets=sets, on_stage=clock,
                       on_progress=on_progress)


def scan_job(request: ScanRequest, on_stage: OnStage, on_progress: OnProgress) -> ScanResult:
    """The isolated child's scan of ``request.target``."""
    return scan(request.target, request.options, on_stage=on_stage, on_progress=on_progress)


def shape_sets_for(loaded: LoadedTarget, vary_batch: str | list[int] | None,
                   shapes: list[str] | None) -> list[tuple[Any, ...]] | None:
    """The input sets of --vary-batch / --shapes: exactly the ones listed, in their order (one
    rule for both options; the scanned --input-shape is not added, so nothing is duplicated
    behind the user's back; a set listed twice is called twice, e.g. to show a recompile on
    every call)."""
    batches, shape_sets = parse_input_sets(vary_batch, shapes)
    if batches or shape_sets:
        return input_sets(loaded, batches=batches, shape_sets=shape_sets)
    return None


def scan_callable(model: torch.nn.Module | Callable[..., Any], *args: Any,
                  name: str | None = None, train: bool = False, verbose: bool = False,
                  timing: TimingOptions | None = None, dynamic: bool | None = None,
                  **kwargs: Any) -> ScanResult:
    """Scan a model (or any callable) already in memory with the given inputs."""
    from ..target import TargetSpec

    module = model if isinstance(model, torch.nn.Module) else torch.nn.Module()
    label = name or type(model).__name__
    source = getattr(type(model), "__module__", "<memory>")
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
    loaded = LoadedTarget(spec=TargetSpec(source=source, is_file=False, name=label, method=None),
                          model=module, method="forward", fn=model, args=args, kwargs=kwargs,
                          device=device, training=train)
    result = scan_loaded(loaded, ScanOptions(train=train, verbose=verbose, timing=timing,
                                             dynamic=dynamic))
    # Built by the caller: breakscan cannot know whether it has run before.
    result.captured_call = "first call breakscan made (the model may have run before)"
    return result


__all__ = ["scan", "scan_callable", "scan_loaded", "scan_job", "ScanOptions", "TimingOptions"]
