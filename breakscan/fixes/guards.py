"""What the tests on a break's path read, and the values that send a call elsewhere.

Read with ``ast`` (no torch): the ``if``/``while``/ternary tests that enclose a line and the
early exits above it (``guards``), local names followed back to what the function assigned them
(``followed``, ``assignments_feeding``), and per test the settings that make it false or true:
an attribute of ``self`` or ``self.config`` (``falsifying``, ``truthy_attrs``), an environment
variable (``env_settings``), or a public method that sets what an ``is None`` test reads
(``setters``). :mod:`.switches` turns them into verified candidates.
"""

from __future__ import annotations

import ast
from typing import Any

EARLY_EXIT_WINDOW = 12  # lines above a line where a guard that returns still counts


def self_attr(node: ast.AST) -> tuple[str, bool] | None:
    """``self.x`` -> ("x", False); ``self.config.x`` -> ("x", True)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return node.attr, False
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
            node.value.attr == "config" and isinstance(node.value.value, ast.Name) and \
            node.value.value.id == "self":
        return node.attr, True
    return None


def falsifying(test: ast.AST) -> list[tuple[str, bool, Any]]:
    """(attr, on_config, value) settings that make ``test`` false (when it was true)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [found for value in test.values for found in falsifying(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return [(a, c, "flip") for a, c, _ in truthy_attrs(test.operand)]
    if isinstance(test, ast.IfExp) and constant_truth(test.body) is True and \
            constant_truth(test.orelse) is False:  # `True if <test> else False`
        return falsifying(test.test)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], ast.Lt) and not isinstance(test.left, ast.Constant):
        found = self_attr(test.comparators[0])  # `draw < self.layerdrop`: false at 0
        return [(*found, 0.0)] if found else []
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.comparators[0], ast.Constant):
        found = self_attr(test.left)
        constant = test.comparators[0].value
        op = test.ops[0]
        if found is None or isinstance(constant, str):
            return []
        if isinstance(op, (ast.Gt, ast.Lt, ast.NotEq)):
            return [(*found, constant)]  # x > c, x < c, x != c are false at x == c
        if isinstance(op, ast.IsNot) and constant is None:
            return [(*found, None)]
        return []
    return [(a, c, "flip") for a, c, _ in truthy_attrs(test)]


def constant_truth(node: ast.AST) -> bool | None:
    return bool(node.value) if isinstance(node, ast.Constant) else None


def _fresh(node: ast.AST) -> ast.AST:
    """A new tree of the same expression: nothing shared with the module's tree (whose nodes
    may carry references a deep copy would follow into the whole module)."""
    return ast.parse(ast.unparse(node), mode="eval").body


class _Substitute(ast.NodeTransformer):
    """Names in a test replaced by what the function assigned them last before the test."""

    def __init__(self, assigned: dict[str, ast.AST]):
        self.assigned = assigned

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.assigned.get(node.id)
        return _fresh(value) if value is not None else node


def followed(test: ast.AST, fn: ast.AST, line: int) -> ast.AST:
    """``test`` with each local name replaced by its last assignment above ``line`` in ``fn``
    (``skip = True if self.training and p < self.config.layerdrop else False`` then
    ``if skip:``), followed through up to three assignments."""
    assigned: dict[str, tuple[int, ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.lineno < line:
            name = node.targets[0].id
            if name not in assigned or assigned[name][0] < node.lineno:
                assigned[name] = (node.lineno, node.value)
    values = {name: value for name, (_, value) in assigned.items()}
    for _ in range(3):
        test = _Substitute(values).visit(_fresh(test))
    return test


def assignments_feeding(fn: ast.AST, line: int, depth: int = 2) -> list[int]:
    """The lines above ``line`` in ``fn`` that assign a name the statement at ``line`` reads
    (``skip_the_layer = dropout_probability < self.config.layerdrop`` under ``if
    self.training and self.config.layerdrop > 0.0:``, read by ``if not skip_the_layer:``): the
    guards around those lines lead to the break too. Followed ``depth`` assignments back."""
    statement = next((node for node in ast.walk(fn) if isinstance(node, ast.stmt)
                      and node.lineno == line and node is not fn), None)
    if statement is None:
        return []
    part = statement.test if isinstance(statement, (ast.If, ast.While)) else statement
    names = {n.id for n in ast.walk(part) if isinstance(n, ast.Name)}
    found = []
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if node is not statement and getattr(node, "lineno", line) < line and any(
                isinstance(t, ast.Name) and t.id in names for t in targets):
            found.append(node.lineno)
            if depth > 1:
                found += assignments_feeding(fn, node.lineno, depth - 1)
    return list(dict.fromkeys(found))


def truthy_attrs(test: ast.AST) -> list[tuple[str, bool, Any]]:
    found = self_attr(test)
    return [(*found, "flip")] if found else []


def class_and_function(tree: ast.Module, line: int
                        ) -> tuple[ast.ClassDef | None, ast.AST | None]:
    """The innermost class and function holding ``line``."""
    cls = fn = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or 0):
            if cls is None or node.lineno >= cls.lineno:
                cls = node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or 0):
            if fn is None or node.lineno >= fn.lineno:
                fn = node
    return cls, fn


