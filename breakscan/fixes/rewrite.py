"""Mechanical source rewrites for one graph break, made with libcst.

libcst keeps a concrete syntax tree, so every byte outside the rewritten statement (comments,
blank lines, odd spacing) survives exactly. A rewrite is only a *proposal*: the caller verifies it
by running the rewritten model (same outputs, fewer breaks). This module only refuses what is
known to be wrong or unsafe and says why in one line.

Here: the ``Rewrite`` every source fix returns and ``_apply`` that makes one (parse, handler,
``import torch`` when needed, compile check, one-line refusal), the unified diff, and the
rewrites too small for a module of their own: ``print_guard`` (a standalone print/logging
statement wrapped in ``if not torch.compiler.is_compiling():``; Dynamo folds the test to False,
eager runs still print), ``clone`` (``copy.deepcopy(t)`` -> ``t.clone()``), ``constant_source``
(constants created as Python values), and at the user's call into a library ``disable_call``
(``torch.compiler.disable`` around the call) and ``tolist_loop``. Every source fix is reached
by its fix id through ``source_fixes.py``; the tree and the refusal are in ``syntax.py``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from ..rules.catalogue import FIXES
from .syntax import NotHere, Refuse, Tree, is_log_call

GUARD = "not torch.compiler.is_compiling()"


@dataclass
class Rewrite:
    fix_id: str  # the source fix it is (the catalogue's id)
    line: int  # the line it was asked for
    title: str  # one line: what it does
    new_source: str | None  # the whole rewritten file, or None when refused
    refused: str | None  # why no rewrite is offered (one line), or None
    matched: bool = True  # False: the rewrite's pattern is not on the line at all
    around: str | None = None  # hoist_context: the manager the caller enters around the call
    # What the rewrite changes in what the model computes when the model draws random numbers
    # (drop_fork_rng: its draws then advance the global generator); None: it keeps it.
    changes: str | None = None
    # Dynamo settings the rewritten code needs (verified with it, shown to apply with it): an
    # escape hatch whose result's length depends on the data needs
    # capture_dynamic_output_shape_ops.
    config: dict[str, Any] | None = None


def unified_diff(old: str, new: str, path: str) -> str:
    """``git diff``-style text (a/ b/ labels), applicable with ``patch -p1`` / ``git apply``."""
    out = []
    for text in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"a/{path}", f"b/{path}"):
        out.append(text if text.endswith("\n") else text + "\n\\ No newline at end of file\n")
    return "".join(out)


def _root_name(dotted: cst.BaseExpression) -> str:
    return (get_full_name_for_node(dotted) or "").split(".")[0]


def _with_torch_import(module: cst.Module) -> cst.Module:
    """Add ``import torch`` after the last top-level import unless ``torch`` is bound already."""
    last_import = -1
    for i, stmt in enumerate(module.body):
        if not (isinstance(stmt, cst.SimpleStatementLine)
                and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)):
            continue
        last_import = i
        for small in stmt.body:
            if isinstance(small, cst.Import) and any(  # `import torch.nn` binds torch too
                    a.asname is None and _root_name(a.name) == "torch" for a in small.names):
                return module
    at = last_import + 1
    if at == 0 and module.body and m.matches(
            module.body[0], m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])):
        at = 1  # after the module docstring
    body = list(module.body)
    body.insert(at, cst.parse_statement("import torch\n"))
    return module.with_changes(body=body)


# -- print / logging ----------------------------------------------------------------------------

def _guard_print(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Wrap the print statement in ``if not torch.compiler.is_compiling():``.

    Only a whole expression statement is wrapped: a print inside an expression (a lambda, an
    ``x or print(...)``) would need the surrounding statement to change meaning.
    """
    stmt = t.innermost((cst.SimpleStatementLine, cst.BaseCompoundStatement), line)
    if stmt is None:
        raise Refuse(f"no statement on line {line}")
    on_line = [c for c in m.findall(stmt, m.Call()) if is_log_call(c) and t.covers(c, line)]
    standalone = (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                  and isinstance(stmt.body[0], cst.Expr) and is_log_call(stmt.body[0].value))
    if not standalone:
        if not on_line:
            raise Refuse(f"no print or logging call on line {line}")
        name = t.snippet(on_line[0].func)
        if isinstance(stmt, cst.BaseCompoundStatement):
            raise Refuse(f"{name}() is on the line of a compound statement; "
                         "put it on its own line")
        if len(stmt.body) > 1:
            raise Refuse(f"{name}() shares its line with other statements (`;`)")
        raise Refuse(f"{name}() is inside an expression, not a standalone statement")
    is_compiling = m.Call(func=m.Name("is_compiling") | m.Attribute(attr=m.Name("is_compiling")))
    for node in t.ancestors(stmt):
        if isinstance(node, cst.If) and m.findall(node.test, is_compiling):
            raise Refuse(f"already guarded by `if {t.snippet(node.test)}:`")
    guarded = cst.If(test=cst.parse_expression(GUARD),
                     body=cst.IndentedBlock(body=[stmt.with_changes(leading_lines=())]),
                     leading_lines=stmt.leading_lines)  # comments above stay above
    name = t.snippet(stmt.body[0].value.func)
    return f"guard {name}() with torch.compiler.is_compiling()", t.replace({id(stmt): [guarded]})


