"""The rewrite of a tensor ``if`` into ``torch.where`` (the ``data_dependent_branch`` fix).

``torch.where`` computes both branch values and selects elementwise, so the rewrite is only
offered when both branches are pure (plain name assignments or returns, no call with a side
effect or a trip out of tensors); everything else is refused with its reason. The caller still
verifies the result by running it.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from .rewrite import Rewrite, apply_fix
from .syntax import Refuse, Tree, is_log_call

_TO_PYTHON = {"item", "tolist", "numpy"}
_MUTATING = {"append", "extend", "insert", "update", "pop", "popitem", "remove", "clear",
             "setdefault", "discard"}
_IMPURE_BUILTINS = {"print", "input", "breakpoint", "setattr", "delattr", "exec", "eval", "next"}
_INPLACE = re.compile(r"[A-Za-z0-9]_$")  # add_, copy_ (not __dunder__)


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


def _impurity(t: Tree, expr: cst.BaseExpression) -> str | None:
    """What in ``expr`` has a side effect or leaves the tensor world, or None."""
    for node in m.findall(expr, m.Call() | m.NamedExpr() | m.Yield() | m.Await()):
        if isinstance(node, cst.NamedExpr):
            return "a walrus (:=)"
        if isinstance(node, (cst.Yield, cst.Await)):
            return f"`{type(node).__name__.lower()}`"
        func = node.func
        if is_log_call(node):
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


def _branch(t: Tree, block: cst.BaseSuite) -> tuple[str, list]:
    """("return", [(None, value)]) or ("assign", [(name, value), ...]); refuses anything else."""
    if isinstance(block, cst.SimpleStatementSuite):
        smalls = list(block.body)
    else:
        smalls = []
        for stmt in block.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                header = t.snippet(stmt).split(":")[0]
                raise Refuse(f"{_kind(stmt)} in a branch (`{header}:`); {_PURE_ONLY}")
            smalls.extend(stmt.body)
    if len(smalls) == 1 and isinstance(smalls[0], cst.Return):
        if smalls[0].value is None:
            raise Refuse("a branch has a bare `return`")
        return "return", [(None, smalls[0].value)]
    pairs = []
    for s in smalls:
        if not (isinstance(s, cst.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0].target, cst.Name)):
            raise Refuse(f"{_kind(s)} in a branch (`{t.snippet(s)}`); {_PURE_ONLY}")
        pairs.append((s.targets[0].target.value, s.value))
    names = [n for n, _ in pairs]
    for n in names:
        if names.count(n) > 1:
            raise Refuse(f"`{n}` is assigned twice in one branch")
    return "assign", pairs


def _check_values(t: Tree, pairs) -> None:
    for _, value in pairs:
        if isinstance(value, cst.Tuple):
            raise Refuse(f"a branch gives a tuple (`{t.snippet(value)}`), not a tensor")
        what = _impurity(t, value)
        if what:
            raise Refuse(f"a branch has {what} (`{t.snippet(value)}`); {_PURE_ONLY}")


def _following_return(t: Tree, node: cst.If) -> cst.SimpleStatementLine | None:
    """The statement right after ``node`` when it is ``return <value>``."""
    body = getattr(t.parent.get(node), "body", ())
    siblings = list(body) if isinstance(body, (list, tuple)) else []
    idx = next((i for i, s in enumerate(siblings) if s is node), None)
    if idx is None or idx + 1 >= len(siblings):
        return None
    nxt = siblings[idx + 1]
    is_return = m.matches(nxt, m.SimpleStatementLine(body=[m.Return()]))
    return nxt if is_return and nxt.body[0].value is not None else None


def _fresh_name(t: Tree, base: str) -> str:
    used = {n.value for n in m.findall(t.module, m.Name())}
    name, i = base, 1
    while name in used:
        name, i = f"{base}_{i}", i + 1
    return name


def _where(test: cst.BaseExpression, a: cst.BaseExpression, b: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name("where")),
                    args=[cst.Arg(test), cst.Arg(a), cst.Arg(b)])


def branch_to_where(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Replace ``if c: y = a else: y = b`` with ``y = torch.where(c, a, b)`` (and the return forms).

    ``torch.where`` computes *both* branch values and selects elementwise, so the rewrite is
    equivalent only when both branches are pure: any statement other than a plain name
    assignment or a return, and any call with a side effect or a trip out of tensors (print,
    logging, ``.item()``, ``.append()``, in-place ``add_``), is refused. Calls to user functions
    cannot be judged here: the caller verifies the result by running it.
    """
    node = _tensor_if(t, line)
    test = node.test
    kind, true = _branch(t, node.body)
    _check_values(t, true)
    false, removed = _other_side(t, node, kind, true)
    _check_values(t, false)
    if kind == "assign" and {n for n, _ in true} != {n for n, _ in false}:
        raise Refuse("the branches assign different names ("
                     f"{', '.join(n for n, _ in true)} vs {', '.join(n for n, _ in false)})")
    stmts = _where_statements(t, test, kind, true, false)
    body = node.body  # the `if` line's trailing comment moves to the first new statement
    header = body.header if isinstance(body, cst.IndentedBlock) else body.trailing_whitespace
    stmts[0] = stmts[0].with_changes(leading_lines=node.leading_lines, trailing_whitespace=header)
    edits = {id(node): stmts, **{id(r): [] for r in removed}}
    return f"replace `if {t.snippet(test)}:` with torch.where", t.replace(edits)


