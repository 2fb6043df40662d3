"""Which functions of the file the lint walks: where it starts, and the calls it follows.

It starts at ``forward`` of every ``nn.Module`` subclass (or at the class, ``Class.method`` or
function named by ``only``), plus every forward hook the file registers, and follows what that
code calls in the same file: ``self.helper(...)``, ``self.sub(...)`` of a submodule built from a
class of this file (one, or a ``ModuleList``/``Sequential`` of them), ``super().f(...)``, plain
functions and nested ``def``s. Each function reached is a :class:`Job` on the walker's work list.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import UsageError
from .names import FileNames, Function
from .tensors import FunctionScope

_HOOK_REGISTRATIONS = ("register_forward_hook", "register_forward_pre_hook")


@dataclass(frozen=True)
class Job:
    """One function to lint, and how it was reached."""

    cls: str | None  # the class ``self`` is an instance of (None: a plain function)
    func: Function
    label: str  # "Class.method" or "function"
    method: bool = False  # called on self: its first parameter is self
    loop_site: int | None = None  # line of the call inside a loop/try that reached it
    outer: frozenset = frozenset()  # tensor names of the enclosing function (nested defs)


def first_jobs(names: FileNames, only: str | None, path: str) -> list[Job]:
    """Where the lint starts: every nn.Module's ``forward``, or what ``only`` names (a class,
    ``Class.method`` or a module-level function), then the forward hooks of those classes."""
    jobs: list[Job] = []
    if only is None:
        for name in names.classes:
            if names.is_module_class(name) and (hit := names.method(name, "forward")):
                jobs.append(Job(name, hit[1], f"{hit[0]}.forward", True))
    else:
        cls, _, method = only.partition(".")
        if cls in names.classes:
            if hit := names.method(cls, method or "forward"):
                jobs.append(Job(cls, hit[1], f"{hit[0]}.{hit[1].name}", True))
        elif only in names.functions:
            jobs.append(Job(None, names.functions[only], only))
        else:
            raise UsageError(f"{path} has no class or function named {only!r}")
    return jobs + _hooks(names, {job.cls for job in jobs})


def _hooks(names: FileNames, classes: set[str | None]) -> list[Job]:
    """Forward hooks run inside the compiled call like forward itself: every function this
    file registers with ``register_forward_hook``/``register_forward_pre_hook`` (a module
    function, or a method of a class being linted), as a job of its own."""
    jobs = []
    for node in ast.walk(names.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                node.func.attr in _HOOK_REGISTRATIONS and node.args):
            continue
        hook = node.args[0]
        if isinstance(hook, ast.Name) and hook.id in names.functions:
            jobs.append(Job(None, names.functions[hook.id], hook.id))
        elif isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) and \
                hook.value.id == "self":
            for cls in classes:
                if cls is not None and (found := names.method(cls, hook.attr)):
                    jobs.append(Job(cls, found[1], f"{found[0]}.{hook.attr}", True))
    return jobs


Callee = tuple[str | None, Function, str, bool]  # Job's cls, func, label, method


def callee(scope: FunctionScope, job: Job, func: ast.AST) -> Callee | None:
    """The function of this file that calling ``func`` from ``job`` runs, or None."""
    names = scope.names
    if isinstance(func, ast.Name):
        return _named_callee(scope, job, func.id)
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) \
            and scope.is_self(func.value.value) and \
            (kind := scope.attrs.get(func.value.attr, "")).startswith("items:"):
        if found := names.method(kind[6:], "forward"):  # self.blocks[i](x)
            return kind[6:], found[1], f"{found[0]}.forward", True
    elif isinstance(func, ast.Attribute) and scope.is_self(func.value):
        if found := names.method(job.cls, func.attr):
            return job.cls, found[1], f"{found[0]}.{func.attr}", True
        if (kind := scope.attrs.get(func.attr, "")).startswith(("class:", "items:")):
            sub = kind[6:]  # a submodule, or an nn.Sequential of them: each runs forward
            if found := names.method(sub, "forward"):
                return sub, found[1], f"{found[0]}.forward", True
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        if found := names.method(job.cls, func.attr, skip=1):
            return job.cls, found[1], f"{found[0]}.{func.attr}", True
    return None


def _named_callee(scope: FunctionScope, job: Job, name: str) -> Callee | None:
    """A nested def, a module-level function, or a loop variable holding a submodule."""
    if name in scope.nested:
        return job.cls, scope.nested[name], f"{job.label}.{name}", False
    if name in scope.names.functions and name not in scope.locals:
        return None, scope.names.functions[name], name, False
    if name in scope.items:  # for block in self.blocks
        if found := scope.names.method(scope.items[name], "forward"):
            return scope.items[name], found[1], f"{found[0]}.forward", True
    return None
