"""The verifying child's half of ``--fix`` (``FIX_JOB``): one planned fix applied to a fresh
copy of the target (its rewritten source imported from a temporary tree, a library switch set,
constants replaced, or a setting patched), the fixed model rescanned, its eager outputs compared
with the original's from the same random state, and both compiled models timed interleaved in
this process. The parent's half (planning, judging) is ``verify.py``."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from ..model.jobs import FixRequest
from ..model.result import FixedScan
from ..options import ScanOptions, TimingOptions
from ..rules.model import PathSetting, Switch
from ..sources import source_tree, target_file
from .gain import change, worth_timing
from .judge import metrics
from .observe import with_observed_fake
from .regional import FIX_ID as REGIONAL, cold_compiles
from .settings import resolved_config


def _forget_modules_in(folder: Path) -> None:
    """Drop modules imported from ``folder`` (and below) so the rewritten copies are imported."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve().is_relative_to(folder):
            del sys.modules[name]


def _copy_tree(target_file: Path, tmp: Path) -> tuple[Path, Path]:
    """Copy the target's Python sources into ``tmp``: its whole top package (keeping the
    package's name, so its dotted imports resolve to the copy), or a lone file's siblings.
    Returns (the original tree, where it now lives)."""
    tree = source_tree(target_file)
    if tree.package_dir is None:
        for sibling in tree.tree.glob("*.py"):  # the copy imports its siblings, not originals
            shutil.copy2(sibling, tmp / sibling.name)
        return tree.tree, tmp
    dest = tmp / tree.package_dir.name
    for source in (s for s in tree.package_dir.rglob("*.py") if "__pycache__" not in s.parts):
        copy = dest / source.relative_to(tree.package_dir)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copy)
    return tree.package_dir, dest


def _load_rewritten(target: str, load_kwargs: dict[str, Any], file: str, new_source: str,
                    original: Any, tmp: Path, removed: frozenset[str] = frozenset()) -> Any:
    from ..errors import ModelError, UsageError
    from ..pipeline.load import load_target

    own_file = target_file(target)
    if own_file is None:
        raise UsageError(f"not applicable: the file of {target} was not found")
    tree, copy = _copy_tree(own_file, tmp)
    (copy / Path(file).resolve().relative_to(tree)).write_text(new_source, encoding="utf-8")
    _forget_modules_in(tree)
    name = target.rpartition(":")[2]
    fixed = load_target(f"{copy / own_file.relative_to(tree)}:{name}", **load_kwargs)
    try:
        state = original.model.state_dict()
        if removed:  # constants made Python values: no longer in the state dict
            state = {k: v for k, v in state.items() if k.rpartition(".")[2] not in removed}
        fixed.model.load_state_dict(state)
    except (RuntimeError, KeyError) as exc:
        raise ModelError(f"the rewritten model's parameters differ from the original's: "
                         f"{' '.join(str(exc).split())[:200]}") from exc
    fixed.args, fixed.kwargs = original.args, original.kwargs  # the very same inputs
    return fixed


def switch_target(loaded: Any, switch: Switch) -> None:
    """Apply a library switch to a loaded target; UsageError when it does not apply."""
    import inspect

    from ..errors import UsageError, describe

    model = loaded.model
    path = switch.path
    if switch.warm_up:
        _warm_up(loaded)
        return
    if switch.as_list:
        _pass_as_lists(loaded, switch.as_list)
        return
    if path is not None and path.kind == "input":
        _pass_precomputed(loaded, path)
        return
    if path is not None:
        from .switches import set_switch

        if not set_switch(model, path):
            raise UsageError(f"not applicable: nothing on the built model has "
                             f"{path.attribute} to change")
    if switch.call is not None:
        name, value = switch.call
        setter = getattr(model, name, None)
        if setter is None:
            raise UsageError(f"not applicable: {type(model).__name__} has no {name}()")
        current = getattr(getattr(model, "config", None), "_" + name[len("set_"):], None)
        if current == value:
            raise UsageError(f"not applicable: the model already uses {value!r}")
        try:
            setter(value)
        except Exception as exc:
            raise UsageError(f"not applicable: {name}({value!r}) failed: {describe(exc)}") \
                from None
    if switch.kwargs:
        kwargs = dict(switch.kwargs)
        params = inspect.signature(loaded.fn).parameters
        if not all(k in params for k in kwargs) and not any(
                p.kind is p.VAR_KEYWORD for p in params.values()):
            raise UsageError(f"not applicable: {loaded.method}() takes no "
                             f"{', '.join(kwargs)}")
        loaded.kwargs = {**loaded.kwargs, **kwargs}
    if switch.compile_only is not None:
        from ..pipeline.call import compiled_part

        try:
            parts = compiled_part(model, switch.compile_only) or []
        except AttributeError:
            parts = []
        if not parts or not all(callable(getattr(o, m, None)) for o, m in parts):
            raise UsageError(f"not applicable: the model has no {switch.compile_only}()")
        loaded.compile_only = switch.compile_only


