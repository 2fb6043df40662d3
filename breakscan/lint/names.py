"""What the linted file's names are: its imports, classes, functions and loggers, read once.

The walker asks this index what a dotted name refers to through the imports (``F.relu`` ->
``torch.nn.functional.relu``), which method a class of the file (or a base class of the file)
defines, and what ``self.X`` holds from the class's own assignments, so that checks and call
following never re-read the whole tree. Pure ``ast``, no torch.
"""

from __future__ import annotations

import ast
import builtins
from typing import AbstractSet

from ..rules.bs003_print import LOGGER_NAMES

Function = ast.FunctionDef | ast.AsyncFunctionDef

_TORCH_NOT_TENSOR = ("torch._dynamo.", "torch.compiler.", "torch.jit.", "torch.cuda.",
                     "torch.backends.", "torch.distributed.", "torch.utils.", "torch.nn.",
                     "torch.overrides.", "torch.fx.", "torch.library.", "torch.onnx.")
# What ``X = <call>`` makes, for the checks that care (a lock, a random generator).
LOCK_TYPES = frozenset({"threading.Lock", "threading.RLock", "threading.Semaphore",
                        "threading.BoundedSemaphore", "threading.Condition",
                        "_thread.allocate_lock"})
_MADE_KINDS = {**{t: "lock" for t in LOCK_TYPES}, "torch.Generator": "generator"}
_TORCH_NOT_TENSOR_NAMES = frozenset({"Size", "device", "dtype", "finfo", "iinfo", "numel",
                                     "typename", "no_grad", "enable_grad", "inference_mode",
                                     "autocast", "manual_seed", "Generator"})


def torch_returns_tensor(qual: str) -> bool:
    """Whether calling the torch function with this dotted name gives a tensor."""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.nn.functional.") or qual in (
            "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
            "torch.nn.parameter.Buffer"):
        return True
    return not (qual.startswith(_TORCH_NOT_TENSOR) or last in _TORCH_NOT_TENSOR_NAMES
                or last.startswith(("is_", "get_", "set_", "has_")))


class FileNames:
    """The module-level names of one parsed file and what its classes are made of."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
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
        self._attrs: dict[str | None, dict[str, str]] = {}
        # module-level names bound to a lock or a generator: ``LOCK = threading.Lock()``
        self.made: dict[str, str] = {
            t.id: kind for node in tree.body if isinstance(node, ast.Assign)
            and (kind := self.made_kind(node.value)) for t in node.targets
            if isinstance(t, ast.Name)}

    def qual(self, node: ast.AST, local: AbstractSet[str] = frozenset()) -> str | None:
        """Dotted name an expression refers to through the imports (None: a local/unknown);
        ``local``: the names the function being linted binds itself."""
        if isinstance(node, ast.Name):
            if node.id in local or node.id in self.functions or node.id in self.classes:
                return None
            if node.id in self.aliases:
                return self.aliases[node.id]
            return node.id if hasattr(builtins, node.id) else None  # a global: unknown
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value, local)
            return f"{base}.{node.attr}" if base else None
        return None

    def made_kind(self, value: ast.AST, local: AbstractSet[str] = frozenset()) -> str | None:
        """"lock" or "generator" when ``value`` makes one (``torch.Generator().manual_seed(0)``
        too: the seeding returns the generator), else None."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "manual_seed" and isinstance(value.func.value, ast.Call):
            value = value.func.value
        if not isinstance(value, ast.Call):
            return None
        return _MADE_KINDS.get(self.qual(value.func, local) or "")

    def is_get_logger(self, node: ast.AST, local: AbstractSet[str] = frozenset()) -> bool:
        return isinstance(node, ast.Call) and self.qual(node.func, local) == "logging.getLogger"

    def mro(self, name: str | None) -> list[str]:
        """The class and its bases defined in this file, nearest first."""
        order: list[str] = []
        stack = [name] if name in self.classes else []
        while stack:
            cls = stack.pop(0)
            if cls not in order:
                order.append(cls)
                stack += [b.id for b in self.classes[cls].bases
                          if isinstance(b, ast.Name) and b.id in self.classes]
        return order

    def is_module_class(self, name: str) -> bool:
        for cls in self.mro(name):
            for base in self.classes[cls].bases:
                qual = self.qual(base) or ""
                if ast.unparse(base).endswith("Module") or qual.startswith("torch.nn."):
                    return True
        return False

    def method(self, cls: str | None, name: str, skip: int = 0) -> tuple[str, Function] | None:
        """(the class that defines it, the def) of ``cls.name`` (``skip``: from a base on)."""
        for owner in self.mro(cls)[skip:]:
            for node in self.classes[owner].body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return owner, node
        return None

    def class_attrs(self, cls: str | None) -> dict[str, str]:
        """``self.X`` kinds from assignments in the class: tensor, logger or class:<Local>."""
        if cls not in self._attrs:
            attrs: dict[str, str] = {}
            for owner in reversed(self.mro(cls)):
                for node in ast.walk(self.classes[owner]):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in ("register_buffer", "register_parameter") \
                            and node.args and isinstance(node.args[0], ast.Constant):
                        attrs[str(node.args[0].value)] = "tensor"
                    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                        continue
                    kind = self._made_kind(node.value)
                    for target in node.targets:
                        if kind and isinstance(target, ast.Attribute) \
                                and ast.unparse(target.value) == "self":
                            attrs[target.attr] = kind
            self._attrs[cls] = attrs
        return self._attrs[cls]

    def _made_kind(self, value: ast.Call) -> str | None:
        """What ``self.X = value`` holds: ``class:Local``, ``items:Local`` (a ``ModuleList`` of
        them), ``logger``, ``tensor`` (a torch call), or None (unknown)."""
        qual = self.qual(value.func) or ""
        if isinstance(value.func, ast.Name) and value.func.id in self.classes:
            return f"class:{value.func.id}"
        if (held := self._held_class(value, qual)) is not None:
            return f"items:{held}"
        if self.is_get_logger(value):
            return "logger"
        if made := self.made_kind(value):
            return made
        if qual.startswith("torch.") and torch_returns_tensor(qual):
            return "tensor"
        return None

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
