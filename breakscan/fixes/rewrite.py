"""Mechanical source rewrites for one graph break, made with libcst.

libcst keeps a concrete syntax tree, so every byte outside the rewritten statement (comments,
blank lines, odd spacing) survives exactly. A rewrite is only a *proposal*: the caller verifies it
by running the rewritten model (same outputs, fewer breaks). This module only refuses what is
known to be wrong or unsafe and says why in one line.

Rewrites (see DYNAMO_NOTES.md, "Seed patterns"; both verified on torch 2.13):

* ``print``: wrap a standalone print/logging statement in
  ``if not torch.compiler.is_compiling():`` (Dynamo folds the test to False, so nothing breaks;
  eager runs still print).
* ``data_dependent_branch``: turn a tensor ``if`` whose branches only assign names or return
  into ``torch.where(cond, a, b)``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ..rules import LOG_METHODS

GUARD = "not torch.compiler.is_compiling()"
_TO_PYTHON = {"item", "tolist", "numpy"}
_MUTATING = {"append", "extend", "insert", "update", "pop", "popitem", "remove", "clear",
             "setdefault", "discard"}
_IMPURE_BUILTINS = {"print", "input", "breakpoint", "setattr", "delattr", "exec", "eval", "next"}
_INPLACE = re.compile(r"[A-Za-z0-9]_$")  # add_, copy_ (not __dunder__)
_TITLES = {
    "print": "guard the print/logging call with torch.compiler.is_compiling()",
    "data_dependent_branch": "replace the tensor `if` with torch.where",
    "tensor_deepcopy": "replace copy.deepcopy(tensor) with tensor.clone()",
}


@dataclass
class Rewrite:
    category: str  # the break category it fixes
    line: int  # the line it was asked for
    title: str  # one line: what it does
    new_source: str | None  # the whole rewritten file, or None when refused
    refused: str | None  # why no rewrite is offered (one line), or None


class _Refuse(Exception):
    """Raised inside a handler: the message is the one-line reason."""


def propose_rewrite(source: str, line: int, category: str) -> Rewrite:
    """Rewrite the statement at ``line`` to remove a ``category`` break; never raises."""
    title = _TITLES.get(category, f"no source rewrite for {category}")
    handler = {"print": _guard_print, "data_dependent_branch": _branch_to_where,
               "tensor_deepcopy": _deepcopy_to_clone}.get(category)
    if handler is None:
        return Rewrite(category, line, title, None,
                       f"no source rewrite for {category}; see the settings fixes")
    return _apply(source, line, title, category, handler)


def unified_diff(old: str, new: str, path: str) -> str:
    """``git diff``-style text (a/ b/ labels), applicable with ``patch -p1`` / ``git apply``."""
    out = []
    for text in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"a/{path}", f"b/{path}"):
        out.append(text if text.endswith("\n") else text + "\n\\ No newline at end of file\n")
    return "".join(out)


# -- the tree and its metadata ----------------------------------------------------------------

class _Tree:
    def __init__(self, source: str):
        wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = wrapper.module  # metadata is keyed on this copy's nodes
        self.pos = wrapper.resolve(PositionProvider)
        self.parent = wrapper.resolve(ParentNodeProvider)

    def covers(self, node: cst.CSTNode, line: int) -> bool:
        r = self.pos.get(node)
        return r is not None and r.start.line <= line <= r.end.line

    def depth(self, node: cst.CSTNode) -> int:
        d = 0
        while node in self.parent:
            node, d = self.parent[node], d + 1
        return d

    def innermost(self, kinds: tuple[type, ...], line: int) -> cst.CSTNode | None:
        hits = [n for n in self.pos if isinstance(n, kinds) and self.covers(n, line)]
        return max(hits, key=self.depth, default=None)

    def ancestors(self, node: cst.CSTNode):
        while node in self.parent:
            node = self.parent[node]
            yield node

    def snippet(self, node: cst.CSTNode) -> str:
        """The node's code on one line, shortened: for reasons and titles."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= 60 else text[:57] + "..."

    def replace(self, edits: dict[int, list[cst.BaseStatement]]) -> cst.Module:
        """Replace statements (keyed by ``id``) by zero or more statements."""
        return self.module.visit(_Splice(edits))