def _tensor_if(t: Tree, line: int) -> cst.If:
    """The innermost ``if`` whose test covers ``line``, refused when it is part of an if/elif
    chain or its test is no tensor (and/or/not, a side effect, a trip out of tensors)."""
    ifs = [n for n in t.pos if isinstance(n, cst.If)
           and t.pos[n].start.line <= line <= t.pos[n.test].end.line]
    if not ifs:
        raise Refuse(f"no `if` test on line {line} (a while/assert/conditional expression "
                     "needs a hand-written fix)")
    node = max(ifs, key=t.depth)
    parent = t.parent.get(node)
    if isinstance(node.orelse, cst.If) or (isinstance(parent, cst.If) and parent.orelse is node):
        raise Refuse("an if/elif chain: rewrite it by hand (nested torch.where) "
                     "or with torch.cond")
    test = node.test
    if m.findall(test, m.BooleanOperation() | m.UnaryOperation(operator=m.Not())):
        raise Refuse(f"the condition `{t.snippet(test)}` uses and/or/not, which call bool() "
                     "on the tensor; use & | ~")
    what = _impurity(t, test)
    if what:
        raise Refuse(f"the condition has {what} (`{t.snippet(test)}`); torch.where needs a tensor")
    return node


def _other_side(t: Tree, node: cst.If, kind: str, true: list) -> tuple[list, list]:
    """The values when the test is false: the ``else`` branch, the ``return`` right after an
    early-returning ``if`` (removed by the rewrite), or the names' old values. Returns (values,
    statements to remove)."""
    if node.orelse is not None:
        fkind, false = _branch(t, node.orelse.body)
        if fkind != kind:
            raise Refuse(f"one branch returns, the other assigns; {_PURE_ONLY}")
        return false, []
    if kind == "return":
        nxt = _following_return(t, node)
        if nxt is None:
            raise Refuse("the if returns early and is not followed by a `return`")
        return [(None, nxt.body[0].value)], [nxt]
    return [(n, cst.Name(n)) for n, _ in true], []  # no else: keep the old value


def _where_statements(t: Tree, test: cst.BaseExpression, kind: str, true: list,
                      false: list) -> list[cst.SimpleStatementLine]:
    """``return torch.where(c, a, b)``, or one ``y = torch.where(c, a, b)`` per name (the
    condition first kept in a fresh name when several names are assigned)."""
    stmts: list[cst.SimpleStatementLine] = []
    if kind == "return":
        stmts.append(cst.SimpleStatementLine([cst.Return(_where(test, true[0][1], false[0][1]))]))
        return stmts
    _check_order(true, false)
    cond = test
    if len(true) > 1 and not isinstance(test, cst.Name):  # evaluate the condition once
        cond = cst.Name(_fresh_name(t, "cond"))
        stmts.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cond)], test)]))
    other = dict(false)
    stmts += [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))],
                                                  _where(cond, a, other[n]))])
              for n, a in true]
    return stmts


def _check_order(true, false) -> None:
    """The rewrite assigns names in the true branch's order; refuse when a value would then read a
    name already replaced (true branch) or one its own branch had assigned before it (false)."""
    t_names, f_names, other = [n for n, _ in true], [n for n, _ in false], dict(false)
    for j, (name, a) in enumerate(true):
        earlier = set(t_names[:j])
        before_in_false = set(f_names[:f_names.index(name)])
        if _reads(a) & earlier or _reads(other[name]) & (earlier | before_in_false):
            raise Refuse("a branch value reads a name assigned earlier in the branch; "
                         "rewrite by hand")


def propose_torch_where(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``torch_where`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "torch_where", branch_to_where)
