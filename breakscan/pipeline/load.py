"""Stage 1 — load: turn ``FILE.py:NAME[.method]`` plus input options into a model and inputs.

Every failure here becomes a one-line :class:`UsageError` (exit 2: the command is wrong) or
:class:`ModelError` (exit 3: the model's own code raised). Loading never writes into the user's
folders: bytecode caching is off while their files are imported.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import re
import sys
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
from torch import nn

from ..errors import (ModelError, UsageError, as_model_error, describe, memory_limit_note,
                      out_of_memory, user_frame_hint)
from ..sources import SourceTree, source_tree
from ..target import (TargetSpec, check_source_file, missing_name_error, no_module_error,
                      parse_init_args, parse_inputs, parse_target)
from .inputs import check_arity, embedding_bound, make_tensor, to_device
from .state import CallState

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "float": torch.float32, "float64": torch.float64,
    "double": torch.float64, "float16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "long": torch.int64,
    "int32": torch.int32, "int": torch.int32, "bool": torch.bool,
}


@dataclass
class LoadedTarget:
    """What the capture stage needs: a callable bound to a built model, and its inputs."""

    spec: TargetSpec
    model: nn.Module
    method: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    device: torch.device
    training: bool
    search_paths: list[str] = field(default_factory=list)
    # Compile only this method of the model while ``fn`` runs eagerly (a library switch:
    # ``forward`` of a transformers model instead of all of ``generate``).
    compile_only: str | None = None
    # What its calls change on it (``state.py``): taken as built, before any call.
    state: CallState | None = None

    def __post_init__(self) -> None:
        if self.state is None:
            self.state = CallState(self.model)


def parse_dtype(text: str) -> torch.dtype:
    try:
        return DTYPES[text.lower()]
    except KeyError:
        raise UsageError(f"unknown --dtype {text!r}; choose one of "
                         f"{', '.join(sorted(set(DTYPES)))}") from None


def resolve_device(text: str) -> torch.device:
    text = text.lower()
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UsageError("--device cuda was asked for but this torch has no usable CUDA "
                             f"device (torch {torch.__version__}); use --device cpu or auto")
        return torch.device(text)
    if text == "cpu":
        return torch.device("cpu")
    raise UsageError(f"unknown --device {text!r}; choose cpu, cuda or auto")


@contextlib.contextmanager
def importable_folder(folder: str | None) -> Iterator[None]:
    """Make the target's folder importable and keep bytecode caches out of it."""
    saved_path = list(sys.path)
    saved_flag = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    if folder:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_flag


def _forget_other_tree(tree: SourceTree) -> None:
    """Drop an already imported package of the same name from another folder (a rewritten copy,
    another checkout), so the dotted import finds this tree's files."""
    top = (tree.module or "").split(".")[0]
    for name, module in list(sys.modules.items()):
        if name != top and not name.startswith(top + "."):
            continue
        file = getattr(module, "__file__", None)
        paths = [file] if file else list(getattr(module, "__path__", []) or [])
        if paths and not any(Path(p).resolve().is_relative_to(tree.package_dir)
                             for p in paths):
            del sys.modules[name]


@contextlib.contextmanager
def custom_ops_follow_redefinition() -> Iterator[None]:
    """Keep an earlier copy's custom operators callable when a module is imported again.

    A second copy of a target (a fix's copy, ``compare``'s other side) runs
    ``torch.library.custom_op`` again; torch then destroys the earlier definition of the same
    name, and calling it through the earlier copy's op object reads freed memory (a crash or
    ``ValueError: basic_string::_M_create`` on torch 2.13). Each earlier op object is pointed
    at the live definition (one definition per name per process is all torch keeps)."""
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:  # another torch: nothing to keep
        yield
        return
    replaced = dict(OPDEFS.items())  # the live definitions this import may replace
    for qualname, opdef in replaced.items():
        _EARLIER_OPDEFS.setdefault(qualname, weakref.WeakSet()).add(opdef)
    try:
        yield
    finally:
        for qualname, live in OPDEFS.items():
            earlier = _EARLIER_OPDEFS.setdefault(qualname, weakref.WeakSet())
            for old in earlier:
                if old is not live and hasattr(live, "_opoverload"):
                    old._opoverload = live._opoverload
            earlier.add(live)
            if replaced.get(qualname, live) is not live and \
                    _code(replaced[qualname]) != _code(live):
                REDEFINED_DIFFERENTLY.append(qualname)


_EARLIER_OPDEFS: dict[str, "weakref.WeakSet[Any]"] = {}  # every copy's op objects, by name
REDEFINED_DIFFERENTLY: list[str] = []
"""Custom ops each import defined again with other code, in order: earlier copies now run the
new code (``compare`` reads what loading B added)."""


