"""Escape hatches for an untraceable call: the user's own helper made opaque to Dynamo.

When a line calls a function of the user's file that Dynamo cannot trace (NumPy work on
``t.numpy()``, ``.item()``/``.tolist()`` logic, ``random``/``time``/logging, a C function such as
``zlib.crc32``), the helper can be decorated so the compiled graph calls it as one opaque op
instead of breaking. Measured on torch 2.13 (CPU; docs/design notes in the report of issue 34):

* ``torch.library.custom_op`` with a ``register_fake``: removes the break for every pattern
  above and compiles with Inductor; needs tensors in and one fresh tensor out (an output that
  aliases an input raises), and no gradients through it (no autograd formula is generated:
  under grad mode AOT autograd raises), so it is offered for inference scans only.
* ``torch._dynamo.decorators.leaf_function`` with a ``register_fake``: removes the break for
  every pattern, but Inductor raises on it in 2.13 (its docstring: "inductor backend ... not yet
  supported"); offered for the eager/aot_eager backends only, unless the install says otherwise.
* ``torch._dynamo.decorators.nonstrict_trace``: AOT autograd traces the body with fake tensors,
  so Python values are frozen at compile time. Right for a Python-only constant
  (``zlib.crc32(b"...")``, ``json.loads``); wrong for ``random`` (frozen draw) and no help for
  ``.item()``/``.tolist()``/NumPy (still breaks). No fake is needed.
* ``torch.compiler.opaque_function``: offered only where the installed torch has it.

The planner never imports torch: :func:`available_hatches` reads the installed torch's source
with ``ast``. A fake is generated only where the output's shape and dtype follow from an input
(``torch.empty_like(x)``, or ``torch.empty_like(x, dtype=torch.float32)`` after a cast: read by
fixes/fake_shapes.py); anything else is refused with its reason. Every rewrite is verified
like any other (fixes/verify.py), so a wrong fake fails there, not in the user's run.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node

from ..rules.bs006_unsupported_call import RULE as UNSUPPORTED_CALL
from ..rules.catalogue import FIXES
from .fake_shapes import DTYPE_NAMES, Like, output_like, root as _root, walk as _walk
from .rewrite import Rewrite, _apply
from .syntax import NotHere, Refuse, Tree

HATCHES = ("custom_op", "leaf_function", "nonstrict_trace", "opaque_function")
DECORATOR = {"custom_op": "torch.library.custom_op",
             "leaf_function": "torch._dynamo.decorators.leaf_function",
             "nonstrict_trace": "torch._dynamo.decorators.nonstrict_trace",
             "opaque_function": "torch.compiler.opaque_function"}
# Calls whose value Dynamo cannot trace and that must run on every call (not frozen at compile
# time): a body with one of them gets a hatch that runs eagerly, never nonstrict_trace.
_EAGER_METHODS = {"item", "tolist", "numpy", "data_ptr"}
_EAGER_MODULES = {"np", "numpy", "random", "time", "datetime", "logging", "logger", "log",
                  "warnings", "os", "secrets", "uuid", "scipy"}
_EAGER_CALLS = {"print", "input", "open"}
# Shape- and dtype-preserving steps: (keeps aliasing the input?)
_MUTATING = {"append", "extend", "insert", "pop", "clear", "update", "setdefault", "remove",
             "add", "discard"}


# -- what the installed torch has, read without importing it ---------------------------------------

def available_hatches() -> dict[str, bool]:
    """Which hatches the installed torch defines (each name → bool), read with ``ast`` from its
    files; ``leaf_function_inductor``: whether leaf_function's own docstring does not say that
    Inductor is unsupported. All False where torch is not installed."""
    found = dict.fromkeys((*HATCHES, "leaf_function_inductor"), False)
    root = _torch_dir()
    if root is None:
        return found
    decorators = _top_defs(root / "_dynamo" / "decorators.py")
    compiler = _top_defs(root / "compiler" / "__init__.py")
    library = _top_defs(root / "library.py")
    found["nonstrict_trace"] = "nonstrict_trace" in decorators
    found["leaf_function"] = "leaf_function" in decorators
    found["custom_op"] = "custom_op" in library
    found["opaque_function"] = "opaque_function" in compiler
    doc = " ".join((decorators.get("leaf_function") or "").split()).lower()
    found["leaf_function_inductor"] = found["leaf_function"] and not (
        "inductor backend" in doc and "not yet supported" in doc)
    return found


def _torch_dir() -> Path | None:
    try:  # a top-level find_spec locates the package without running it
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _top_defs(path: Path) -> dict[str, str]:
    """Names a module defines or imports at its top level → their docstring ('' if none)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = ast.get_docstring(node) or names.get(node.name, "")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.setdefault(alias.asname or alias.name.split(".")[0], "")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, "")
    return names