# -- copy.deepcopy(tensor) -> tensor.clone() ---------------------------------------------------

def _deepcopy_to_clone(t: Tree, line: int) -> tuple[str, cst.Module]:
    """``copy.deepcopy(expr)`` on ``line`` -> ``expr.clone()`` (Dynamo said it copies a tensor)."""
    deepcopy = m.Call(func=m.Attribute(value=m.Name("copy"), attr=m.Name("deepcopy"))
                      | m.Name("deepcopy"))
    calls = [n for n in t.pos if isinstance(n, cst.Call) and t.covers(n, line)
             and m.matches(n, deepcopy)]
    if not calls:
        raise Refuse(f"no copy.deepcopy(...) call on line {line}")
    call = min(calls, key=t.depth)
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        raise Refuse("copy.deepcopy takes a memo argument here; rewrite by hand")
    clone = cst.Call(func=cst.Attribute(value=call.args[0].value, attr=cst.Name("clone")))
    return (f"replace `{t.snippet(call)}` with `.clone()`",
            t.module.deep_replace(call, clone))


# -- constants kept in tensors -> Python values ----------------------------------------------------

_TENSOR_OF = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name("tensor"))
                    | m.Name("tensor"))


def _python_value(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``E`` of ``torch.tensor(E, …)``, also inside ``nn.Buffer(…)``/``nn.Parameter(…)``."""
    if m.matches(expr, _TENSOR_OF) and expr.args and expr.args[0].keyword is None:
        return expr.args[0].value
    if isinstance(expr, cst.Call) and _callee_name(expr.func) in ("Buffer", "Parameter") \
            and expr.args:
        return _python_value(expr.args[0].value)
    return None


def propose_constants(source: str, lines: list[int]) -> Rewrite:
    """Each attribute created on ``lines`` as ``torch.tensor(E)`` (maybe in ``nn.Buffer``, or
    through ``register_buffer``) is created as the Python value ``E`` instead."""
    title = FIXES["constant_source"].title.format(lines=", ".join(f"line {n}" for n in lines))

    def handler(t: Tree, at: int) -> tuple[str, cst.Module]:
        edits: dict[int, list[cst.BaseStatement]] = {}
        for number in lines:
            stmt = t.innermost((cst.SimpleStatementLine,), number)
            if stmt is None or len(stmt.body) != 1:
                raise Refuse(f"line {number} is not one simple statement")
            small = stmt.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                value = _python_value(small.value)
                target = small.targets[0].target
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                    _callee_name(small.value.func) == "register_buffer" and \
                    len(small.value.args) >= 2 and \
                    isinstance(small.value.args[0].value, cst.SimpleString):
                value = _python_value(small.value.args[1].value)
                name = small.value.args[0].value.evaluated_value
                target = cst.Attribute(value=cst.Name("self"), attr=cst.Name(str(name)))
            else:
                raise Refuse(f"line {number} does not create the attribute from "
                             "torch.tensor(...)")
            if value is None:
                raise Refuse(f"line {number} does not create the attribute from "
                             "torch.tensor(...)")
            new = cst.SimpleStatementLine(  # its comments, above and after, kept
                body=[cst.Assign(targets=[cst.AssignTarget(target)], value=value)],
                leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace)
            edits[id(stmt)] = [new]
        return title, t.replace(edits)

    return _apply(source, lines[0] if lines else 0, title, "constant_source", handler,
                  needs_torch=False)


# -- a break inside a library, acted on at the user's call -------------------------------------

def propose_disable(source: str, line: int, callee: str) -> Rewrite:
    """Wrap the call to ``callee`` on ``line`` in ``torch.compiler.disable(...)``.

    For a break inside library code the user cannot edit: the library call then runs eagerly as
    one explicit break, instead of breaking (or skipping frames) inside it. Never raises.
    """
    title = FIXES["disable_call"].title.format(call=callee)

    def handler(t: Tree, at: int) -> tuple[str, cst.Module]:
        calls = [n for n in t.pos if isinstance(n, cst.Call) and t.covers(n, at)
                 and _callee_name(n.func) == callee]
        if not calls:
            raise NotHere(f"no call to `{callee}` on line {at}")  # a decorator's wrapper
        call = min(calls, key=t.depth)  # the outermost such call
        wrapped = call.with_changes(func=cst.Call(
            func=cst.parse_expression("torch.compiler.disable"), args=[cst.Arg(call.func)]))
        return title, t.module.deep_replace(call, wrapped)

    return _apply(source, line, title, "disable_call", handler)


def _tolist_loop(source: str, line: int) -> Rewrite:
    """``for t in <tensor>:`` -> ``for t in <tensor>.tolist():`` for the loop around ``line``.

    Iterating over a tensor hands each step a 0-d tensor; a library that indexes, compares or
    does arithmetic with it in Python then breaks. Python numbers do not. Offered only when the
    loop variable is used on ``line`` (the call into the library); verified like any fix.
    """
    title = FIXES["tolist_loop"].title

    def handler(t: Tree, at: int) -> tuple[str, cst.Module]:
        loops = [n for n in t.pos if isinstance(n, cst.For) and t.covers(n, at)
                 and isinstance(n.target, cst.Name)]
        if not loops:
            raise Refuse(f"line {at} is not inside a `for NAME in ...` loop")
        loop = max(loops, key=t.depth)
        name = loop.target.value
        statement = t.innermost((cst.SimpleStatementLine,), at)
        if statement is None or name not in {n.value for n in _names(statement)}:
            raise Refuse(f"the loop variable `{name}` is not used on line {at}")
        if isinstance(loop.iter, cst.Call) and _callee_name(loop.iter.func) in (
                "range", "enumerate", "zip", "tolist"):
            raise Refuse(f"the loop does not walk a tensor (`{t.snippet(loop.iter)}`)")
        new_iter = cst.Call(func=cst.Attribute(value=loop.iter, attr=cst.Name("tolist")))
        return title, t.module.deep_replace(loop.iter, new_iter)

    return _apply(source, line, title, "tolist_loop", handler, needs_torch=False)


def _names(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_Collect())
    return found


def _callee_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def apply_fix(source: str, line: int, fix_id: str, handler, needs_torch: bool = True) -> Rewrite:
    """The source fix ``fix_id`` made by ``handler`` at ``line`` (its title: the catalogue's,
    until the handler names what it did)."""
    return _apply(source, line, FIXES[fix_id].title, fix_id, handler, needs_torch)


def _apply(source: str, line: int, title: str, fix_id: str, handler,
           needs_torch: bool = True) -> Rewrite:
    try:
        tree = Tree(source)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Rewrite(fix_id, line, title, None, f"source is not valid Python: {first}")
    try:
        title, new_module = handler(tree, line)
        new_source = (_with_torch_import(new_module) if needs_torch else new_module).code
        compile(new_source, "<rewrite>", "exec", dont_inherit=True)
    except Refuse as exc:
        return Rewrite(fix_id, line, title, None, str(exc),
                       matched=not isinstance(exc, NotHere))
    except Exception as exc:  # a bug here must not take the scan down
        return Rewrite(fix_id, line, title, None,
                       f"rewrite failed: {type(exc).__name__}: {exc}".splitlines()[0])
    return Rewrite(fix_id, line, title, new_source, None)


# -- the proposers of the fixes above, by fix id (fixes/source_fixes.py) ----------------------

def propose_print_guard(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return apply_fix(source, line, "print_guard", _guard_print)


def propose_clone(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return apply_fix(source, line, "clone", _deepcopy_to_clone)


def propose_constant_source(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return propose_constants(source, [int(n) for n in (call or str(line)).split(",")])


def propose_disable_call(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return propose_disable(source, line, call or "")


def propose_tolist_loop(source: str, line: int, category: str, call: str | None) -> Rewrite:
    return _tolist_loop(source, line)