def _code(opdef: Any) -> tuple:
    """What an op runs: its kernel's and fake's code (a function's identity differs per copy)."""
    functions = (getattr(opdef, "_init_fn", None), getattr(opdef, "_abstract_fn", None))
    return tuple((f.__code__.co_code, f.__code__.co_consts) if hasattr(f, "__code__") else None
                 for f in functions)


def import_source(source: str, is_file: bool, what: str = "target",
                  tree: SourceTree | None = None) -> Any:
    """Import a .py file (under a private module name, or by its dotted name inside its
    package: ``tree``) or a module by dotted name."""
    with custom_ops_follow_redefinition():
        return _import_source(source, is_file, what, tree)


def _import_source(source: str, is_file: bool, what: str, tree: SourceTree | None) -> Any:
    if not is_file or (tree is not None and tree.module):
        name = tree.module if is_file and tree is not None else source
        if is_file and tree is not None:
            check_source_file(source, what)
            _forget_other_tree(tree)
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if not is_file and exc.name and source.startswith(exc.name):
                raise no_module_error(source) from None
            raise ModelError(f"importing {source} failed: {describe(exc)}"
                             f"{user_frame_hint(exc)}") from exc
        except Exception as exc:  # the module's own code raised
            raise ModelError(f"importing {source} failed: {describe(exc)}"
                             f"{user_frame_hint(exc)}") from exc
    path = check_source_file(source, what)
    resolved = path.resolve()
    stem = re.sub(r"\W", "_", resolved.stem)
    module_name = stem if stem not in sys.modules else f"_breakscan_{stem}_{abs(hash(str(resolved)))}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {source} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        raise as_model_error(exc, f"importing {source}") from exc
    return module


def _candidates(module: Any) -> list[str]:
    """Names in ``module`` that could be scanned: module classes, instances, factories."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, nn.Module) or (
                inspect.isclass(value) and issubclass(value, nn.Module)
                and getattr(value, "__module__", None) == module.__name__):
            names.append(name)
        elif inspect.isfunction(value) and value.__module__ == module.__name__:
            names.append(name)
    return names


def _bind_or_fail(fn: Callable[..., Any], kwargs: dict[str, Any], label: str) -> None:
    try:
        inspect.signature(fn).bind(**kwargs)
    except TypeError as exc:
        raise UsageError(f"{label} does not accept these --init-args: {exc}") from None
    except ValueError:  # builtins without a signature: let the call decide
        pass


def build_model(module: Any, spec: TargetSpec, init_args: dict[str, Any]) -> nn.Module:
    """Instantiate NAME: a Module subclass, a zero-argument factory, or a built instance."""
    where = spec.source
    if not hasattr(module, spec.name):
        raise missing_name_error(spec, _candidates(module),
                                 "no nn.Module class, factory or instance")
    obj = getattr(module, spec.name)
    if isinstance(obj, nn.Module):
        if init_args:
            raise UsageError(f"{spec.name} is an already built module; --init-args cannot apply")
        return obj
    if inspect.isclass(obj) and issubclass(obj, nn.Module):
        label = f"{spec.name}.__init__"
    elif inspect.isclass(obj):
        raise UsageError(f"{spec.name} in {where} is a class but not an nn.Module subclass")
    elif callable(obj):
        label = f"factory {spec.name}()"
    else:
        raise UsageError(f"{spec.name} in {where} is a {type(obj).__name__}, not an nn.Module "
                         "class, factory function or module instance")
    _bind_or_fail(obj, init_args, label)
    try:
        built = obj(**init_args)
    except BaseException as exc:
        raise as_model_error(exc, f"building {spec.name}") from exc
    if not isinstance(built, nn.Module):
        raise UsageError(f"factory {spec.name}() returned {type(built).__name__}, "
                         "not an nn.Module")
    return built


def load_inputs_factory(text: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Call ``FILE.py:make_inputs`` and normalise its result to (args, kwargs)."""
    spec = parse_target(text)
    folder = str(Path(spec.source).resolve().parent) if spec.is_file else None
    with importable_folder(folder):
        module = import_source(spec.source, spec.is_file, what="--inputs")
    if not hasattr(module, spec.name):
        raise UsageError(f"--inputs: {spec.source} has no {spec.name!r}")
    factory = getattr(module, spec.name)
    if not callable(factory):
        raise UsageError(f"--inputs: {spec.name} is not callable")
    try:
        value = factory()
    except Exception as exc:
        raise ModelError(f"--inputs {spec.name}() failed: {describe(exc)}"
                         f"{user_frame_hint(exc)}") from exc
    if isinstance(value, dict):
        return (), value
    if isinstance(value, (tuple, list)):
        return tuple(value), {}
    if isinstance(value, torch.Tensor):
        return (value,), {}
    raise UsageError(f"--inputs {spec.name}() returned {type(value).__name__}; return a tensor, "
                     "a tuple of positional inputs or a dict of keyword inputs")


