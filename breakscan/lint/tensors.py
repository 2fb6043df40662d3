"""Which values hold tensors in the function being linted: its scope, as the checks read it.

A :class:`FunctionScope` is made per linted function: its local names, the names that hold a
tensor (parameters unless typed or defaulted otherwise, then every assignment), ``self.X`` kinds
of its class, its nested ``def``s and the loop variables that hold submodules. ``kind`` tells a
tensor (``x.sum()``) from metadata (``x.shape[0]``), so a check can tell ``if x.sum() > 0`` (a
data-dependent branch) from ``if x.shape[0] > 8``. It is what :mod:`breakscan.lint.checks`
reads through its ``Scope`` protocol.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .names import FileNames, Function, torch_returns_tensor

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
# nn.Module's own methods (inherited, so not in the file): they return no tensor.
_MODULE_METHODS = frozenset({"modules", "children", "parameters", "buffers", "named_modules",
                             "named_children", "named_parameters", "named_buffers", "state_dict",
                             "apply", "train", "eval", "to", "cpu", "cuda", "type", "extra_repr",
                             "get_submodule", "add_module", "register_module", "zero_grad",
                             "register_forward_hook", "register_forward_pre_hook"})
_SCALAR_REDUCTIONS = frozenset({"sum", "max", "min", "amax", "amin", "argmax", "argmin",
                                "count_nonzero", "prod"})
_CONTAINERS = frozenset({"int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "set",
                         "List", "Tuple", "Dict", "Set", "Sequence", "Mapping", "Iterable",
                         "Callable", "None", "complex"})


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


# Parameters named as flags or structures, untyped and defaulting to None in library code
# (transformers' `use_cache=None`, `past_key_values=None`): Python values, not tensors.
_NOT_A_TENSOR = re.compile(r"^(use|return|output|is|has|do|enable|disable)_|_(kwargs|config)$|"
                           r"^(training|config|kwargs|past_key_values?|encoder_outputs)$")

# Classes a library's outputs and caches are made of (transformers' BaseModelOutput, Cache).
_STRUCTURE = re.compile(r"(Output|Outputs|Cache)\b")


def tensor_param(arg: ast.arg, default: ast.AST | None) -> bool:
    """Parameters are assumed tensors unless typed, defaulted or named as something else."""
    if default is not None and ast.unparse(default) != "None":
        return False
    if _NOT_A_TENSOR.search(arg.arg):
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


@dataclass
class FunctionScope:
    """The names of one linted function and which of them hold tensors."""

    names: FileNames
    cls: str | None  # the class ``self`` is an instance of (None: a plain function)
    locals: set[str]  # names local to the function
    tensors: set[str]  # local names that hold a tensor now
    attrs: dict[str, str]  # the class's attributes: self.X -> "tensor", "items:…", …
    nested: dict[str, Function] = field(default_factory=dict)  # defs inside it, by name
    items: dict[str, str] = field(default_factory=dict)  # loop variable -> the module class it holds
    params: set[str] = field(default_factory=set)  # parameters not rebound yet (the inputs)
    scalars: set[str] = field(default_factory=set)  # names bound to a 0-d tensor of the data
    # names the function tests with isinstance() against a library's output or cache class
    # (transformers' BaseModelOutput): whatever they are bound to, they are not tensors
    structures: set[str] = field(default_factory=set)

    @classmethod
    def enter(cls, names: FileNames, owner: str | None, func: Function, *, method: bool,
              outer: frozenset = frozenset()) -> "FunctionScope":
        """The scope at the top of ``func`` (``method``: called on self, whose first parameter
        is self; ``outer``: the tensor names of the enclosing function, for a nested def)."""
        attrs = names.class_attrs(owner)
        args = func.args
        params = args.posonlyargs + args.args
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                     for d in func.decorator_list)
        if method and params and not static:
            params = params[1:]  # self (or cls)
        defaults = ([None] * len(params) + list(args.defaults))[-len(params):] if params else []
        kw = list(zip(args.kwonlyargs, args.kw_defaults))
        local = {a.arg for a in params + args.kwonlyargs}
        local |= {a.arg for a in (args.vararg, args.kwarg) if a}
        local |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}
        if owner is not None:
            local.add("self")
        structures = {n.args[0].id for n in ast.walk(func) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name) and n.func.id == "isinstance"
                      and len(n.args) == 2 and isinstance(n.args[0], ast.Name)
                      and _STRUCTURE.search(ast.unparse(n.args[1]))}
        tensors = set(outer) | {a.arg for a, d in list(zip(params, defaults)) + kw
                                if tensor_param(a, d)}
        return cls(names, owner, local, tensors - structures, attrs,
                   params={a.arg for a in params + args.kwonlyargs}, structures=structures)

    # -- the names a check reads -----------------------------------------------------------
    @property
    def loggers(self) -> set[str]:
        """Names bound to a logger in the file."""
        return self.names.loggers

    def qual(self, node: ast.AST) -> str | None:
        """Dotted name an expression refers to through the imports (None: a local/unknown)."""
        return self.names.qual(node, self.locals)

    def is_get_logger(self, node: ast.AST) -> bool:
        return self.names.is_get_logger(node, self.locals)

    def is_self(self, node: ast.AST) -> bool:
        return self.cls is not None and isinstance(node, ast.Name) and node.id == "self"

    # -- what is a tensor ------------------------------------------------------------------
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
            return True if qual.startswith("torch.") and torch_returns_tensor(qual) else None
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) \
                and self.is_self(func.value.value):
            return True  # self.layers[i](x): a submodule
        if not isinstance(func, ast.Attribute):
            return None
        if self.is_self(func.value):  # a submodule, unless it is a method
            known = self.names.method(self.cls, func.attr) or func.attr in _MODULE_METHODS
            return None if known else True
        if self.kind(func.value):
            return not (func.attr in _SCALAR_METHODS or func.attr.startswith("is_"))
        return None

    def computed(self, node: ast.AST) -> bool:
        """A tensor this function computed (not an input, a buffer or a parameter of it)."""
        if isinstance(node, ast.Name):
            return node.id in self.tensors and node.id not in self.params
        if isinstance(node, ast.Attribute) and self.is_self(node.value):
            return False
        return self.kind(node) is True

    def scalar_tensor(self, node: ast.AST) -> bool:
        """A one-number tensor computed from the data here: ``(h > 0).sum()``, ``lengths.max()``,
        ``n + 1`` of one, or a name bound to one (not a parameter, whose kind is a guess)."""
        if isinstance(node, ast.Name):
            return node.id in self.scalars
        if isinstance(node, ast.BinOp):
            return self.scalar_tensor(node.left) or self.scalar_tensor(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.scalar_tensor(node.operand)
        if not isinstance(node, ast.Call) or node.keywords:
            return False
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SCALAR_REDUCTIONS:
            return not node.args and self.kind(func.value) is True and self.qual(func) is None
        qual = self.qual(func) or ""
        return qual.startswith("torch.") and qual[6:] in _SCALAR_REDUCTIONS and \
            len(node.args) == 1 and self.kind(node.args[0]) is True

    def note(self, target: ast.AST, value: ast.AST) -> None:
        """After ``target = value``: whether the name now holds a one-number tensor."""
        if isinstance(target, ast.Name):
            if self.scalar_tensor(value):
                self.scalars.add(target.id)
            else:
                self.scalars.discard(target.id)

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

    def bind(self, target: ast.AST, kind: bool | None) -> None:
        """Record what a name now holds; an unknown value keeps what it held before."""
        if isinstance(target, ast.Name):
            self.params.discard(target.id)
            if kind and target.id not in self.structures:
                self.tensors.add(target.id)
            elif kind is False:
                self.tensors.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, kind)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, kind)