# -- the rewrite ----------------------------------------------------------------------------------

def propose_escape(source: str, line: int, installed: dict[str, bool] | None = None,
                   backend: str = "inductor", category: str = UNSUPPORTED_CALL.category,
                   namespace: str = "user_escape", training: bool = False,
                   observed: str | None = None) -> Rewrite:
    """Decorate the helper of this file that ``line`` calls (or lies in) with the escape hatch
    the installed torch offers for ``backend`` (``training``: gradients flow through it, which
    a generated custom_op cannot carry; ``observed``: the fake a verifying child read off the
    eager run, for a result whose shape the source does not show); never raises."""
    have = available_hatches() if installed is None else installed
    title = FIXES["escape_hatch"].title

    dynamic: list[bool] = []

    def handler(t: Tree, at: int) -> tuple[str, cst.Module]:
        helper = _helper_at(t, at)
        _check_pure(t, helper)
        hatch, fake_of = _choose(helper, have, backend, training)
        given = _python_value_given(t, helper) if hatch == "custom_op" else ""
        if given:
            raise Refuse(f"a custom_op takes tensors only, and {given}")
        if fake_of is not None and fake_of.observed and observed is not None:
            fake_of = observed_like(observed, _params(helper))
        dynamic.append(bool(fake_of and fake_of.dynamic))
        return _decorate(t, helper, hatch, fake_of, namespace)

    rewrite = _apply(source, line, title, "escape_hatch", handler)
    if rewrite.new_source is not None and any(dynamic):
        # Dynamo breaks at an op whose output size depends on the data ("Dynamic shape
        # operator") unless told to capture it: the rewrite is verified, and applied, with it.
        rewrite.config = {DYNAMIC_OUTPUT: True}
        rewrite.title += f", with torch._dynamo.config.{DYNAMIC_OUTPUT} = True"
    return rewrite


DYNAMIC_OUTPUT = "capture_dynamic_output_shape_ops"


def _module_functions(t: Tree) -> dict[str, cst.FunctionDef]:
    return {s.name.value: s for s in t.module.body if isinstance(s, cst.FunctionDef)}


def _helper_at(t: Tree, line: int) -> cst.FunctionDef:
    """The module-level function the statement at ``line`` calls, else the one it lies in."""
    stmt = t.innermost((cst.SimpleStatementLine, cst.BaseCompoundStatement), line)
    if stmt is None:
        raise NotHere(f"no statement on line {line}")
    own = _module_functions(t)
    calls = [c for c in t.pos if isinstance(c, cst.Call) and t.covers(c, line)
             and t.covers(stmt, t.line(c))]
    for call in sorted(calls, key=t.depth):
        name = get_full_name_for_node(call.func) or ""
        if name in own:
            return own[name]
        head, _, attr = name.partition(".")
        if head == "self" and attr and _method_named(t, stmt, attr):
            raise Refuse(f"`{name}` is a method: move its body into a function of this file")
    outer = t.function_of(stmt)
    while outer is not None and t.function_of(outer) is not None:
        outer = t.function_of(outer)
    if outer is not None and outer in own.values():
        if _called_elsewhere(t, outer):
            return outer  # not the compiled entry itself: another function calls it
        raise NotHere(f"line {line} calls no function of this file")
    if outer is not None and outer.name.value in ("forward", "__call__"):
        raise NotHere(f"line {line} calls no function of this file")
    if outer is not None:
        raise Refuse(f"`{outer.name.value}` is a method: move the untraceable code into a "
                     "function of this file")
    raise NotHere(f"line {line} calls no function defined in this file")


def _called_elsewhere(t: Tree, helper: cst.FunctionDef) -> bool:
    name = helper.name.value
    return any(isinstance(c, cst.Call) and isinstance(c.func, cst.Name) and c.func.value == name
               and helper not in set(t.ancestors(c)) for c in t.pos)