def load_target(target: str, *, input_shapes: list[str] | None = None, dtype: str = "float32",
                device: str = "cpu", inputs: str | None = None, init_args: str | None = None,
                method: str | None = None, train: bool = False, seed: int = 0) -> LoadedTarget:
    """Load the model and build its inputs; raise UsageError/ModelError with one-line text."""
    spec = parse_target(target)
    if method and spec.method and method != spec.method:
        raise UsageError(f"target names method {spec.method!r} but --method says {method!r}")
    method_name = method or spec.method or "forward"
    kwargs_init = parse_init_args(init_args)
    torch_dtype = parse_dtype(dtype)
    torch_device = resolve_device(device)
    shapes = parse_inputs(input_shapes, inputs)

    # A file inside a package is imported by its dotted name from the package's parent folder,
    # so its relative imports work (a lone file: from its own folder).
    tree = source_tree(check_source_file(spec.source)) if spec.is_file else None
    folder = str(tree.root) if tree else None
    with importable_folder(folder):
        module = import_source(spec.source, spec.is_file, tree=tree)
        torch.manual_seed(seed)
        model = build_model(module, spec, kwargs_init)

    fn = getattr(model, method_name, None)
    if fn is None or not callable(fn):
        methods = [m for m in ("forward", "infer", "generate") if hasattr(model, m)]
        raise UsageError(f"{spec.name} has no method {method_name!r}"
                         + (f"; it has {', '.join(methods)}" if methods else ""))
    try:
        model = model.to(torch_device)
    except Exception as exc:
        raise ModelError(f"moving {spec.name} to {torch_device} failed: {describe(exc)}") from exc
    model.train(train)

    torch.manual_seed(seed)
    if inputs:
        args, kwargs = load_inputs_factory(inputs)
        args, kwargs = to_device(args, torch_device), to_device(kwargs, torch_device)
    else:
        high = embedding_bound(model)
        try:
            args = tuple(make_tensor(s, torch_dtype, torch_device, high) for s in shapes)
        except (RuntimeError, TypeError, OverflowError, ValueError, MemoryError) as exc:
            what = ' and '.join(','.join(map(str, s)) for s in shapes)
            if out_of_memory(exc):
                raise ModelError(f"creating inputs of shape {what} ran out of memory"
                                 f"{memory_limit_note()}: use a smaller --input-shape or raise "
                                 "--memory-limit") from None
            raise UsageError(f"cannot create inputs of shape {what} ({describe(exc)}); use a "
                             "smaller --input-shape") from None
        kwargs = {}
    # A bound nn.Module method: call it through the module so hooks still run for forward.
    call = model if method_name == "forward" else fn
    check_arity(fn, args, kwargs, f"{spec.name}.{method_name}")
    return LoadedTarget(spec=spec, model=model, method=method_name, fn=call, args=args,
                        kwargs=kwargs, device=torch_device, training=train,
                        search_paths=[folder] if folder else [])


def input_sets(loaded: LoadedTarget, *, batches: list[int] | None = None,
               shape_sets: list[list[list[int]]] | None = None) -> list[tuple[Any, ...]]:
    """New positional inputs like the scanned ones (same dtype/device), one tuple per set.

    ``batches`` replaces dim 0 of every tensor input; ``shape_sets`` gives every shape.
    """
    templates = list(loaded.args)
    if not templates or not all(isinstance(t, torch.Tensor) for t in templates) or loaded.kwargs:
        raise UsageError("--vary-batch/--shapes need positional tensor inputs "
                         "(from --input-shape or an --inputs factory returning a tuple)")
    if batches is not None:
        if any(t.dim() == 0 for t in templates):
            raise UsageError("--vary-batch needs inputs with a batch dimension")
        shape_sets = [[[b, *t.shape[1:]] for t in templates] for b in batches]
    high = embedding_bound(loaded.model)
    sets = []
    for shapes in shape_sets or []:
        if len(shapes) != len(templates):
            raise UsageError(f"--shapes {' '.join(','.join(map(str, s)) for s in shapes)!r} "
                             f"gives {len(shapes)} input(s); the model takes {len(templates)}")
        sets.append(tuple(make_tensor(list(s), t.dtype, t.device, high)
                          for s, t in zip(shapes, templates)))
    return sets
