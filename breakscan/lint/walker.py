"""Static pre-scan: source patterns that make TorchDynamo graph-break or recompile.

Reads the file with the stdlib ``ast`` only (no torch, no import of the model), so it takes
milliseconds and works on code that does not even import. It starts at ``forward`` of every
``nn.Module`` subclass (or at the class, ``Class.method`` or function named by ``only``) and
follows what that code calls in the same file: ``self.helper(...)``, ``self.sub(...)`` of a
submodule built from a class of this file, plain functions, nested ``def``s. Which values are
tensors is tracked per function, so ``if x.shape[0] > 8`` is told apart from ``if x.sum() > 0``.
This module is the walker; the checks, one small function per pattern and rule, are in
``lint_rules.py``.

A finding is a lead, not a verdict (``status="static"``): a scan confirms or clears it. What was
measured on torch 2.13 decides what is flagged: a tensor ``assert`` is rewritten by Dynamo into
``torch._assert_async`` (no break) unless its message is computed, and ``random.randint``,
``randrange`` and ``uniform`` are replayed by Dynamo (no break), so those are not reported.
"""

from __future__ import annotations

import ast
import builtins
import os
import warnings
from dataclasses import dataclass
from importlib.util import decode_source

from ..errors import UsageError
from ..result import StaticFinding
from .checks import (ASSERT_CHECKS, BRANCH_CHECKS, BREAK_CATEGORIES, CALL_CHECKS,
                         CALLEE_CHECKS, LOGGER_NAMES, LOOP_CHECKS, METHOD_CHECKS,
                         SUBSCRIPT_CHECKS)
from ..rules import rule_id

__all__ = ["lint_file", "lint_source", "BREAK_CATEGORIES", "Walker"]
_LOOP_NOTE = "inside a loop/try: Dynamo skips the whole function (frame runs eagerly)"
# Tensor attributes and methods whose value is metadata Dynamo knows at trace time, not data.
_META_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "is_cuda", "requires_grad", "layout",
                         "is_leaf", "names", "is_sparse", "is_quantized", "is_meta", "itemsize",
                         "nbytes"})
_SCALAR_METHODS = frozenset({"size", "dim", "numel", "ndimension", "nelement", "element_size",
                             "get_device", "stride", "storage_offset", "data_ptr", "item",
                             "tolist", "numpy", "type", "__len__"})
_SCALAR_BUILTINS = frozenset({"len", "isinstance", "issubclass", "hasattr", "callable", "id",
                              "str", "repr", "int", "float", "bool", "range", "enumerate", "zip",
                              "list", "tuple", "dict", "set", "print", "type"})
_TORCH_NOT_TENSOR = ("torch._dynamo.", "torch.compiler.", "torch.jit.", "torch.cuda.",
                     "torch.backends.", "torch.distributed.", "torch.utils.", "torch.nn.",
                     "torch.overrides.", "torch.fx.", "torch.library.", "torch.onnx.")
_TORCH_NOT_TENSOR_NAMES = frozenset({"Size", "device", "dtype", "finfo", "iinfo", "numel",
                                     "typename", "no_grad", "enable_grad", "inference_mode",
                                     "autocast", "manual_seed", "Generator"})
# nn.Module's own methods (inherited, so not in the file): they return no tensor.
_MODULE_METHODS = frozenset({"modules", "children", "parameters", "buffers", "named_modules",
                             "named_children", "named_parameters", "named_buffers", "state_dict",
                             "apply", "train", "eval", "to", "cpu", "cuda", "type", "extra_repr",
                             "get_submodule", "add_module", "register_module", "zero_grad",
                             "register_forward_hook", "register_forward_pre_hook"})
_CONTAINERS = frozenset({"int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "set",
                         "List", "Tuple", "Dict", "Set", "Sequence", "Mapping", "Iterable",
                         "Callable", "None", "complex"})


_HOOK_REGISTRATIONS = ("register_forward_hook", "register_forward_pre_hook")


