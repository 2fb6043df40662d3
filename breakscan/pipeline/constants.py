"""The constants a model's own module classes keep in tensors (``module_constants``): 0-d values
and short integer vectors in buffers, frozen parameters and tensor attributes, with the line
that creates each. Read before the first call (a call may change them) and again after, so
``analyse`` can name the constant behind a break instead of the line that reads it.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..model.records import ModuleConstant

MAX_CONSTANT_ELEMENTS = 8  # "a handful of integers": a kernel size, strides, paddings


def module_constants(model: nn.Module) -> list[ModuleConstant]:
    """The constants the model's own module classes keep in tensors (buffers, parameters that
    do not train, plain tensor attributes): 0-d values and short integer vectors. torch's own
    modules are left out (a BatchNorm's step counter is state, not a constant)."""
    from ..frames import is_torch_file
    found: dict[tuple[str, str, str], ModuleConstant] = {}
    for module in model.modules():
        cls = type(module)
        try:
            file = inspect.getsourcefile(cls)
        except TypeError:
            file = None
        if file is None or is_torch_file(file):
            continue
        params = dict(module.named_parameters(recurse=False))
        buffers = dict(module.named_buffers(recurse=False))
        plain = {k: v for k, v in vars(module).items() if isinstance(v, torch.Tensor)}
        for kind, tensors in (("buffer", buffers), ("parameter", params), ("attribute", plain)):
            for name, tensor in tensors.items():
                try:
                    value = _constant_value(tensor)
                except Exception:  # a lazy module's uninitialized buffer, a tensor subclass
                    continue
                if value is None:
                    continue
                key = (file, cls.__qualname__, name)
                if key in found:
                    found[key].instances += 1
                    continue
                where = _created_at(cls, name)
                found[key] = ModuleConstant(
                    file=where[0] if where else file, cls=cls.__qualname__, attr=name,
                    kind=kind, value=value, line=where[1] if where else None,
                    code=where[2] if where else "",
                    classes=[c.__name__ for c in cls.__mro__ if c.__module__ and
                             c.__module__ != "torch" and
                             not c.__module__.startswith("torch.")])
    return list(found.values())


def _constant_value(tensor: torch.Tensor) -> Any:
    """The Python value of a tensor that holds a constant, else None."""
    if tensor.requires_grad or tensor.device.type == "meta" or tensor.is_complex():
        return None
    if tensor.dim() == 0:
        return tensor.item()
    if tensor.dim() == 1 and tensor.numel() <= MAX_CONSTANT_ELEMENTS and \
            not tensor.is_floating_point():
        return tensor.tolist()
    return None


def _created_at(cls: type, name: str) -> tuple[str, int, str] | None:
    """Where ``self.<name>`` is created: the first line (in ``__init__``, then the other methods)
    of the class or the first base class (in method resolution order) that has one of
    :func:`_creates`; the value may come through a helper or a lambda (``self.x = mk(v)``)."""
    import ast

    from ..frames import module_ast

    for owner in cls.__mro__:
        try:
            file = inspect.getsourcefile(owner)
        except TypeError:
            continue
        tree = module_ast(file) if file else None
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and
                     n.name == owner.__name__), None) if tree is not None else None
        if node is None:
            continue
        methods = sorted((m for m in node.body if isinstance(m, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef))),
                         key=lambda m: (m.name != "__init__", m.lineno))
        # The helpers a name may be handed to: the class's methods, the file's functions, the
        # lambdas and functions a method defines.
        helpers = {m.name for m in methods} | {f.name for f in tree.body if isinstance(
            f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for method in methods:
            local = helpers | {t.id for a in ast.walk(method) if isinstance(a, ast.Assign)
                               and isinstance(a.value, ast.Lambda) for t in a.targets
                               if isinstance(t, ast.Name)} | \
                {f.name for f in ast.walk(method) if isinstance(f, ast.FunctionDef)}
            lines = sorted(line for stmt in ast.walk(method)
                           for line in _creates(stmt, name, local))
            if lines:
                text = Path(file).read_text(encoding="utf-8").splitlines()
                return file, lines[0], text[lines[0] - 1].strip()
    return None


# Calls that create an attribute from a name they are handed.
_REGISTERS = frozenset({"register_buffer", "register_parameter", "setattr", "add_module"})


def _creates(node: Any, name: str, helpers: set[str] = frozenset()) -> list[int]:
    """The lines at which ``node`` creates ``self.<name>``: ``self.<name> = …`` (also one of
    several targets, ``self.a, self.b = …``); a call handed ``"<name>"`` as its first argument,
    to ``register_buffer``/``setattr(self, "<name>", …)`` or to one of ``helpers`` (a method,
    a function or a lambda of the file, which registers it); a loop over literals naming
    ``"<name>"`` whose body sets attributes by name."""
    import ast

    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [node.lineno] if any(
            isinstance(t, ast.Attribute) and t.attr == name and
            isinstance(t.value, ast.Name) and t.value.id == "self"
            for target in targets for t in ast.walk(target)) else []
    if isinstance(node, ast.Call):
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        args = node.args[1:] if callee == "setattr" else node.args
        named = args[:1] + [k.value for k in node.keywords if k.arg == "name"]
        own = isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and
                                             isinstance(func.value, ast.Name) and
                                             func.value.id == "self")
        return [node.lineno] if (callee in _REGISTERS or own and callee in helpers) and any(
            isinstance(a, ast.Constant) and a.value == name for a in named) else []
    if isinstance(node, ast.For) and any(
            isinstance(c, ast.Call) and not any(isinstance(a, ast.Constant) for a in c.args[:2])
            and getattr(c.func, "id", getattr(c.func, "attr", "")) in _REGISTERS
            for stmt in node.body for c in ast.walk(stmt)):
        return [c.lineno for c in ast.walk(node.iter)
                if isinstance(c, ast.Constant) and c.value == name][:1]
    return []
