"""Host code with a torch equivalent (``torch_equivalent``) and a Python container indexed by a
tensor's value (``tensor_lookup``): the break's Python computation done by torch ops instead.

* ``torch_equivalent``: ``math.isfinite(t)`` / ``isnan`` / ``isinf`` and ``math.sqrt`` … on a
  tensor become ``torch.isfinite(t)`` …; ``not`` over such a test becomes ``~``, and an ``if``
  whose test it is becomes ``torch.where`` (:mod:`.where`, both branches pure) in the same
  rewrite, since a tensor ``if`` would still break. ``t.untyped_storage().nbytes()`` becomes
  ``t.numel() * t.element_size()`` (equal when the tensor owns its whole storage, as a freshly
  computed one does; a view's storage is larger: the verifier compares outputs).
  ``t.apply_(lambda v: E)`` becomes ``t.copy_(E)`` with ``v`` read as ``t`` (a conditional
  expression as ``torch.where``, ``math.f`` as ``torch.f``, ``abs`` as ``torch.abs``); anything
  else in the lambda (a call, ``and``/``or``) is refused.
* ``tensor_lookup``: ``C[int(t)]``, ``C[t.item()]``, ``C[str(t.item())]`` where ``C`` is a
  dict, list, ``nn.ModuleDict`` or ``nn.ModuleList`` the class builds in ``__init__`` (or the
  module defines): every entry as one tensor (called on the same arguments when the entry is
  called), picked by the position of the tensor's value among the keys
  (``.index_select(0, torch.tensor(keys).eq(t).int().argmax().view(1))[0]``: indexing by a
  0-d tensor would read it as a Python int, a break again). Every entry is computed (a head per
  task: n
  times the work of one), and a value no key has picks the first entry where Python raised
  ``KeyError``; both are said in the title.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree
from .where import branch_to_where

_MATH = {"isfinite", "isnan", "isinf", "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1",
         "sin", "cos", "tan", "tanh", "floor", "ceil", "trunc", "fabs"}
_TORCH_NAME = {"fabs": "abs"}


def _torch_call(name: str, args: list[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name(_TORCH_NAME.get(name, name))),
                    args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])


def _math_name(call: cst.Call) -> str | None:
    name = get_full_name_for_node(call.func) or ""
    short = name.removeprefix("math.")
    return short if name.startswith("math.") and short in _MATH else None


class _Equivalents(cst.CSTTransformer):
    """Host calls on ``line`` replaced by their torch equivalents; what was replaced."""

    def __init__(self, t: Tree, line: int):
        self.t, self.line, self.done = t, line, []
        self._mapped: set[int] = set()

    def _on_line(self, node: cst.CSTNode) -> bool:
        return self.t.covers(node, self.line)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self._on_line(original):
            return updated
        name = _math_name(original)
        if name is not None and len(original.args) == 1:
            self.done.append(f"math.{name} -> torch.{_TORCH_NAME.get(name, name)}")
            new = _torch_call(name, list(updated.args))
            self._mapped.add(id(new))
            return new
        if m.matches(original, m.Call(func=m.Attribute(attr=m.Name("nbytes"), value=m.Call(
                func=m.Attribute(attr=m.Name("untyped_storage")))), args=[])):
            tensor = updated.func.value.func.value
            self.done.append("untyped_storage().nbytes() -> numel() * element_size()")
            return cst.BinaryOperation(
                cst.Call(func=cst.Attribute(tensor, cst.Name("numel"))), cst.Multiply(),
                cst.Call(func=cst.Attribute(tensor, cst.Name("element_size"))))
        if m.matches(original, m.Call(func=m.Attribute(attr=m.Name("apply_")))):
            return self._apply(original, updated)
        return updated

    def leave_UnaryOperation(self, original: cst.UnaryOperation,
                             updated: cst.UnaryOperation) -> cst.BaseExpression:
        if isinstance(updated.operator, cst.Not) and id(updated.expression) in self._mapped:
            return cst.UnaryOperation(cst.BitInvert(), updated.expression)  # a tensor's `not`
        return updated

    def _apply(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        tensor = updated.func.value
        if len(original.args) != 1 or not isinstance(original.args[0].value, cst.Lambda):
            raise Refuse("`apply_` is given a named function, not a lambda: its body cannot "
                         "be read here; vectorise it by hand")
        fn = original.args[0].value
        params = fn.params.params
        if len(params) != 1 or fn.params.star_arg != cst.MaybeSentinel.DEFAULT and \
                fn.params.star_arg is not None:
            raise Refuse("the lambda does not take exactly one value")
        body = _vectorised(fn.body, params[0].name.value, tensor)
        self.done.append("apply_(lambda) -> copy_(the lambda on the whole tensor)")
        return cst.Call(func=cst.Attribute(tensor, cst.Name("copy_")), args=[cst.Arg(body)])


_ALLOWED = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget,
            cst.Integer, cst.Float, cst.Name, cst.IfExp, cst.Call, cst.Arg, cst.Attribute,
            cst.LeftParen, cst.RightParen)


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def _vectorised(body: cst.BaseExpression, param: str, tensor: cst.BaseExpression
                ) -> cst.BaseExpression:
    """The lambda's body computed on the whole tensor (refused when it is not elementwise)."""
    for node in _walk(body):
        if isinstance(node, cst.BooleanOperation) or (
                isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)):
            raise Refuse("the lambda uses and/or/not; write it with & | ~ on tensors by hand")
        if isinstance(node, cst.Call) and _math_name(node) is None and \
                get_full_name_for_node(node.func) != "abs":
            raise Refuse(f"the lambda calls `{get_full_name_for_node(node.func) or '?'}`, "
                         "which has no elementwise torch form here")

    class Lift(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return tensor if updated.value == param else updated

        def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
            return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name("where")),
                            args=[cst.Arg(updated.test), cst.Arg(updated.body),
                                  cst.Arg(updated.orelse)])

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            name = _math_name(original) or ("abs" if get_full_name_for_node(original.func) ==
                                            "abs" else None)
            return _torch_call(name, list(updated.args)) if name else updated

    free = {n.value for n in m.findall(body, m.Name()) if n.value not in (param, "math", "abs")}
    if free:
        raise Refuse(f"the lambda reads {', '.join(sorted(free))} besides its value")
    return body.visit(Lift())