def _pass_as_lists(loaded: Any, names: tuple[str, ...]) -> None:
    """The named tensor inputs passed as Python lists, to every call (eager and compiled)."""
    import inspect

    from ..errors import UsageError
    from .input_forms import as_lists

    positional = list(inspect.signature(loaded.fn).parameters)
    try:
        loaded.args, loaded.kwargs = as_lists(loaded.args, loaded.kwargs, names, positional)
    except (KeyError, AttributeError) as exc:
        raise UsageError(f"not applicable: no tensor input {exc}") from None


def _warm_up(loaded: Any) -> None:
    """One eager call, as the user's warm-up would make before compiling: what the first call
    builds or sets (a table, a cached property, a flag) is there when Dynamo first traces."""
    from ..errors import UsageError, describe
    from ..pipeline.outputs import eager_call, reseed

    reseed()
    try:
        eager_call(loaded)
    except Exception as exc:  # the model's own failure: nothing to warm up with
        raise UsageError(f"not applicable: the warm-up call failed: {describe(exc)}") from None


def _pass_precomputed(loaded: Any, path: PathSetting) -> None:
    """The value the function on the break's path computed in an eager call (recorded as it
    returns), passed to the model as the keyword argument it accepts precomputed."""
    import inspect

    import torch

    from ..errors import UsageError
    from ..pipeline.outputs import eager_call, reseed

    name, (file, _, function) = path.attribute, path.computed_by
    params = inspect.signature(loaded.fn).parameters
    if name not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise UsageError(f"not applicable: {loaded.method}() takes no {name}")
    where = os.path.realpath(file)
    returned: list[Any] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "return" and not returned and code.co_name == function and \
                os.path.realpath(code.co_filename) == where:
            returned.append(arg)

    reseed()
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        eager_call(loaded)
    finally:
        sys.setprofile(previous)
        loaded.state.fresh()  # the model as built again: the scan's first call is its first
    if not returned or returned[0] is None:
        raise UsageError(f"not applicable: {function}() returned nothing to pass as {name}")
    value = returned[0]
    loaded.kwargs = {**loaded.kwargs, name: value.detach().clone()
                     if isinstance(value, torch.Tensor) else value}


def apply_constants(model: Any, spec: dict[str, tuple[str, ...]]) -> int:
    """Replace each named constant tensor attribute with its Python value, on every module of
    the named classes; returns how many were replaced."""
    replaced = 0
    for module in model.modules():
        names = spec.get(type(module).__qualname__, ())
        for name in names:
            value = getattr(module, name, None)
            if value is None or not hasattr(value, "tolist"):
                continue
            python = value.tolist()
            delattr(module, name)
            setattr(module, name, python)
            replaced += 1
    return replaced


