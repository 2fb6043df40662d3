"""Inputs a library accepts in another form (issue 44 §3): a tensor of sizes that the library
turns into a Python list (LLaVA-NeXT's ``if not isinstance(image_size, (list, tuple)): …
image_size = image_size.tolist()``), passed as that list instead, so every ``.tolist()`` on it
disappears.

Planned here without torch: a break whose line calls ``X.tolist()`` in a function that tests
``isinstance(X, (list, tuple))`` or ``isinstance(X, torch.Tensor)`` (it takes both forms), on a
call chain through a function with a parameter named like one of the model's integer tensor
inputs. The verifying child passes that input as ``input.tolist()`` (:func:`as_lists`); the
outputs prove the library meant it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..frames import display_path, is_torch_file, module_ast
from .guards import class_and_function

_TOLIST = re.compile(r"\b([A-Za-z_]\w*)\.tolist\(\)")
_INTEGER = ("int8", "int16", "int32", "int64", "uint8")


@dataclass
class InputForm:
    """Pass the model's input ``name`` as a Python list; ``accepts``: where the library tests
    for that form ("file:line `test`"); ``sites``: the breaks it may remove."""

    name: str
    accepts: str
    sites: list[tuple[str, int]] = field(default_factory=list)


def input_forms(breaks: list[Any], inputs: list[Any]) -> list[InputForm]:
    """The inputs worth passing as lists, each with the breaks whose ``.tolist()`` it skips."""
    wanted = {i.name for i in inputs if getattr(i, "kind", "tensor") == "tensor" and
              (i.dtype or "").replace("torch.", "") in _INTEGER}
    found: dict[str, InputForm] = {}
    for brk in breaks if wanted else []:
        match = _TOLIST.search(brk.code or "")
        if match is None or not brk.file or is_torch_file(brk.file):
            continue
        accepts = _accepts_a_list(brk.file, brk.line, match.group(1))
        if accepts is None:
            continue
        for name in _inputs_on_chain(brk, wanted):
            form = found.setdefault(name, InputForm(name, accepts))
            form.sites.append((brk.file, brk.line))
    return sorted(found.values(), key=lambda f: -len(f.sites))


def _accepts_a_list(file: str, line: int, name: str) -> str | None:
    """Where the function holding ``line`` tests whether ``name`` is a list/tuple or a tensor;
    None when it does not (then a list would fail there)."""
    tree = module_ast(file)
    fn = class_and_function(tree, line)[1] if tree is not None else None
    if fn is None:
        return None
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "isinstance" and len(node.args) == 2 and \
                isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            kinds = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node.args[1])
                     if isinstance(n, (ast.Name, ast.Attribute))}
            if kinds & {"list", "tuple", "Tensor"}:
                return f"{display_path(file)}:{node.lineno} `{ast.unparse(node)}`"
    return None


def _inputs_on_chain(brk: Any, wanted: set[str]) -> list[str]:
    """The model inputs that reach the break: from the break's frame outwards, the first
    function with such an input among its parameters whose statement at the frame's line
    reads it (``get_anyres_image_grid_shape(image_sizes[image_idx], …)`` in
    ``pack_image_features(…, image_sizes, …)``); not the outer frames, which pass every input."""
    for frame in [brk] + list(reversed(brk.call_chain)):
        tree = module_ast(frame.file) if frame.file else None
        fn = class_and_function(tree, frame.line)[1] if tree is not None else None
        if fn is None:
            continue
        args = fn.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} & wanted
        statement = _statement_at(fn, frame.line)
        read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} \
            if statement is not None else set()
        if params & read:
            return sorted(params & read)
    return []


def _statement_at(fn: ast.AST, line: int) -> ast.AST | None:
    """The innermost statement of ``fn`` holding ``line`` (the whole call across its lines);
    of an ``if``/``for``/``while``/``with``, only its header."""
    best = None
    for node in ast.walk(fn):
        if isinstance(node, ast.stmt) and node is not fn and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    if isinstance(best, (ast.If, ast.While)):
        return best.test
    if isinstance(best, (ast.For, ast.AsyncFor)):
        return best.iter
    if isinstance(best, (ast.With, ast.AsyncWith)):
        return ast.Tuple([item.context_expr for item in best.items])
    return best


def as_lists(args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...],
             positional: list[str]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The same inputs with each named tensor as ``tensor.tolist()`` (``positional``: the
    names of the positional arguments, in order); KeyError for a name not among them."""
    args, kwargs = list(args), dict(kwargs)
    for name in names:
        if name in kwargs:
            kwargs[name] = kwargs[name].tolist()
        elif name in positional[:len(args)]:
            index = positional.index(name)
            args[index] = args[index].tolist()
        else:
            raise KeyError(name)
    return tuple(args), kwargs