def guards(fn: ast.AST, line: int) -> list[tuple[ast.AST, int]]:
    """The tests on the way to ``line`` inside ``fn``: every enclosing ``if``/``while``/ternary
    whose taken side holds it, and the early-exit ``if``s a few lines above it."""
    found: list[tuple[ast.AST, int]] = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            body = node.body if isinstance(node.body, list) else [node.body]
            if body and body[0].lineno <= line <= (body[-1].end_lineno or 0):
                found.append((node.test, node.lineno))
            elif isinstance(node, ast.If) and node.orelse is not None and node.orelse and \
                    node.orelse[0].lineno <= line <= (node.orelse[-1].end_lineno or 0):
                found.append((ast.UnaryOp(op=ast.Not(), operand=node.test), node.lineno))
            elif isinstance(node, ast.If) and not node.orelse and \
                    0 < line - (node.end_lineno or 0) <= EARLY_EXIT_WINDOW and \
                    any(isinstance(s, (ast.Return, ast.Continue)) for s in node.body):
                # `if self.fast: return ...` above the line: taking it skips the line (a guard
                # that raises is no way around: taking it fails the call)
                found.append((ast.UnaryOp(op=ast.Not(), operand=node.test), node.lineno))
    return found


def negated(test: ast.AST) -> ast.AST | None:
    return test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
        else None


def env_settings(test: ast.AST) -> list[tuple[str, str]]:
    """(variable, value) that make ``test`` true when it reads the environment:
    ``os.getenv("X", "0") == "1"``, ``os.environ.get("X") == "1"``, ``os.environ["X"]``."""
    def variable(node: ast.AST) -> str | None:
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and \
                ast.unparse(node.func) in ("os.getenv", "os.environ.get", "getenv",
                                           "environ.get"):
            return node.args[0].value
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ",
                                                                          "environ") and \
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return node.slice.value
        return None
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [found for value in test.values for found in env_settings(value)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], ast.Eq) and isinstance(test.comparators[0], ast.Constant):
        name = variable(test.left)
        return [(name, str(test.comparators[0].value))] if name else []
    name = variable(test)
    return [(name, "1")] if name else []


def setters(cls: ast.ClassDef, attr: str) -> list[tuple[str, Any]]:
    """(public method, its default argument) of ``cls`` that assigns ``self.attr`` (or the
    ``self._attr`` behind a property) from that argument: ``set_begin_index(begin_index=0)``
    for ``if self.begin_index is None:``."""
    found = []
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or method.name.startswith("_"):
            continue
        params = method.args.args[1:]
        defaults = dict(zip([p.arg for p in params[len(params) - len(method.args.defaults):]],
                            method.args.defaults))
        for node in ast.walk(method):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    self_attr(node.targets[0]) in ((attr, False), ("_" + attr, False)) and \
                    isinstance(node.value, ast.Name) and \
                    isinstance(defaults.get(node.value.id), ast.Constant):
                found.append((method.name, defaults[node.value.id].value))
    return found


def not_none_attr(test: ast.AST) -> str | None:
    """``attr`` of a test ``self.attr is None`` (true until something sets it)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        found = self_attr(test.left)
        return found[0] if found and not found[1] else None
    return None


def returned_names(fn: ast.AST, test: ast.AST) -> set[str]:
    """The names the early exit whose test is ``test`` (the module's own node) returns."""
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and node.test is test:
            return {s.value.id for s in node.body
                    if isinstance(s, ast.Return) and isinstance(s.value, ast.Name)}
    return set()


def passed_inputs(test: ast.AST, fn: ast.AST, returned: set[str]) -> list[str]:
    """The arguments the function returns early with, when given: ``if kwargs is not None and
    (position_ids := kwargs.pop("position_ids", None)) is not None: return position_ids``
    (transformers' vision_utils), ``if position_ids is not None: return position_ids`` for a
    parameter. The caller can pass them precomputed."""
    params = {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs]} | \
        ({fn.args.kwarg.arg} if fn.args.kwarg else set())
    bound = {ast.unparse(n.value): n.target.id for n in ast.walk(test)
             if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)}
    found = []
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("pop", "get") and isinstance(node.func.value, ast.Name) and \
                node.func.value.id in params and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and bound.get(ast.unparse(node), node.args[0].value) in returned:
            found.append(node.args[0].value)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                isinstance(node.ops[0], ast.IsNot) and isinstance(node.left, ast.Name) and \
                node.left.id in params and node.left.id in returned and \
                isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            found.append(node.left.id)
    return list(dict.fromkeys(found))


def argument_for(test: ast.AST, callee: Any, caller: Any, line: int) -> ast.AST | None:
    """A test that is a parameter of ``callee`` (``if drop:``, ``if not drop:``) as the
    expression the caller passed at ``line`` (``layer(x, drop=self.training and
    self.config.layerdrop > 0.0)``), to be read in the caller's class; None otherwise."""
    inner, negate = (test.operand, True) if isinstance(test, ast.UnaryOp) and \
        isinstance(test.op, ast.Not) else (test, False)
    params = [a.arg for a in [*callee.args.args, *callee.args.kwonlyargs]]
    if not isinstance(inner, ast.Name) or inner.id not in params or inner.id == "self":
        return None
    positional = [a.arg for a in callee.args.args]
    positional = positional[1:] if positional[:1] in (["self"], ["cls"]) else positional
    for node in ast.walk(caller):
        if not (isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or 0)):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else \
            node.func.id if isinstance(node.func, ast.Name) else None
        if name != callee.name and callee.name != "forward":
            continue
        passed = {p: a for p, a in zip(positional, node.args) if not isinstance(a, ast.Starred)}
        passed.update({k.arg: k.value for k in node.keywords if k.arg})
        if inner.id in passed:
            value = passed[inner.id]
            return ast.UnaryOp(op=ast.Not(), operand=value) if negate else value
    return None