def scan_with_fix(request: FixRequest, on_stage: Callable[[str, Any], None],
                  on_progress: Callable[[str], None] | None = None) -> FixedScan:
    """The isolated child's job: load the original, apply the requested fix, rescan and time;
    compare outputs."""
    import torch

    from ..errors import ModelError, UsageError, running_model
    from ..pipeline.interleaved import environment
    from ..pipeline.load import load_target
    from ..pipeline.outputs import compare_outputs, eager_reference
    from ..pipeline.scan import scan_loaded, shape_sets_for

    on_stage("load", None)
    original = load_target(request.target, **request.options.load_options)
    (fix, observed), target, options = with_observed_fake(request, original), request.target, \
        request.options
    with tempfile.TemporaryDirectory(prefix="breakscan-fix-",
                                     dir=os.environ.get("BREAKSCAN_WORK")) as tmp:
        fixed, changes, set_to, warmed = _fixed_copy(target, options.load_options, fix,
                                                     original, Path(tmp))
        sets = shape_sets_for(fixed, options.vary_batch, list(options.shapes))
        config = resolved_config(dict(fix.config))
        env = _switched_env(fix)
        try:
            with torch._dynamo.config.patch(**config), environment(env):
                result = scan_loaded(fixed, options.but(timing=None, compile_time=False),
                                     shape_sets=sets, on_stage=on_stage, on_progress=on_progress)
        except ModelError as exc:  # the change broke the model itself (eager)
            raise _broken_by_the_change(exc) from None
        # After the scan, which must capture the fixed model's first call.
        try:
            with running_model("the original's eager call"):
                reference, random = eager_reference(original)
            with running_model("the eager call with the fix"), environment(env):
                expected, fixed_random = eager_reference(fixed)
        except ModelError as exc:
            raise UsageError(f"not applicable: with it, the model fails: {exc}") from None
        drawn = [fix.changes] if fix.changes and fixed_random else []  # a rewrite's change
        found = FixedScan(result=result, same_outputs=compare_outputs(reference, expected),
                          random=random or fixed_random, set_to=set_to, changes=changes + drawn,
                          warmed=warmed, observed_fake=observed)
        # A switch (or rewrite) that changes what the model computes is proved against its own
        # eager run (time_interleaved compares each variant's compiled outputs with its own).
        judged = found.same_outputs.match or fix.kind == "switch" or bool(found.changes)
        regional = fix.fix_id == REGIONAL and result.compile_error is None  # judged on compile
        if judged and fix.before is not None and result.compile_error is None and (regional or
                worth_timing(change(fix.before, metrics(result, dynamic=bool(fix.dynamic))))):
            from ..dynamo.session import nested_graph_breaks
            from ..pipeline.interleaved import ORIGINAL_FAILS
            with nested_graph_breaks(options.nested_graph_breaks):
                found.ab, (found.baseline, found.compiled_outputs), found.compile_error = \
                    _time_against_original(original, fixed, fix, options, config,
                                           (reference, expected), found.random,
                                           on_stage=lambda name: on_stage(name, result),
                                           on_progress=on_progress)
                found.cold_compile_s = cold_compiles(original, fixed, options, sets, fix.dynamic) \
                    if regional or fix.dynamic else None  # what compiling less saves
            if found.compile_error == ORIGINAL_FAILS:
                found.compile_error, found.rescued = None, True
    return found


def _broken_by_the_change(exc: Exception) -> Exception:
    """The fixed model failed where the original ran: the change is the cause, not the inputs."""
    from ..errors import UsageError
    from ..pipeline.capture import INPUT_HINT

    return UsageError("not applicable: with it, the model fails (the original runs with the "
                      f"same inputs): {str(exc).replace(INPUT_HINT, '')}")


def _switched_env(fix: FixRequest) -> dict[str, str]:
    """An environment switch's variable, set only around the fixed model (never the original:
    both live in the child's one process)."""
    path = fix.switch.path if fix.switch else None
    return {path.attribute: str(path.value)} if path and path.kind == "env" else {}


