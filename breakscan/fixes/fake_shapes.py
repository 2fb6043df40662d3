"""The fake of an escape hatch (fixes/escape.py): the input a helper's result has the shape of,
and its dtype, read from the helper's source (no torch, no run).

``return torch.from_numpy(np.interp(x.detach().cpu().numpy(), xs, ys).astype(np.float32))``
is shaped like ``x`` with dtype float32, so its fake is ``torch.empty_like(x,
dtype=torch.float32)``. Each step keeps a known shape: a copy or view of the data (``detach``,
``cpu``, ``numpy``, ``from_numpy``), an elementwise function (``np.exp``, ``np.clip``,
``np.interp`` on its first argument), a cast to a named dtype (``astype(np.float32)``,
``.float()``), arithmetic with Python numbers or tensors of that shape. Anything else: unknown,
and the hatch is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node

# Calls that keep the data's shape and dtype; True: the result may alias the input.
_SAME_LIKE = {"detach": True, "numpy": True, "contiguous": True, "from_numpy": True,
              "as_tensor": True, "asarray": True, "cpu": True, "clone": False, "copy": False}
_ELEMENTWISE = {"abs", "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh",
                "sigmoid", "relu", "neg", "negative", "sign", "round", "floor", "ceil", "clip",
                "clamp", "sort", "cumsum", "cumprod", "flip", "roll", "nan_to_num", "square",
                "reciprocal", "fliplr", "flipud", "apply_along_axis", "rint", "trunc",
                "interp"}  # np.interp(x, xp, fp): shaped like x
_CASTS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
          "int": "int32", "bool": "bool"}  # tensor.float() …
DTYPE_NAMES = _DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
           "uint8", "bool"}
SCALAR_MODULES = {"random", "math", "time", "zlib", "hashlib", "struct", "json", "sys", "os"}
SCALAR_CALLS = {"float", "int", "len", "abs", "round", "min", "max", "sum"}


@dataclass(frozen=True)
class Like:
    """Shaped like parameter ``param``; ``aliases``: may be that very tensor or a view of it;
    ``dtype``: a torch dtype name when a cast changed it (None: the parameter's);
    ``dynamic``: a 1-D result whose length depends on the data (``np.unique``), its fake's
    length a size only the run knows (``new_dynamic_size``)."""

    param: str
    aliases: bool
    dtype: str | None = None
    dynamic: bool = False
    observed: bool = False  # not known from the source: the eager run shows it (observe.py)

    def fake(self) -> str:
        """The fake's expression."""
        dtype = f", dtype=torch.{self.dtype}" if self.dtype else ""
        if self.dynamic:
            return (f"{self.param}.new_empty((torch.library.get_ctx().new_dynamic_size(),)"
                    f"{dtype})")
        return f"torch.empty_like({self.param}{dtype})"


# Functions whose result is 1-D with a length that depends on the data: the dtype they give
# (None: their input's). np.trim_zeros and np.unique_values have no torch._numpy twin: Dynamo
# cannot trace them (np.unique and np.flatnonzero it traces, as torch ops).
_DATA_DEPENDENT_1D = {"trim_zeros": None, "unique_values": None, "unique": None,
                      "flatnonzero": "int64"}


SCALAR = "scalar"  # a Python number
UNKNOWN = "?"


def walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from walk(child)


def root(expr: cst.BaseExpression) -> str:
    """The name an attribute/subscript/call chain starts from (``a`` of ``a.b[0].c()``)."""
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def output_like(helper: cst.FunctionDef, params: list[str]) -> Like | None:
    """What every ``return`` of ``helper`` is shaped like (one parameter, one dtype), or None
    when that cannot be derived."""
    env: dict[str, Like | str] = {p: Like(p, True) for p in params}
    returns = []
    for node in walk(helper.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0].target, cst.Name):
            env[node.targets[0].target.value] = _like(node.value, env) or UNKNOWN
        elif isinstance(node, cst.Return):
            returns.append(_like(node.value, env) if node.value is not None else None)
    if not returns or not all(isinstance(r, Like) for r in returns):
        return None
    if len({(r.param, r.dtype, r.dynamic) for r in returns}) != 1:
        return None
    return Like(returns[0].param, any(r.aliases for r in returns), returns[0].dtype,
                returns[0].dynamic)


def _like(expr: cst.BaseExpression, env: dict) -> Like | str | None:
    """A :class:`Like`, :data:`SCALAR` for a Python number, None when unknown."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return SCALAR
    if isinstance(expr, cst.Name):
        got = env.get(expr.value)
        return None if got == UNKNOWN else got
    if isinstance(expr, cst.UnaryOperation):
        got = _like(expr.expression, env)
        return Like(got.param, False, got.dtype, got.dynamic) if isinstance(got, Like) else got
    if isinstance(expr, cst.BinaryOperation):
        left, right = _like(expr.left, env), _like(expr.right, env)
        if left == right == SCALAR:
            return SCALAR
        sides = [s for s in (left, right) if isinstance(s, Like)]
        if None in (left, right) or len({(s.param, s.dtype, s.dynamic) for s in sides}) != 1:
            return None
        return Like(sides[0].param, False, sides[0].dtype, sides[0].dynamic)
    if isinstance(expr, cst.Subscript):  # cfg["scale"]: a Python value
        return SCALAR if env.get(root(expr)) in (UNKNOWN, SCALAR) else None
    if isinstance(expr, cst.Call):
        return _call_like(expr, env)
    return None


def _call_like(call: cst.Call, env: dict) -> Like | str | None:
    name = get_full_name_for_node(call.func) or ""
    head, last = name.split(".")[0], name.split(".")[-1]
    if isinstance(call.func, cst.Attribute) and last == "item":
        return SCALAR
    if name in SCALAR_CALLS or (head in SCALAR_MODULES and "." in name):
        return SCALAR
    subject = _like(call.func.value, env) if isinstance(call.func, cst.Attribute) else None
    args = [a.value for a in call.args if a.keyword is None]
    if not isinstance(subject, Like):  # a function, not a tensor's method: np.sort(a)
        if last == "apply_along_axis" and len(args) == 3:
            fn = get_full_name_for_node(args[0]) or ""
            return _like(args[2], env) if fn.split(".")[-1] in _ELEMENTWISE else None
        subject = _like(args[0], env) if args else None
        args = args[1:]
    if not isinstance(subject, Like):
        return None
    dynamic = subject.dynamic
    if last in _SAME_LIKE:
        return Like(subject.param, subject.aliases and _SAME_LIKE[last], subject.dtype, dynamic)
    if last in _ELEMENTWISE:
        return Like(subject.param, False, subject.dtype, dynamic)
    if last in _DATA_DEPENDENT_1D and not dynamic and not args and \
            all(a.keyword is None for a in call.args):  # np.unique(a, return_counts=True): a tuple
        return Like(subject.param, False, _DATA_DEPENDENT_1D[last] or subject.dtype, True)
    if last in _CASTS and not args and isinstance(call.func, cst.Attribute):
        return Like(subject.param, False, _CASTS[last], dynamic)
    if last in ("astype", "to") and len(args) == 1:
        dtype = (get_full_name_for_node(args[0]) or "").split(".")[-1]
        if isinstance(args[0], cst.SimpleString):
            dtype = args[0].evaluated_value
        return Like(subject.param, False, dtype, dynamic) if dtype in _DTYPES else None
    return None