def _python_value_given(t: Tree, helper: cst.FunctionDef) -> str:
    """A call of ``helper`` in this file giving a parameter a Python literal (a custom_op
    takes tensors only): "`kind` is given 'float16'", else ""."""
    name, params = helper.name.value, _params(helper)
    for call in (c for c in t.pos if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
                 and c.func.value == name):
        for i, arg in enumerate(call.args):
            given = params[i] if arg.keyword is None and i < len(params) else \
                arg.keyword.value if arg.keyword is not None else None
            if given and isinstance(arg.value, (cst.SimpleString, cst.Integer, cst.Float,
                                                cst.ConcatenatedString)):
                return f"`{given}` is given {t.snippet(arg.value)}"
    return ""


def _method_named(t: Tree, node: cst.CSTNode, name: str) -> bool:
    cls = next((a for a in t.ancestors(node) if isinstance(a, cst.ClassDef)), None)
    return cls is not None and any(isinstance(s, cst.FunctionDef) and s.name.value == name
                                   for s in cls.body.body)


def _params(helper: cst.FunctionDef) -> list[str]:
    p = helper.params
    if p.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or p.star_kwarg or p.kwonly_params:
        raise Refuse(f"`{helper.name.value}` takes *args, **kwargs or keyword-only arguments: "
                     "its signature cannot be given to the hatch")
    names = [q.name.value for q in (*p.posonly_params, *p.params)]
    if not names:
        raise Refuse(f"`{helper.name.value}` takes no arguments: nothing to derive its "
                     "output from")
    return names