@dataclass(frozen=True)
class _Job:
    """One function to lint, and how it was reached."""

    cls: str | None  # the class ``self`` is an instance of (None: a plain function)
    func: ast.FunctionDef | ast.AsyncFunctionDef
    label: str  # "Class.method" or "function"
    method: bool = False  # called on self: its first parameter is self
    loop_site: int | None = None  # line of the call inside a loop/try that reached it
    outer: frozenset = frozenset()  # tensor names of the enclosing function (nested defs)


def _last_name(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _operands(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    return [node.body, node.orelse] if isinstance(node, ast.IfExp) else []


def _torch_returns_tensor(qual: str) -> bool:
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.nn.functional.") or qual in ("torch.nn.Parameter",
                                                          "torch.nn.parameter.Parameter"):
        return True
    return not (qual.startswith(_TORCH_NOT_TENSOR) or last in _TORCH_NOT_TENSOR_NAMES
                or last.startswith(("is_", "get_", "set_", "has_")))


class Walker(ast.NodeVisitor):
    """Visits one function at a time from a work list (callees are queued, not recursed into),
    tracking which local names hold tensors, and collects one finding per (line, category)."""

    def __init__(self, tree: ast.Module, source: str, path: str):
        self.path = path
        self.tree = tree
        self.lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.found: dict[tuple[int, str], tuple[StaticFinding, bool]] = {}
        self.locals: set[str] = set()
        self.aliases: dict[str, str] = {}  # local name -> what it was imported as
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    root = a.name.split(".")[0]
                    self.aliases[a.asname or root] = a.name if a.asname else root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        self.functions = {n.name: n for n in tree.body if isinstance(n, defs)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.loggers = set(LOGGER_NAMES)
        for node in tree.body:
            if isinstance(node, ast.Assign) and self.is_get_logger(node.value):
                self.loggers.update(t.id for t in node.targets if isinstance(t, ast.Name))
        self._attrs: dict[str, dict[str, str]] = {}

    # -- the file's names ------------------------------------------------------------------
    def qual(self, node: ast.AST) -> str | None:
        """Dotted name an expression refers to through the imports (None: a local/unknown)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals or node.id in self.functions or node.id in self.classes:
                return None
            if node.id in self.aliases:
                return self.aliases[node.id]
            return node.id if hasattr(builtins, node.id) else None  # a global: unknown
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def is_get_logger(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and self.qual(node.func) == "logging.getLogger"

    def _mro(self, name: str | None) -> list[str]:
        order: list[str] = []
        stack = [name] if name in self.classes else []
        while stack:
            cls = stack.pop(0)
            if cls not in order:
                order.append(cls)
                stack += [b.id for b in self.classes[cls].bases
                          if isinstance(b, ast.Name) and b.id in self.classes]
        return order

    def _is_module_class(self, name: str) -> bool:
        for cls in self._mro(name):
            for base in self.classes[cls].bases:
                qual = self.qual(base) or ""
                if ast.unparse(base).endswith("Module") or qual.startswith("torch.nn."):
                    return True
        return False

    def _method(self, cls: str | None, name: str, skip: int = 0):
        for owner in self._mro(cls)[skip:]:
            for node in self.classes[owner].body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return owner, node
        return None

    def _class_attrs(self, cls: str | None) -> dict[str, str]:
        """``self.X`` kinds from assignments in the class: tensor, logger or class:<Local>."""
        if cls not in self._attrs:
            attrs: dict[str, str] = {}
            saved, self.locals = self.locals, set()
            for owner in reversed(self._mro(cls)):
                for node in ast.walk(self.classes[owner]):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in ("register_buffer", "register_parameter") \
                            and node.args and isinstance(node.args[0], ast.Constant):
                        attrs[str(node.args[0].value)] = "tensor"
                    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                        continue
                    value, kind = node.value, None
                    qual = self.qual(value.func) or ""
                    if isinstance(value.func, ast.Name) and value.func.id in self.classes:
                        kind = f"class:{value.func.id}"
                    elif (held := self._held_class(value, qual)) is not None:
                        kind = f"items:{held}"
                    elif self.is_get_logger(value):
                        kind = "logger"
                    elif qual.startswith("torch.") and _torch_returns_tensor(qual):
                        kind = "tensor"
                    for target in node.targets:
                        if kind and isinstance(target, ast.Attribute) \
                                and ast.unparse(target.value) == "self":
                            attrs[target.attr] = kind
            self.locals = saved
            self._attrs[cls] = attrs
        return self._attrs[cls]

    def _held_class(self, value: ast.Call, qual: str) -> str | None:
        """The class of this file whose instances an ``nn.ModuleList``/``nn.Sequential`` holds
        (``ModuleList(Block(d) for _ in range(n))``, ``[Block() for …]``, ``Sequential(A(), A())``)."""
        if qual.rsplit(".", 1)[-1] not in ("ModuleList", "Sequential") or \
                not (qual.startswith("torch.nn.") or qual in ("ModuleList", "Sequential")):
            return None
        made = []
        for arg in value.args:
            items = [arg.elt] if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) else \
                arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
            made += [i.func.id for i in items if isinstance(i, ast.Call)
                     and isinstance(i.func, ast.Name) and i.func.id in self.classes]
        return made[0] if made and len(set(made)) == 1 else None

    # -- running ---------------------------------------------------------------------------
    def run(self, only: str | None) -> list[StaticFinding]:
        self.queue: list[_Job] = []
        if only is None:
            for name in self.classes:
                if self._is_module_class(name) and (hit := self._method(name, "forward")):
                    self.queue.append(_Job(name, hit[1], f"{hit[0]}.forward", True))
        else:
            cls, _, method = only.partition(".")
            if cls in self.classes:
                if hit := self._method(cls, method or "forward"):
                    self.queue.append(_Job(cls, hit[1], f"{hit[0]}.{hit[1].name}", True))
            elif only in self.functions:
                self.queue.append(_Job(None, self.functions[only], only))
            else:
                raise UsageError(f"{self.path} has no class or function named {only!r}")
        self.queue += self._hooks({job.cls for job in self.queue})
        seen: set = set()
        while self.queue:
            job = self.queue.pop(0)
            key = (job.cls, id(job.func), job.loop_site is not None)
            if key not in seen:
                seen.add(key)
                self._lint_function(job)
        items = sorted(self.found.values(), key=lambda f: (f[0].line, f[0].category))
        return [finding for finding, _ in items]

    def _hooks(self, classes: set[str | None]) -> list[_Job]:
        """Forward hooks run inside the compiled call like forward itself: every function this
        file registers with ``register_forward_hook``/``register_forward_pre_hook`` (a module
        function, or a method of a class being linted), as a job of its own."""
        jobs = []
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                    node.func.attr in _HOOK_REGISTRATIONS and node.args):
                continue
            hook = node.args[0]
            if isinstance(hook, ast.Name) and hook.id in self.functions:
                jobs.append(_Job(None, self.functions[hook.id], hook.id))
            elif isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) and \
                    hook.value.id == "self":
                for cls in classes:
                    if cls is not None and (found := self._method(cls, hook.attr)):
                        jobs.append(_Job(cls, found[1], f"{found[0]}.{hook.attr}", True))
        return jobs

    def _lint_function(self, job: _Job) -> None:
        self.job, self.blocks, self.nested = job, 0, {}
        self.items: dict[str, str] = {}  # loop variable -> the class of the module it holds
        self.attrs = self._class_attrs(job.cls)
        args = job.func.args
        params = args.posonlyargs + args.args
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                     for d in job.func.decorator_list)
        if job.method and params and not static:
            params = params[1:]  # self (or cls)
        defaults = ([None] * len(params) + list(args.defaults))[-len(params):] if params else []
        kw = list(zip(args.kwonlyargs, args.kw_defaults))
        self.locals = {a.arg for a in params + args.kwonlyargs}
        self.locals |= {a.arg for a in (args.vararg, args.kwarg) if a}
        self.locals |= {n.id for n in ast.walk(job.func) if isinstance(n, ast.Name)
                        and isinstance(n.ctx, ast.Store)}
        if job.cls is not None:
            self.locals.add("self")
        self.tensors = set(job.outer) | {a.arg for a, d in list(zip(params, defaults)) + kw
                                         if self._tensor_param(a, d)}
        for stmt in job.func.body:
            self.visit(stmt)

    @staticmethod
    def _tensor_param(arg: ast.arg, default: ast.AST | None) -> bool:
        """Parameters are assumed tensors unless typed or defaulted as something else."""
        if default is not None and ast.unparse(default) != "None":
            return False
        node = arg.annotation
        while node is not None:  # Optional[T], T | None -> T
            if isinstance(node, ast.Subscript) and _last_name(node.value) == "Optional":
                node = node.slice
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) \
                    and ast.unparse(node.right) == "None":
                node = node.left
            else:
                break
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # "Tensor"
            return "Tensor" in node.value or node.value not in _CONTAINERS
        if isinstance(node, ast.Subscript):  # list[Tensor], Tuple[Tensor, Tensor]: a container
            node = node.value
        return node is None or _last_name(node) not in _CONTAINERS

    def _add(self, node: ast.AST, category: str, message: str) -> None:
        line = getattr(node, "lineno", 0)
        site = self.job.loop_site
        in_loop = category in BREAK_CATEGORIES and bool(self.blocks or site)
        if in_loop and self.blocks:
            message += f"; {_LOOP_NOTE}"
        elif in_loop:
            message += (f"; called from inside a loop/try (line {site}): Dynamo skips the whole "
                        "calling function (frame runs eagerly)")
        old = self.found.get((line, category))
        if old is None or (in_loop and not old[1]):
            code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
            finding = StaticFinding(rule=rule_id(category), category=category, file=self.path,
                                    line=line, code=code, function=self.job.label, message=message)
            self.found[(line, category)] = (finding, in_loop)

    # -- what is a tensor ------------------------------------------------------------------
    def is_self(self, node: ast.AST) -> bool:
        return self.job.cls is not None and isinstance(node, ast.Name) and node.id == "self"

    def kind(self, node: ast.AST) -> bool | None:
        """True: a tensor; False: surely not one (a number, shape, bool); None: unknown."""
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set,
                             ast.ListComp, ast.DictComp, ast.SetComp)):
            return False
        if isinstance(node, ast.Name):
            return True if node.id in self.tensors else None
        if isinstance(node, ast.Attribute):
            if self.is_self(node.value):
                return True if self.attrs.get(node.attr) == "tensor" else None
            if node.attr in _META_ATTRS:
                return False
            return True if node.attr in ("T", "mT", "H", "data", "grad", "real", "imag") \
                and self.kind(node.value) else None
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.kind(node.value)
        if isinstance(node, ast.UnaryOp):
            return False if isinstance(node.op, ast.Not) else self.kind(node.operand)
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.In,
                                                                 ast.NotIn)) for op in node.ops):
            return False
        if parts := _operands(node):  # any tensor operand makes a tensor
            kinds = [self.kind(p) for p in parts]
            return True if True in kinds else (False if all(k is False for k in kinds) else None)
        if isinstance(node, ast.NamedExpr):
            return self.kind(node.value)
        if isinstance(node, ast.Call):
            return self._call_kind(node)
        return None

    def _call_kind(self, node: ast.Call) -> bool | None:
        func, qual = node.func, self.qual(node.func)
        if qual:
            if qual in _SCALAR_BUILTINS:
                return False
            if qual == "abs" and node.args:
                return self.kind(node.args[0])
            return True if qual.startswith("torch.") and _torch_returns_tensor(qual) else None
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) \
                and self.is_self(func.value.value):
            return True  # self.layers[i](x): a submodule
        if not isinstance(func, ast.Attribute):
            return None
        if self.is_self(func.value):  # a submodule, unless it is a method
            known = self._method(self.job.cls, func.attr) or func.attr in _MODULE_METHODS
            return None if known else True
        if self.kind(func.value):
            return not (func.attr in _SCALAR_METHODS or func.attr.startswith("is_"))
        return None

    def tensor_test(self, test: ast.AST) -> bool:
        """Python must turn this test into a bool, and its value comes from tensor data."""
        if isinstance(test, ast.BoolOp):
            return any(self.tensor_test(v) for v in test.values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.tensor_test(test.operand)
        return self.kind(test) is True

    def tensor_size(self, node: ast.AST) -> bool:
        """``t.shape[i]``, ``t.size(i)``, ``t.size()[i]`` or ``len(t)`` of a tensor ``t``."""
        if isinstance(node, ast.Subscript):
            v = node.value
            if isinstance(v, ast.Attribute) and v.attr == "shape":
                return self.kind(v.value) is True
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
                    and v.func.attr == "size" and not v.args:
                return self.kind(v.func.value) is True
        if isinstance(node, ast.Call) and node.args:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "size":
                return self.kind(node.func.value) is True
            if self.qual(node.func) == "len":
                return self.kind(node.args[0]) is True
        return False

    # -- running the checks (lint_rules.py) ---------------------------------------------------
    def _run(self, table: list, node: ast.AST, *args: ast.AST | str, first: bool = False) -> bool:
        """Run a table of checks on ``node``; True when one reported (with ``first``, stop)."""
        reported = False
        for category, check in table:
            message = check(self, node, *args)
            if message is not None:
                self._add(node, category, message)
                reported = True
                if first:
                    break
        return reported

    def _check_test(self, node: ast.AST, test: ast.AST, what: str) -> None:
        self._run(BRANCH_CHECKS, node, test, what)

    def _compile_guard(self, test: ast.AST) -> str | None:
        """``if not torch.compiler.is_compiling():`` -> its body never runs under Dynamo.

        Also ``if cond and not torch.compiler.is_compiling():``: one false operand of an ``and``
        is enough to skip the body.
        """
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and \
                any(self._compile_guard(v) == "body" for v in test.values):
            return "body"
        neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        inner = test.operand if neg else test
        qual = self.qual(inner.func) if isinstance(inner, ast.Call) else None
        if qual and qual.startswith("torch.") and \
                qual.rsplit(".", 1)[-1] in ("is_compiling", "is_dynamo_compiling"):
            return "body" if neg else "orelse"
        return None

    def _follow(self, node: ast.Call) -> None:
        """Queue the function this call runs, when it is defined in this file."""
        func, job, hit = node.func, self.job, None
        if isinstance(func, ast.Name) and func.id in self.nested:
            hit = (job.cls, self.nested[func.id], f"{job.label}.{func.id}", False)
        elif isinstance(func, ast.Name) and func.id in self.functions \
                and func.id not in self.locals:
            hit = (None, self.functions[func.id], func.id, False)
        elif isinstance(func, ast.Name) and func.id in self.items:  # for block in self.blocks
            if found := self._method(self.items[func.id], "forward"):
                hit = (self.items[func.id], found[1], f"{found[0]}.forward", True)
        elif isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) \
                and self.is_self(func.value.value) and \
                (kind := self.attrs.get(func.value.attr, "")).startswith("items:"):
            if found := self._method(kind[6:], "forward"):  # self.blocks[i](x)
                hit = (kind[6:], found[1], f"{found[0]}.forward", True)
        elif isinstance(func, ast.Attribute) and self.is_self(func.value):
            if found := self._method(job.cls, func.attr):
                hit = (job.cls, found[1], f"{found[0]}.{func.attr}", True)
            elif (kind := self.attrs.get(func.attr, "")).startswith(("class:", "items:")):
                sub = kind[6:]  # a submodule, or an nn.Sequential of them: each runs forward
                if found := self._method(sub, "forward"):
                    hit = (sub, found[1], f"{found[0]}.forward", True)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            if found := self._method(job.cls, func.attr, skip=1):
                hit = (job.cls, found[1], f"{found[0]}.{func.attr}", True)
        if hit is None or self._run(CALLEE_CHECKS, node, hit[1], first=True):
            return  # a disabled function: calling it is the break, its body never traced
        site = job.loop_site or (node.lineno if self.blocks else None)
        outer = frozenset(self.tensors) if hit[1] in self.nested.values() else frozenset()
        self.queue.append(_Job(*hit, site, outer))

    # -- visitors --------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self._run(METHOD_CHECKS, node)
        if not self._run(CALL_CHECKS, node, first=True):
            self._follow(node)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        guard = self._compile_guard(node.test)
        if guard is None:
            self._check_test(node, node.test, "`if`")
        self.visit(node.test)
        for stmt in (node.body if guard != "body" else []) + \
                (node.orelse if guard != "orelse" else []):
            self.visit(stmt)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._check_test(node, node.test, "a conditional expression")
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._check_test(node, node.test, "`while`")  # measured: the test itself is no loop break
        self.visit(node.test)
        self._in_block(node.body)
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._run(LOOP_CHECKS, node, node.iter)
        it = node.iter
        if isinstance(it, ast.Call) and self.qual(it.func) == "enumerate" and it.args \
                and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2:
            self._bind(node.target.elts[0], False)
            self._bind(node.target.elts[1], self.kind(it.args[0]))
        else:
            self._bind(node.target, self.kind(it) if not isinstance(it, ast.Call) or
                       self.qual(it.func) != "range" else False)
        if isinstance(node.target, ast.Name) and isinstance(it, ast.Attribute) and \
                self.is_self(it.value) and \
                (held := self.attrs.get(it.attr, "")).startswith("items:"):
            self.items[node.target.id] = held[6:]  # for block in self.blocks: block(x)
        self._in_block(node.body)
        for stmt in node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_Try(self, node: ast.Try) -> None:
        self._in_block(node.body)
        for stmt in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def _in_block(self, body: list[ast.stmt]) -> None:
        self.blocks += 1
        for stmt in body:
            self.visit(stmt)
        self.blocks -= 1

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._run(SUBSCRIPT_CHECKS, node)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self._run(ASSERT_CHECKS, node)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._run(LOOP_CHECKS, node.iter, node.iter)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                for t, v in zip(target.elts, node.value.elts):
                    self._bind(t, self.kind(v))
            else:
                self._bind(target, self.kind(node.value))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind(node.target, self.kind(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if self.kind(node.value):
            self._bind(node.target, True)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind(node.target, self.kind(node.value))

    def _bind(self, target: ast.AST, kind: bool | None) -> None:
        """Record what a name now holds; an unknown value keeps what it held before."""
        if isinstance(target, ast.Name):
            if kind:
                self.tensors.add(target.id)
            elif kind is False:
                self.tensors.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, kind)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, kind)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.nested[node.name] = node  # linted only if called (see _follow)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        pass  # a class defined inside a function: not run by the call


def lint_source(source: str, filename: str, *, only: str | None = None) -> list[StaticFinding]:
    """Findings in ``source`` (sorted by line; one per line and category).

    ``only``: a class (its ``forward``), ``Class.method`` or a module-level function to start
    from instead of every nn.Module's ``forward``. Raises UsageError (one line) when the source
    is not valid Python or ``only`` names nothing in it.
    """
    try:
        with warnings.catch_warnings():  # the model's own SyntaxWarnings are not lint's to show
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        msg = " ".join(str(exc.msg).split())
        raise UsageError(f"{filename}: not valid Python (line {exc.lineno}): {msg}") from None
    except (RecursionError, MemoryError):
        raise UsageError(f"{filename}: code nested too deeply to lint") from None
    except ValueError as exc:  # e.g. null bytes
        raise UsageError(f"{filename}: not valid Python: {' '.join(str(exc).split())}") from None
    try:
        return Walker(tree, source, os.path.abspath(filename)).run(only)
    except RecursionError:
        raise UsageError(f"{filename}: code nested too deeply to lint") from None


def lint_file(path: str | os.PathLike, *, only: str | None = None) -> list[StaticFinding]:
    """Findings in the Python file at ``path`` (see lint_source).

    UsageError (one line) for a missing file, a directory, undecodable text or a SyntaxError.
    """
    name = os.fspath(path)
    if os.path.isdir(name):
        raise UsageError(f"{name} is a directory, not a Python file")
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        source = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError) as exc:
        raise UsageError(f"{name}: not valid Python source text: "
                         f"{' '.join(str(exc).split())}") from None
    return lint_source(source, name, only=only)
