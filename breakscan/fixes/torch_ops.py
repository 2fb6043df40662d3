"""Rewrites that keep a computation in torch: ``remove_graph_break``, ``sorted_stack``,
``torch_rng``.

* ``remove_graph_break``: a standalone ``torch._dynamo.graph_break()`` statement deleted (it
  computes nothing; a lone one in a block becomes ``pass``).
* ``sorted_stack``: Python's ``sorted`` over 0-d tensors compares them in Python (each ``<`` a
  data-dependent bool). ``torch.stack(sorted(xs))`` becomes ``torch.stack(xs).sort(dim=0).values``
  and a bare ``sorted(xs)`` the same values unbound into a list; with ``key=`` only the form fed
  to ``torch.stack`` is exact (``torch.stack(xs)[keys.argsort(dim=0, stable=True)]``: Python's
  sort is stable, so is this one): reordering a Python list by a tensor's order needs Python
  ints, another break.
* ``torch_rng``: a scalar drawn from NumPy's or Python's generator (``np.random.rand()``,
  ``random.random()``, ``uniform``, ``normal``/``gauss``) drawn from torch's as a 0-d tensor.
  The random stream differs, so outputs compared from one seed differ unless the draw does not
  reach them; refused where the value must be a Python number (``range``, ``int``, an ``if``).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree

_GRAPH_BREAK = frozenset({"torch._dynamo.graph_break", "_dynamo.graph_break", "graph_break",
                          "dynamo.graph_break"})


def _calls_on(t: Tree, line: int, names: frozenset[str] | dict) -> list[cst.Call]:
    return [n for n in t.pos if isinstance(n, cst.Call) and t.covers(n, line)
            and (get_full_name_for_node(n.func) or "") in names]


def remove_graph_break(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Delete the ``torch._dynamo.graph_break()`` statement on ``line``."""
    calls = _calls_on(t, line, _GRAPH_BREAK)
    if not calls:
        raise NotHere(f"no torch._dynamo.graph_break() call on line {line}")
    stmt = t.innermost((cst.SimpleStatementLine,), line)
    if stmt is None or len(stmt.body) != 1 or not (
            isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is calls[0]):
        raise Refuse("graph_break() is not a statement of its own (inside an expression or "
                     "after `;`)")
    block = t.parent[stmt]
    siblings = list(block.body)
    edits: dict[int, list[cst.BaseStatement]] = {id(stmt): []}
    if len(siblings) == 1:
        edits[id(stmt)] = [cst.SimpleStatementLine(body=[cst.Pass()],
                                                   leading_lines=stmt.leading_lines)]
    else:
        at = siblings.index(stmt)
        if at + 1 < len(siblings):  # comments above it stay, above the next statement
            nxt = siblings[at + 1]
            edits[id(nxt)] = [nxt.with_changes(
                leading_lines=list(stmt.leading_lines) + list(nxt.leading_lines))]
    return f"remove `{t.snippet(calls[0])}`", t.replace(edits)


def _flag(t: Tree, call: cst.Call, name: str) -> bool:
    arg = next((a for a in call.args if a.keyword and a.keyword.value == name), None)
    if arg is None:
        return False
    if m.matches(arg.value, m.Name("True") | m.Name("False")):
        return arg.value.value == "True"
    raise Refuse(f"`{name}=` is not a literal True/False: `{t.snippet(arg.value)}`")


def _keys(t: Tree, items: cst.BaseExpression, key: cst.BaseExpression) -> cst.BaseExpression:
    """``[BODY for p in items]`` for ``key=lambda p: BODY``, else ``[key(_x) for _x in items]``."""
    if isinstance(key, cst.Lambda):
        params = key.params
        if len(params.params) != 1 or params.star_arg is not cst.MaybeSentinel.DEFAULT and \
                params.star_arg is not None or params.kwonly_params or params.posonly_params:
            raise Refuse("the key lambda does not take one argument")
        name, body = params.params[0].name.value, key.body
    else:
        name, body = "_x", cst.Call(func=key, args=[cst.Arg(cst.Name("_x"))])
    comp = cst.ListComp(elt=body, for_in=cst.CompFor(target=cst.Name(name), iter=items))
    return cst.parse_expression(f"torch.stack({cst.Module([]).code_for_node(comp)})"
                                ".reshape(-1)")