def _check_pure(t: Tree, helper: cst.FunctionDef) -> None:
    """A hatch's function must be pure: refuse globals, mutated inputs, generators, decorators."""
    name = helper.name.value
    if helper.decorators:
        first = t.snippet(helper.decorators[0].decorator)
        raise Refuse(f"`{name}` is already decorated (@{first})")
    if helper.asynchronous is not None:
        raise Refuse(f"`{name}` is async")
    params = set(_params(helper))
    local = set(t.binds(helper.body)) - params
    for node in _walk(helper.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            raise Refuse(f"`{name}` assigns a global or enclosing name: a hatch's function "
                         "must be pure")
        if isinstance(node, (cst.Yield, cst.Await)):
            raise Refuse(f"`{name}` is a generator")
        for target in _stored(node):
            root = _root(target)
            if root in params or (root and root not in local):
                raise Refuse(f"`{name}` mutates `{t.snippet(target)}`: a hatch's function "
                             "must not change its inputs or globals")
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method, root = node.func.attr.value, _root(node.func.value)
            in_place = method.endswith("_") and not method.endswith("__")
            if (in_place and root in params) or (method in _MUTATING and root
                                                 and root not in local):
                raise Refuse(f"`{name}` mutates `{root}` with .{method}(): a hatch's "
                             "function must not change its inputs or globals")
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "out":
            raise Refuse(f"`{name}` writes into an `out=` tensor")


def _stored(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Subscripts and attributes ``node`` assigns to (``a[i] = ``, ``a.b += ``, ``del a[i]``)."""
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [tg.target for tg in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, cst.Del):
        targets = [node.target]
    flat: list[cst.BaseExpression] = []
    while targets:
        tg = targets.pop()
        if isinstance(tg, (cst.Tuple, cst.List)):
            targets.extend(e.value for e in tg.elements)
        elif isinstance(tg, (cst.Subscript, cst.Attribute)):
            flat.append(tg)
    return flat


# -- which hatch, and the fake's shape ------------------------------------------------------------

def _needs_eager(helper: cst.FunctionDef) -> str:
    """The first call in ``helper`` whose value must come from running it (not tracing it)."""
    for node in _walk(helper.body):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _EAGER_METHODS:
            return "." + node.func.attr.value
        name = get_full_name_for_node(node.func) or ""
        if name in _EAGER_CALLS or name.split(".")[0] in _EAGER_MODULES:
            return name
    return ""


def _choose(helper: cst.FunctionDef, have: dict[str, bool], backend: str,
            training: bool) -> tuple[str, Like | None]:
    """The hatch for ``helper`` and what its fake is shaped like (None: no fake)."""
    name = helper.name.value
    eager = _needs_eager(helper)
    if not eager and have.get("nonstrict_trace"):
        return "nonstrict_trace", None
    # A result whose shape the source does not show: the verifying child reads it off the
    # eager run (fixes/observe.py) and fills in the fake; a fresh tensor, checked there.
    like = output_like(helper, _params(helper)) or Like("", False, observed=True)
    fresh = not like.aliases
    inductor = backend == "inductor"
    leaf_ok = have.get("leaf_function") and (not inductor or have.get("leaf_function_inductor"))
    order = ["leaf_function", "custom_op"] if not inductor else ["custom_op", "leaf_function"]
    for hatch in order + ["opaque_function"]:  # a data-dependent length: custom_op only
        if hatch == "leaf_function" and leaf_ok and not like.dynamic:
            return hatch, like
        if hatch == "custom_op" and have.get("custom_op") and fresh and not training:
            return hatch, like
        if hatch == "opaque_function" and have.get("opaque_function") and not like.dynamic:
            return hatch, like
    why = ("torch.library.custom_op is missing" if not have.get("custom_op") else
           "its result is its input or a view of it (custom_op needs a fresh tensor)"
           if not fresh else "a custom_op has no autograd formula for training")
    if like.dynamic:
        why += "; its result's length depends on the data, which only a custom_op's fake takes"
    leaf = ("leaf_function does not compile with Inductor on this torch"
            if have.get("leaf_function") else "leaf_function is missing")
    raise Refuse(f"no escape hatch for `{name}` ({eager}() must run eagerly) on the installed "
                 f"torch with backend {backend}: {why}; {leaf}")


def _decorate(t: Tree, helper: cst.FunctionDef, hatch: str, like: Like | None,
              namespace: str) -> tuple[str, cst.Module]:
    name = helper.name.value
    params = _params(helper)
    if hatch == "custom_op":
        schema = "(" + ", ".join(f"Tensor {p}" for p in params) + ") -> Tensor"
        text = f'{DECORATOR[hatch]}("{namespace}::{name}", mutates_args=(), schema="{schema}")'
    else:
        text = DECORATOR[hatch]
    decorated = helper.with_changes(decorators=[cst.Decorator(cst.parse_expression(text))])
    new = [decorated]
    if like is not None:
        fake = f"_{name}_fake"
        taken = set(_module_functions(t)) | set(t.binds(t.module))
        if fake in taken:
            raise Refuse(f"`{fake}` is already a name in this file")
        body = f"raise RuntimeError({unobserved(name)!r})" if like.observed else \
            f"return {like.fake()}"
        new.append(cst.parse_statement(
            f"@{name}.register_fake\ndef {fake}({', '.join(params)}):\n"
            f"    {body}\n").with_changes(
                leading_lines=[cst.EmptyLine(), cst.EmptyLine()]))
    shape = "" if like is None else ", fake: shaped as its eager run shows (--fix reads it " \
        "off that run)" if like.observed else f", fake: {like.fake()}"
    return (f"run `{name}` as one opaque op: @{DECORATOR[hatch]}{shape}",
            t.replace({id(helper): new}))


def unobserved(helper: str) -> str:
    """The fake's body until the verifying child reads the result's shape off the eager run
    (fixes/observe.py finds the helper by this text)."""
    return f"breakscan --fix: the shape of `{helper}`'s result, from its eager run"


def observed_like(fake: str, params: list[str]) -> Like:
    """The observed fake (``torch.empty_like(x[, dtype=torch.T])``, fixes/observe.py) as a
    :class:`Like`; ``Refuse`` for any other text (it is data from a child: parsed, never run)."""
    match = _OBSERVED.fullmatch(fake)
    if match is None or match.group(1) not in params or \
            (match.group(2) and match.group(2) not in DTYPE_NAMES):
        raise Refuse(f"not an observed fake: {fake[:80]!r}")
    return Like(match.group(1), False, match.group(2))


_OBSERVED = re.compile(r"torch\.empty_like\((\w+)(?:, dtype=torch\.(\w+))?\)")


def propose_escape_hatch(source: str, line: int, category: str, call: str | None) -> Rewrite:
    # the installed torch's hatches; ``call``: the fake the verifying child observed
    return propose_escape(source, line, None, category=category, observed=call)