def torch_equivalent(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Replace the host calls on ``line`` by torch ops; an ``if`` whose test it was becomes
    ``torch.where``."""
    change = _Equivalents(t, line)
    module = t.module.visit(change)
    if not change.done:
        raise NotHere(f"no math.*, untyped_storage().nbytes() or apply_ call on line {line}")
    what = "; ".join(dict.fromkeys(change.done))
    nbytes = " (equal when the tensor owns its storage)" if "nbytes" in what else ""
    rewritten = Tree(module.code)
    test_if = [n for n in rewritten.pos if isinstance(n, cst.If)
               and rewritten.pos[n].start.line <= line <= rewritten.pos[n.test].end.line]
    if test_if:
        try:
            _, module = branch_to_where(rewritten, line)
        except Refuse as exc:
            raise Refuse(f"{what}, but the `if` on it would still break: {exc}") from None
        return f"{what}{nbytes}, and the `if` as torch.where", module
    return f"{what}{nbytes}", module


def propose_torch_equivalent(source: str, line: int, category: str, call: str | None
                             ) -> Rewrite:
    """The ``torch_equivalent`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "torch_equivalent", torch_equivalent)


# -- tensor_lookup ----------------------------------------------------------------------------

_DICTS = ("dict", "ModuleDict", "nn.ModuleDict", "torch.nn.ModuleDict", "ParameterDict",
          "nn.ParameterDict", "OrderedDict", "collections.OrderedDict")
_LISTS = ("list", "ModuleList", "nn.ModuleList", "torch.nn.ModuleList", "ParameterList",
          "nn.ParameterList", "tuple")


def _index_of(index: cst.BaseExpression
              ) -> tuple[cst.BaseExpression, cst.BaseExpression, bool] | None:
    """(the key as a tensor, the tensor, whether keys are strings) of ``int(t)`` (``t.long()``:
    both truncate), ``t.item()``, ``str(t.item())``, ``str(int(t))``; None for any other."""
    if m.matches(index, m.Call(func=m.Name("str"), args=[m.Arg()])):
        found = _index_of(index.args[0].value)
        return (found[0], found[1], True) if found and not found[2] else None
    if m.matches(index, m.Call(func=m.Name("int"), args=[m.Arg()])):
        tensor = index.args[0].value
        return cst.Call(func=cst.Attribute(tensor, cst.Name("long"))), tensor, False
    if m.matches(index, m.Call(func=m.Attribute(attr=m.Name("item")), args=[])):
        return index.func.value, index.func.value, False
    return None


def _container_kind(t: Tree, container: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """``dict`` or ``list``: what ``self.NAME`` (``__init__``) or a module-level ``NAME`` is
    assigned, read from the source; None when that cannot be told."""
    text = t.module.code_for_node(container).strip()
    cls = next((a for a in t.ancestors(at) if isinstance(a, cst.ClassDef)), None)
    scope = cls if text.startswith("self.") and cls is not None else t.module
    if text.startswith("self.") and cls is None:
        return None
    kinds = set()
    for assign in m.findall(scope, m.Assign()):
        if not any(t.module.code_for_node(target.target).strip() == text
                   for target in assign.targets):
            continue
        value = assign.value
        if isinstance(value, (cst.Dict, cst.DictComp)):
            kinds.add("dict")
        elif isinstance(value, (cst.List, cst.ListComp, cst.Tuple)):
            kinds.add("list")
        elif isinstance(value, cst.Call):
            name = get_full_name_for_node(value.func) or ""
            kinds.add("dict" if name in _DICTS else "list" if name in _LISTS else "?")
        else:
            kinds.add("?")
    return kinds.pop() if len(kinds) == 1 and "?" not in kinds else None


def tensor_lookup(t: Tree, line: int) -> tuple[str, cst.Module]:
    """``C[int(t)]`` (or called: ``C[str(t.item())](x)``) as every entry picked by a tensor
    index."""
    subs = [n for n in t.pos if isinstance(n, cst.Subscript) and t.covers(n, line)
            and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index)
            and _index_of(n.slice[0].slice.value) is not None]
    if not subs:
        raise NotHere(f"no container indexed by int(t), t.item() or str(...) on line {line}")
    sub = min(subs, key=t.depth)
    if t.context.get(sub) is not None and t.context.get(sub).name != "LOAD":
        raise Refuse("the container is assigned to at that index; only reads are rewritten")
    key, tensor, string_keys = _index_of(sub.slice[0].slice.value)
    container = sub.value
    kind = _container_kind(t, container, sub)
    if kind is None:
        raise Refuse(f"`{t.snippet(container)}` is not built as a dict or list in this file: "
                     "its keys cannot be read here")
    c = t.module.code_for_node(container).strip()
    keys = ("[int(k) for k in {c}]" if string_keys else "list({c})") if kind == "dict" \
        else "range(len({c}))"
    index = cst.parse_expression(
        f"torch.tensor({keys.format(c=c)}, device=_T.device).eq(_K).int().argmax().view(1)")
    index = index.visit(_Rename({"_T": tensor, "_K": key}))
    entries = f"{c}.values()" if kind == "dict" else c
    parent = t.parent.get(sub)
    called = isinstance(parent, cst.Call) and parent.func is sub
    if called:
        args = ", ".join(t.module.code_for_node(a).strip().rstrip(",") for a in parent.args)
        stacked = cst.parse_expression(f"torch.stack([entry({args}) for entry in {entries}])")
        target, what = parent, "every entry called, stacked"
    else:
        stacked = cst.parse_expression(
            f"torch.stack([torch.as_tensor(entry) for entry in {entries}])")
        target, what = sub, "every entry as one tensor"
    # index_select, not stacked[index]: indexing by a 0-d tensor reads it as a Python int
    new = cst.Subscript(
        value=cst.Call(func=cst.Attribute(stacked, cst.Name("index_select")),
                       args=[cst.Arg(cst.Integer("0")), cst.Arg(index)]),
        slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    title = (f"look up `{t.snippet(target)}` by a tensor index: {what}, picked by the "
             f"tensor's position among the keys (computes every entry; a value no key has picks "
             f"the first)")
    return title, t.module.deep_replace(target, new)


class _Rename(cst.CSTTransformer):
    def __init__(self, names: dict[str, cst.BaseExpression]):
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.names.get(updated.value, updated)


def propose_tensor_lookup(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``tensor_lookup`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "tensor_lookup", tensor_lookup)