def sorted_stack(t: Tree, line: int) -> tuple[str, cst.Module]:
    """``sorted`` over tensors on ``line`` as a torch sort (see the module's docstring)."""
    calls = _calls_on(t, line, frozenset({"sorted"}))
    if not calls:
        raise NotHere(f"no sorted(...) call on line {line}")
    call = min(calls, key=t.depth)
    positional = [a for a in call.args if a.keyword is None]
    extra = [a.keyword.value for a in call.args if a.keyword and a.keyword.value not in
             ("key", "reverse")]
    if len(positional) != 1 or positional[0].star or extra:
        raise Refuse(f"`{t.snippet(call)}` has arguments other than the items, key= and reverse=")
    items = positional[0].value
    key = next((a.value for a in call.args if a.keyword and a.keyword.value == "key"), None)
    descending = _flag(t, call, "reverse")
    order = ", descending=True" if descending else ""
    stack_call = t.parent.get(t.parent.get(call))
    stacked = isinstance(stack_call, cst.Call) and get_full_name_for_node(
        stack_call.func) == "torch.stack" and len(stack_call.args) == 1
    code = cst.Module([]).code_for_node
    if key is None:
        values = f"torch.stack({code(items)}).sort(dim=0{order}).values"
        if stacked:
            return f"sort with torch: `{values}`", t.module.deep_replace(
                stack_call, cst.parse_expression(values))
        new = f"list({values}.unbind())"
        return f"sort with torch: `{new}`", t.module.deep_replace(call, cst.parse_expression(new))
    if not stacked:
        raise Refuse("the list sorted by `key=` is used as a list: reordering it by a tensor's "
                     "order needs Python ints (another break); when the items share one shape, "
                     "stack them and index with `keys.argsort(stable=True)`")
    if not isinstance(items, (cst.Name, cst.Attribute)):
        raise Refuse(f"the items `{t.snippet(items)}` would be evaluated twice; name them first")
    keys = _keys(t, items, key)
    new = cst.parse_expression(f"torch.stack({code(items)})"
                               f"[{code(keys)}.argsort(dim=0, stable=True{order})]")
    return f"sort with torch: `{code(new)}`"[:200], t.module.deep_replace(stack_call, new)


# (module.function) -> (torch expression template, the arguments it takes)
_RNG = {"np.random.rand": ("torch.rand(())", 0), "numpy.random.rand": ("torch.rand(())", 0),
        "np.random.randn": ("torch.randn(())", 0), "numpy.random.randn": ("torch.randn(())", 0),
        "np.random.random": ("torch.rand(())", 0), "random.random": ("torch.rand(())", 0),
        "np.random.uniform": ("torch.empty(()).uniform_({})", 2),
        "numpy.random.uniform": ("torch.empty(()).uniform_({})", 2),
        "random.uniform": ("torch.empty(()).uniform_({})", 2),
        "np.random.normal": ("torch.empty(()).normal_({})", 2),
        "numpy.random.normal": ("torch.empty(()).normal_({})", 2),
        "random.gauss": ("torch.empty(()).normal_({})", 2),
        "random.normalvariate": ("torch.empty(()).normal_({})", 2)}
_PYTHON_ONLY = frozenset({"range", "int", "float", "round", "len", "bool", "str", "math.floor",
                          "math.ceil", "random.choice", "random.randint"})


def _python_use(t: Tree, node: cst.CSTNode) -> str | None:
    """Why ``node``'s value must stay a Python number where it is used, or None."""
    child = node
    for a in t.ancestors(node):
        if isinstance(a, (cst.If, cst.While, cst.IfExp)) and child is a.test:
            return f"it decides `{t.snippet(a.test)}` (a tensor there is another break)"
        if isinstance(a, cst.Call) and (get_full_name_for_node(a.func) or "") in _PYTHON_ONLY:
            return f"it is passed to `{get_full_name_for_node(a.func)}()`, which needs a number"
        if isinstance(a, (cst.SubscriptElement, cst.FormattedStringExpression)):
            return "it is used as an index or formatted into text"
        if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return None
        child = a
    return None


def torch_rng(t: Tree, line: int) -> tuple[str, cst.Module]:
    """The scalar NumPy/Python draw on ``line`` drawn from torch's generator as a 0-d tensor."""
    calls = _calls_on(t, line, _RNG)
    if not calls:
        raise NotHere(f"no scalar np.random/random draw on line {line}")
    call = min(calls, key=t.depth)
    name = get_full_name_for_node(call.func) or ""
    template, takes = _RNG[name]
    if any(a.keyword or a.star for a in call.args) or len(call.args) not in (0, takes):
        raise Refuse(f"`{t.snippet(call)}` has a size or keyword argument: only a scalar draw "
                     "is rewritten")
    if (why := _python_use(t, call)) is not None:
        raise Refuse(f"the value of `{t.snippet(call)}` must stay a Python number: {why}")
    stmt = t.innermost((cst.SimpleStatementLine,), line)
    fn = t.function_of(call)
    bound = t.binds(stmt) if stmt is not None and len(stmt.body) == 1 and isinstance(
        stmt.body[0], cst.Assign) and stmt.body[0].value is call else []
    for use in (n for n in m.findall(fn, m.Name()) if fn is not None and bound
                and n.value in bound and t.line(n) > t.pos[stmt].end.line):
        if (why := _python_use(t, use)) is not None:
            raise Refuse(f"`{use.value}` must stay a Python number (line {t.line(use)}): {why}")
    args = ", ".join(cst.Module([]).code_for_node(a.value) for a in call.args)
    new = template.format(args)
    if takes and not call.args:  # NumPy's defaults: uniform(0, 1), normal(0, 1)
        new = "torch.rand(())" if "uniform" in template else "torch.randn(())"
    return (f"draw from torch's generator: `{t.snippet(call)}` -> `{new}` (another random "
            "stream)", t.module.deep_replace(call, cst.parse_expression(new)))


# -- the proposers of these fixes, by fix id (fixes/source_fixes.py) ----------------------------

def propose_remove_graph_break(source: str, line: int, category: str,
                               call: str | None) -> Rewrite:
    return apply_fix(source, line, "remove_graph_break", remove_graph_break)


def propose_sorted_stack(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return apply_fix(source, line, "sorted_stack", sorted_stack)


def propose_torch_rng(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return apply_fix(source, line, "torch_rng", torch_rng)