class _Splice(cst.CSTTransformer):
    def __init__(self, edits: dict[int, list[cst.BaseStatement]]):
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node, updated_node):
        if id(original_node) not in self.edits:
            return updated_node
        new = self.edits[id(original_node)]
        return cst.FlattenSentinel(new) if new else cst.RemoveFromParent()


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

def _is_log_call(node: cst.CSTNode) -> bool:
    """``print(...)``, ``warnings.warn(...)`` or ``<something named *log*>.info(...)`` (logger,
    logging, self.logger, ``logging.getLogger(__name__)``)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    if m.matches(func, m.Attribute(value=m.Name("warnings"), attr=m.Name("warn"))):
        return True  # warnings.warn(...): logging Dynamo cannot trace either
    if isinstance(func, cst.Attribute) and func.attr.value in LOG_METHODS:
        receiver = func.value
        if isinstance(receiver, cst.Call):  # logging.getLogger(__name__).info(...)
            receiver = receiver.func
        name = receiver.value if isinstance(receiver, cst.Name) else (
            receiver.attr.value if isinstance(receiver, cst.Attribute) else "")
        return "log" in name.lower()
    return False


def _guard_print(t: _Tree, line: int) -> tuple[str, cst.Module]:
    """Wrap the print statement in ``if not torch.compiler.is_compiling():``.

    Only a whole expression statement is wrapped: a print inside an expression (a lambda, an
    ``x or print(...)``) would need the surrounding statement to change meaning.
    """
    stmt = t.innermost((cst.SimpleStatementLine, cst.BaseCompoundStatement), line)
    if stmt is None:
        raise _Refuse(f"no statement on line {line}")
    on_line = [c for c in m.findall(stmt, m.Call()) if _is_log_call(c) and t.covers(c, line)]
    standalone = (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                  and isinstance(stmt.body[0], cst.Expr) and _is_log_call(stmt.body[0].value))
    if not standalone:
        if not on_line:
            raise _Refuse(f"no print or logging call on line {line}")
        name = t.snippet(on_line[0].func)
        if isinstance(stmt, cst.BaseCompoundStatement):
            raise _Refuse(f"{name}() is on the line of a compound statement; "
                          "put it on its own line")
        if len(stmt.body) > 1:
            raise _Refuse(f"{name}() shares its line with other statements (`;`)")
        raise _Refuse(f"{name}() is inside an expression, not a standalone statement")
    is_compiling = m.Call(func=m.Name("is_compiling") | m.Attribute(attr=m.Name("is_compiling")))
    for node in t.ancestors(stmt):
        if isinstance(node, cst.If) and m.findall(node.test, is_compiling):
            raise _Refuse(f"already guarded by `if {t.snippet(node.test)}:`")
    guarded = cst.If(test=cst.parse_expression(GUARD),
                     body=cst.IndentedBlock(body=[stmt.with_changes(leading_lines=())]),
                     leading_lines=stmt.leading_lines)  # comments above stay above
    name = t.snippet(stmt.body[0].value.func)
    return f"guard {name}() with torch.compiler.is_compiling()", t.replace({id(stmt): [guarded]})


# -- tensor if -> torch.where -------------------------------------------------------------------

_KINDS = {
    cst.If: "a nested if", cst.For: "a for loop", cst.While: "a while loop",
    cst.With: "a with block", cst.Try: "a try block", cst.FunctionDef: "a function definition",
    cst.ClassDef: "a class definition", cst.AugAssign: "an augmented assignment",
    cst.AnnAssign: "an annotated assignment", cst.Expr: "an expression statement",
    cst.Pass: "`pass`", cst.Raise: "`raise`", cst.Del: "`del`", cst.Global: "`global`",
    cst.Nonlocal: "`nonlocal`", cst.Assert: "an assert", cst.Break: "`break`",
    cst.Continue: "`continue`", cst.Import: "an import", cst.ImportFrom: "an import",
    cst.Return: "a return after other statements",
}
_PURE_ONLY = "torch.where evaluates both branches, so they must be pure"


def _kind(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Assign):
        if len(node.targets) > 1:
            return "a chained assignment"
        target = node.targets[0].target
        return {cst.Attribute: "an attribute assignment",
                cst.Subscript: "a subscript assignment"}.get(type(target), "a tuple assignment")
    return _KINDS.get(type(node), f"a {type(node).__name__} statement")


def _impurity(t: _Tree, expr: cst.BaseExpression) -> str | None:
    """What in ``expr`` has a side effect or leaves the tensor world, or None."""
    for node in m.findall(expr, m.Call() | m.NamedExpr() | m.Yield() | m.Await()):
        if isinstance(node, cst.NamedExpr):
            return "a walrus (:=)"
        if isinstance(node, (cst.Yield, cst.Await)):
            return f"`{type(node).__name__.lower()}`"
        func = node.func
        if _is_log_call(node):
            return f"a {t.snippet(func)}() call"
        if isinstance(func, cst.Name) and func.value in _IMPURE_BUILTINS:
            return f"a {func.value}() call"
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr in _TO_PYTHON:
                return f"a .{attr}() call"
            if attr in _MUTATING:
                return f"a mutating .{attr}() call"
            if _INPLACE.search(attr):
                return f"an in-place .{attr}() call"
    return None


def _reads(expr: cst.BaseExpression) -> set[str]:
    """Names an expression reads (attribute names and keyword names excluded)."""
    skip = {id(a.attr) for a in m.findall(expr, m.Attribute())}
    skip |= {id(a.keyword) for a in m.findall(expr, m.Arg()) if a.keyword is not None}
    return {n.value for n in m.findall(expr, m.Name()) if id(n) not in skip}


def _branch(t: _Tree, block: cst.BaseSuite) -> tuple[str, list]:
    """("return", [(None, value)]) or ("assign", [(name, value), ...]); refuses anything else."""
    if isinstance(block, cst.SimpleStatementSuite):
        smalls = list(block.body)
    else:
        smalls = []
        for stmt in block.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                header = t.snippet(stmt).split(":")[0]
                raise _Refuse(f"{_kind(stmt)} in a branch (`{header}:`); {_PURE_ONLY}")
            smalls.extend(stmt.body)
    if len(smalls) == 1 and isinstance(smalls[0], cst.Return):
        if smalls[0].value is None:
            raise _Refuse("a branch has a bare `return`")
        return "return", [(None, smalls[0].value)]
    pairs = []
    for s in smalls:
        if not (isinstance(s, cst.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0].target, cst.Name)):
            raise _Refuse(f"{_kind(s)} in a branch (`{t.snippet(s)}`); {_PURE_ONLY}")
        pairs.append((s.targets[0].target.value, s.value))
    names = [n for n, _ in pairs]
    for n in names:
        if names.count(n) > 1:
            raise _Refuse(f"`{n}` is assigned twice in one branch")
    return "assign", pairs


def _check_values(t: _Tree, pairs) -> None:
    for _, value in pairs:
        if isinstance(value, cst.Tuple):
            raise _Refuse(f"a branch gives a tuple (`{t.snippet(value)}`), not a tensor")
        what = _impurity(t, value)
        if what:
            raise _Refuse(f"a branch has {what} (`{t.snippet(value)}`); {_PURE_ONLY}")


def _following_return(t: _Tree, node: cst.If) -> cst.SimpleStatementLine | None:
    """The statement right after ``node`` when it is ``return <value>``."""
    body = getattr(t.parent.get(node), "body", ())
    siblings = list(body) if isinstance(body, (list, tuple)) else []
    idx = next((i for i, s in enumerate(siblings) if s is node), None)
    if idx is None or idx + 1 >= len(siblings):
        return None
    nxt = siblings[idx + 1]
    is_return = m.matches(nxt, m.SimpleStatementLine(body=[m.Return()]))
    return nxt if is_return and nxt.body[0].value is not None else None


def _fresh_name(t: _Tree, base: str) -> str:
    used = {n.value for n in m.findall(t.module, m.Name())}
    name, i = base, 1
    while name in used:
        name, i = f"{base}_{i}", i + 1
    return name


def _where(test: cst.BaseExpression, a: cst.BaseExpression, b: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name("where")),
                    args=[cst.Arg(test), cst.Arg(a), cst.Arg(b)])


def _branch_to_where(t: _Tree, line: int) -> tuple[str, cst.Module]:
    """Replace ``if c: y = a else: y = b`` with ``y = torch.where(c, a, b)`` (and the return forms).

    ``torch.where`` computes *both* branch values and selects elementwise, so the rewrite is
    equivalent only when both branches are pure: any statement other than a plain name
    assignment or a return, and any call with a side effect or a trip out of tensors (print,
    logging, ``.item()``, ``.append()``, in-place ``add_``), is refused. Calls to user functions
    cannot be judged here: the caller verifies the result by running it.
    """
    ifs = [n for n in t.pos if isinstance(n, cst.If)
           and t.pos[n].start.line <= line <= t.pos[n.test].end.line]
    if not ifs:
        raise _Refuse(f"no `if` test on line {line} (a while/assert/conditional expression "
                      "needs a hand-written fix)")
    node = max(ifs, key=t.depth)
    parent = t.parent.get(node)
    if isinstance(node.orelse, cst.If) or (isinstance(parent, cst.If) and parent.orelse is node):
        raise _Refuse("an if/elif chain: rewrite it by hand (nested torch.where) "
                      "or with torch.cond")
    test = node.test
    if m.findall(test, m.BooleanOperation() | m.UnaryOperation(operator=m.Not())):
        raise _Refuse(f"the condition `{t.snippet(test)}` uses and/or/not, which call bool() "
                      "on the tensor; use & | ~")
    what = _impurity(t, test)
    if what:
        raise _Refuse(f"the condition has {what} (`{t.snippet(test)}`); torch.where needs a tensor")

    kind, true = _branch(t, node.body)
    _check_values(t, true)
    removed = []
    if node.orelse is not None:
        fkind, false = _branch(t, node.orelse.body)
        if fkind != kind:
            raise _Refuse(f"one branch returns, the other assigns; {_PURE_ONLY}")
    elif kind == "return":
        nxt = _following_return(t, node)
        if nxt is None:
            raise _Refuse("the if returns early and is not followed by a `return`")
        false, removed = [(None, nxt.body[0].value)], [nxt]
    else:
        false = [(n, cst.Name(n)) for n, _ in true]  # no else: keep the old value
    _check_values(t, false)
    if kind == "assign" and {n for n, _ in true} != {n for n, _ in false}:
        raise _Refuse("the branches assign different names ("
                      f"{', '.join(n for n, _ in true)} vs {', '.join(n for n, _ in false)})")

    stmts: list[cst.SimpleStatementLine] = []
    if kind == "return":
        stmts.append(cst.SimpleStatementLine([cst.Return(_where(test, true[0][1], false[0][1]))]))
    else:
        _check_order(true, false)
        cond = test
        if len(true) > 1 and not isinstance(test, cst.Name):  # evaluate the condition once
            cond = cst.Name(_fresh_name(t, "cond"))
            stmts.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cond)], test)]))
        other = dict(false)
        stmts += [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))],
                                                      _where(cond, a, other[n]))])
                  for n, a in true]
    body = node.body  # the `if` line's trailing comment moves to the first new statement
    header = body.header if isinstance(body, cst.IndentedBlock) else body.trailing_whitespace
    stmts[0] = stmts[0].with_changes(leading_lines=node.leading_lines, trailing_whitespace=header)
    edits = {id(node): stmts, **{id(r): [] for r in removed}}
    return f"replace `if {t.snippet(test)}:` with torch.where", t.replace(edits)


def _check_order(true, false) -> None:
    """The rewrite assigns names in the true branch's order; refuse when a value would then read a
    name already replaced (true branch) or one its own branch had assigned before it (false)."""
    t_names, f_names, other = [n for n, _ in true], [n for n, _ in false], dict(false)
    for j, (name, a) in enumerate(true):
        earlier = set(t_names[:j])
        before_in_false = set(f_names[:f_names.index(name)])
        if _reads(a) & earlier or _reads(other[name]) & (earlier | before_in_false):
            raise _Refuse("a branch value reads a name assigned earlier in the branch; "
                          "rewrite by hand")


# -- copy.deepcopy(tensor) -> tensor.clone() ---------------------------------------------------

def _deepcopy_to_clone(t: _Tree, line: int) -> tuple[str, cst.Module]:
    """``copy.deepcopy(expr)`` on ``line`` -> ``expr.clone()`` (Dynamo said it copies a tensor)."""
    deepcopy = m.Call(func=m.Attribute(value=m.Name("copy"), attr=m.Name("deepcopy"))
                      | m.Name("deepcopy"))
    calls = [n for n in t.pos if isinstance(n, cst.Call) and t.covers(n, line)
             and m.matches(n, deepcopy)]
    if not calls:
        raise _Refuse(f"no copy.deepcopy(...) call on line {line}")
    call = min(calls, key=t.depth)
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        raise _Refuse("copy.deepcopy takes a memo argument here; rewrite by hand")
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
    title = "keep the constants as Python values: " + ", ".join(f"line {n}" for n in lines)

    def handler(t: _Tree, at: int) -> tuple[str, cst.Module]:
        edits: dict[int, list[cst.BaseStatement]] = {}
        for number in lines:
            stmt = t.innermost((cst.SimpleStatementLine,), number)
            if stmt is None or len(stmt.body) != 1:
                raise _Refuse(f"line {number} is not one simple statement")
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
                raise _Refuse(f"line {number} does not create the attribute from "
                              "torch.tensor(...)")
            if value is None:
                raise _Refuse(f"line {number} does not create the attribute from "
                              "torch.tensor(...)")
            new = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(target)], value=value)],
                leading_lines=stmt.leading_lines)
            edits[id(stmt)] = [new]
        return title, t.replace(edits)

    return _apply(source, lines[0] if lines else 0, title, "tensor_constant", handler,
                  needs_torch=False)


# -- a break inside a library, acted on at the user's call -------------------------------------

def propose_disable(source: str, line: int, callee: str) -> Rewrite:
    """Wrap the call to ``callee`` on ``line`` in ``torch.compiler.disable(...)``.

    For a break inside library code the user cannot edit: the library call then runs eagerly as
    one explicit break, instead of breaking (or skipping frames) inside it. Never raises.
    """
    title = f"run `{callee}(...)` eagerly: wrap it in torch.compiler.disable"

    def handler(t: _Tree, at: int) -> tuple[str, cst.Module]:
        calls = [n for n in t.pos if isinstance(n, cst.Call) and t.covers(n, at)
                 and _callee_name(n.func) == callee]
        if not calls:
            raise _Refuse(f"no call to `{callee}` on line {at}")
        call = min(calls, key=t.depth)  # the outermost such call
        wrapped = call.with_changes(func=cst.Call(
            func=cst.parse_expression("torch.compiler.disable"), args=[cst.Arg(call.func)]))
        return title, t.module.deep_replace(call, wrapped)

    return _apply(source, line, title, "disable_call", handler)


def propose_tolist_loop(source: str, line: int) -> Rewrite:
    """``for t in <tensor>:`` -> ``for t in <tensor>.tolist():`` for the loop around ``line``.

    Iterating over a tensor hands each step a 0-d tensor; a library that indexes, compares or
    does arithmetic with it in Python then breaks. Python numbers do not. Offered only when the
    loop variable is used on ``line`` (the call into the library); verified like any fix.
    """
    title = "iterate over Python numbers: `.tolist()` on the tensor the loop walks"

    def handler(t: _Tree, at: int) -> tuple[str, cst.Module]:
        loops = [n for n in t.pos if isinstance(n, cst.For) and t.covers(n, at)
                 and isinstance(n.target, cst.Name)]
        if not loops:
            raise _Refuse(f"line {at} is not inside a `for NAME in ...` loop")
        loop = max(loops, key=t.depth)
        name = loop.target.value
        statement = t.innermost((cst.SimpleStatementLine,), at)
        if statement is None or name not in {n.value for n in _names(statement)}:
            raise _Refuse(f"the loop variable `{name}` is not used on line {at}")
        if isinstance(loop.iter, cst.Call) and _callee_name(loop.iter.func) in (
                "range", "enumerate", "zip", "tolist"):
            raise _Refuse(f"the loop does not walk a tensor (`{t.snippet(loop.iter)}`)")
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


def _apply(source: str, line: int, title: str, category: str, handler,
           needs_torch: bool = True) -> Rewrite:
    try:
        tree = _Tree(source)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Rewrite(category, line, title, None, f"source is not valid Python: {first}")
    try:
        title, new_module = handler(tree, line)
        new_source = (_with_torch_import(new_module) if needs_torch else new_module).code
        compile(new_source, "<rewrite>", "exec", dont_inherit=True)
    except _Refuse as exc:
        return Rewrite(category, line, title, None, str(exc))
    except Exception as exc:  # a bug here must not take the scan down
        return Rewrite(category, line, title, None,
                       f"rewrite failed: {type(exc).__name__}: {exc}".splitlines()[0])
    return Rewrite(category, line, title, new_source, None)