def _fixed_copy(target: str, load: dict[str, Any], fix: FixRequest, original: Any,
                tmp: Path) -> tuple[Any, list[str], str | None, list[str]]:
    """The target with the fix applied: the rewritten copy, or a second copy (same seed: same
    weights) switched or with its constants replaced; the original itself for a setting. With
    it, what a switch changes, the value a flipped attribute now has, and what a warm-up call
    changed on the model."""
    from ..errors import UsageError
    from ..pipeline.load import load_target
    from ..pipeline.state import CallState, ModelState

    fixed = original
    changes: list[str] = []
    set_to = None
    warmed: list[str] = []
    if fix.kind == "source":
        removed = frozenset(a for _, attrs in fix.constants for a in attrs)
        fixed = _load_rewritten(target, load, fix.file, fix.new_source, original, tmp, removed)
    elif fix.kind == "switch" and fix.switch is not None:
        fixed = load_target(target, **load)  # a second copy, same seed: same weights
        before = _structure(fixed.model)
        as_built = ModelState(fixed.model) if fix.switch.warm_up else None
        switch_target(fixed, fix.switch)
        changes = _structure_changes(before, _structure(fixed.model))
        warmed = as_built.changed() if as_built is not None else []
        path = fix.switch.path
        if path is not None and path.value == "flip" and path.kind == "attribute":
            from .switches import value_after

            set_to = repr(value_after(fixed.model, path))
    elif fix.kind == "library" and fix.file and fix.new_source is not None:
        from .library_patch import patch_model

        fixed = load_target(target, **load)  # a second copy, same seed: same weights
        patch_model(fixed.model, fix.file, fix.new_source, tmp)
    elif fix.kind == "constants":
        fixed = load_target(target, **load)
        if not apply_constants(fixed.model, dict(fix.constants)):
            raise UsageError("not applicable: no such attribute on the built model")
    if fix.kind in ("source", "library") and fix.switch is not None and fix.switch.around:
        from .hoist import call_inside  # the `with` the rewrite removed, entered by the caller

        call_inside(fixed, fix.switch.around)
    if fixed is not original:  # its state as the fix left it (weights loaded, switch set)
        fixed.state = CallState(fixed.model)
    return fixed, changes, set_to, warmed


Structure = tuple[dict[str, int], dict[str, bool], int]


def _structure(model: Any) -> Structure:
    """What a switch can take away from a model: its submodules (name -> parameter count),
    its parameters (name -> whether it learns), and how many modules are in training mode."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return {}, {}, 0
    modules = {name: sum(p.numel() for p in m.parameters()) for name, m in model.named_modules()
               if name}
    learning = {name: p.requires_grad for name, p in model.named_parameters()}
    return modules, learning, sum(m.training for m in model.modules())


def _structure_changes(before: Structure, after: Structure) -> list[str]:
    """What the switch changed in what the model computes or learns, in a person's words."""
    changes = []
    removed = [n for n in before[0] if n not in after[0]]
    gone = [n for n in removed if not any(n.startswith(g + ".") for g in removed)]
    if gone:
        params = sum(before[0][n] for n in gone)
        changes.append(f"removes {', '.join(gone[:3])}{' …' if len(gone) > 3 else ''} from the "
                       f"model ({params:,} parameters no longer used)")
    frozen = [n for n, learns in before[1].items() if learns and after[1].get(n) is False]
    if frozen:
        changes.append(f"stops {len(frozen)} parameter tensor(s) from learning "
                       f"(requires_grad False)")
    if after[2] < before[2]:
        changes.append(f"puts {before[2] - after[2]} module(s) in eval mode")
    return changes


def _time_against_original(original: Any, fixed: Any, fix: FixRequest, options: ScanOptions,
                           config: dict[str, Any], expected: tuple[Any, Any], random: bool,
                           on_stage: Callable[[str], None],
                           on_progress: Callable[[str], None] | None) -> tuple:
    """The original and the fixed model timed interleaved in this process (``time_interleaved``):
    the A/B timing, each one's compiled outputs vs its eager ``expected`` (original, fixed) and
    the compile error."""
    from ..pipeline.interleaved import Variant, time_interleaved

    def variant(loaded: Any, **how: Any) -> Variant:
        from ..pipeline.call import compiled_part

        only = compiled_part(loaded.model, loaded.compile_only)
        return Variant(loaded.fn, loaded.args, loaded.kwargs, compile_only=only,
                       state=loaded.state, **how)

    timing = options.timing or TimingOptions()
    dynamic = options.dynamic  # the user's setting, unless the fix is dynamic=True
    return time_interleaved(
        variant(original, dynamic=dynamic),
        variant(fixed, dynamic=fix.dynamic or dynamic, config=config,
                env=_switched_env(fix)),
        device=fixed.device, training=fixed.training, backend=timing.backend,
        mode=timing.mode, threads=timing.threads, max_run_time=timing.max_run_time,
        expected=expected, random=random, compile_options=dict(options.compile_options),
        on_stage=on_stage, on_progress=on_progress)
