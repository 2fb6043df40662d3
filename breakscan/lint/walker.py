"""Static pre-scan: the walk over the functions a model runs, running each check on each node.

The walker visits one function at a time from a work list (:mod:`breakscan.lint.calls` says
where it starts and which calls it follows), keeps the function's scope up to date as names are
bound (:mod:`breakscan.lint.tensors`: which values are tensors, so ``if x.shape[0] > 8`` is told
apart from ``if x.sum() > 0``), runs the checks of :mod:`breakscan.lint.checks` registered for
each kind of node, and keeps one finding per (line, category), noting a loop or ``try`` around it.

A finding is a lead, not a verdict (``status="static"``): a scan confirms or clears it. What was
measured on torch 2.13 decides what is flagged: a tensor ``assert`` is rewritten by Dynamo into
``torch._assert_async`` (no break) unless its message is computed, and ``random.randint``,
``randrange`` and ``uniform`` are replayed by Dynamo (no break), so those are not reported.
"""

from __future__ import annotations

import ast

from ..model.records import StaticFinding
from ..rules.bs001_item import RULE as ITEM
from ..rules.catalogue import rule_id
from .calls import Job, callee, first_jobs
from .checks import (ASSERT_CHECKS, BRANCH_CHECKS, BREAK_CATEGORIES, CALL_CHECKS, CALLEE_CHECKS,
                     COMPARE_CHECKS, LOOP_CHECKS, METHOD_CHECKS, SUBSCRIPT_CHECKS, WITH_CHECKS)
from .names import FileNames
from .tensors import FunctionScope

_LOOP_NOTE = "inside a loop/try: Dynamo skips the whole function (frame runs eagerly)"


class Walker(ast.NodeVisitor):
    """Visits one function at a time from a work list (callees are queued, not recursed into),
    tracking which local names hold tensors, and collects one finding per (line, category)."""

    def __init__(self, tree: ast.Module, source: str, path: str):
        self.path = path
        self.names = FileNames(tree)
        self.lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.found: dict[tuple[int, str], tuple[StaticFinding, bool]] = {}

    # -- running ---------------------------------------------------------------------------
    def run(self, only: str | None) -> list[StaticFinding]:
        self.queue: list[Job] = first_jobs(self.names, only, self.path)
        seen: set = set()
        while self.queue:
            job = self.queue.pop(0)
            key = (job.cls, id(job.func), job.loop_site is not None)
            if key not in seen:
                seen.add(key)
                self._lint_function(job)
        items = sorted(self.found.values(), key=lambda f: (f[0].line, f[0].category))
        return [finding for finding, _ in items]

    def _lint_function(self, job: Job) -> None:
        self.job, self.blocks = job, 0
        self.scope = FunctionScope.enter(self.names, job.cls, job.func, method=job.method,
                                         outer=job.outer)
        for stmt in job.func.body:
            self.visit(stmt)

    def _add(self, node: ast.AST, category: str, message: str, label: str | None = None) -> None:
        line = getattr(node, "lineno", 0)
        site = self.job.loop_site
        in_loop = category in BREAK_CATEGORIES and bool(self.blocks or site)
        if in_loop and self.blocks:
            message += f"; {_LOOP_NOTE}"
        elif in_loop:
            message += (f"; called from inside a loop/try (line {site}): Dynamo skips the whole "
                        "calling function (frame runs eagerly)")
        old = self.found.get((line, category))
        if old is None or (in_loop and not old[1]):
            code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
            function = self.job.label if label is None else \
                self.job.label + label if label.startswith(".") else label
            finding = StaticFinding(rule=rule_id(category), category=category, file=self.path,
                                    line=line, code=code, function=function, message=message)
            self.found[(line, category)] = (finding, in_loop)

    # -- running the checks (checks.py) -----------------------------------------------------
    def _run(self, table: list, node: ast.AST, *args: ast.AST | str, first: bool = False) -> bool:
        """Run a table of checks on ``node``; True when one reported (with ``first``, stop)."""
        reported = False
        for category, check in table:
            message = check(self.scope, node, *args)
            if isinstance(message, tuple):  # reported at another node (inside a hook)
                self._add(message[1], category, message[0], message[2])
                reported = True
            elif message is not None:
                self._add(node, category, message)
                reported = True
                if first:
                    break
        return reported

    def _check_test(self, node: ast.AST, test: ast.AST, what: str) -> None:
        self._run(BRANCH_CHECKS, node, test, what)

    def _compile_guard(self, test: ast.AST) -> str | None:
        """``if not torch.compiler.is_compiling():`` -> its body never runs under Dynamo.

        Also ``if cond and not torch.compiler.is_compiling():``: one false operand of an ``and``
        is enough to skip the body.
        """
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and \
                any(self._compile_guard(v) == "body" for v in test.values):
            return "body"
        neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        inner = test.operand if neg else test
        qual = self.scope.qual(inner.func) if isinstance(inner, ast.Call) else None
        if qual and qual.startswith("torch.") and \
                qual.rsplit(".", 1)[-1] in ("is_compiling", "is_dynamo_compiling"):
            return "body" if neg else "orelse"
        return None

    def _follow(self, node: ast.Call) -> None:
        """Queue the function this call runs, when it is defined in this file."""
        hit = callee(self.scope, self.job, node.func)
        if hit is None or self._run(CALLEE_CHECKS, node, hit[1], first=True):
            return  # a disabled function: calling it is the break, its body never traced
        site = self.job.loop_site or (node.lineno if self.blocks else None)
        scope = self.scope
        outer = frozenset(scope.tensors) if hit[1] in scope.nested.values() else frozenset()
        self.queue.append(Job(*hit, site, outer))

    # -- visitors --------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self._run(METHOD_CHECKS, node)
        if not self._run(CALL_CHECKS, node, first=True):
            self._follow(node)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        guard = self._compile_guard(node.test)
        if guard is None:
            self._check_test(node, node.test, "`if`")
        self.visit(node.test)
        for stmt in (node.body if guard != "body" else []) + \
                (node.orelse if guard != "orelse" else []):
            self.visit(stmt)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._check_test(node, node.test, "a conditional expression")
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._check_test(node, node.test, "`while`")  # measured: the test itself is no loop break
        self.visit(node.test)
        self._in_block(node.body)
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.blocks += 1  # a loop check's break is in the loop's body (sizes used there)
        self._run(LOOP_CHECKS, node, node.iter)
        self.blocks -= 1
        it, scope = node.iter, self.scope
        self._bind_loop_target(node.target, it, node.lineno)
        if isinstance(node.target, ast.Name) and isinstance(it, ast.Attribute) and \
                scope.is_self(it.value) and \
                (held := scope.attrs.get(it.attr, "")).startswith("items:"):
            scope.items[node.target.id] = held[6:]  # for block in self.blocks: block(x)
        self._in_block(node.body)
        for stmt in node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def _bind_loop_target(self, target: ast.AST, it: ast.AST, line: int) -> None:
        """What a loop's names hold: an element of a tensor is a tensor (``int(t) for t in x``)."""
        scope = self.scope
        if (line, ITEM.category) in self.found:  # sizes from a tensor: reported at the loop
            scope.bind(target, False)
        elif isinstance(it, ast.Call) and scope.qual(it.func) == "enumerate" and it.args \
                and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            scope.bind(target.elts[0], False)
            scope.bind(target.elts[1], scope.kind(it.args[0]))
        else:
            scope.bind(target, scope.kind(it) if not isinstance(it, ast.Call) or
                       scope.qual(it.func) != "range" else False)

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp |
                       ast.DictComp) -> None:
        """Generators first, so the element is read with its names bound (Python's own order);
        the names are the comprehension's own, so the function's are restored after it."""
        scope = self.scope
        held = (set(scope.tensors), set(scope.params), set(scope.scalars))
        for k, generator in enumerate(node.generators):
            self.blocks += k > 0  # only the first iterable is read outside the loop
            self.visit(generator)
            self.blocks -= k > 0
        self.blocks += 1  # a break in the element: Dynamo skips the comprehension's frame
        for part in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)):
            self.visit(part)
        self.blocks -= 1
        scope.tensors, scope.params, scope.scalars = held

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def visit_Try(self, node: ast.Try) -> None:
        self._in_block(node.body)
        for stmt in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def _in_block(self, body: list[ast.stmt]) -> None:
        self.blocks += 1
        for stmt in body:
            self.visit(stmt)
        self.blocks -= 1

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._run(SUBSCRIPT_CHECKS, node)
        self.generic_visit(node)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self._run(WITH_CHECKS, item.context_expr)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Compare(self, node: ast.Compare) -> None:
        self._run(COMPARE_CHECKS, node)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self._run(ASSERT_CHECKS, node)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.visit(node.iter)
        self._run(LOOP_CHECKS, node.iter, node.iter)
        self._bind_loop_target(node.target, node.iter, node.iter.lineno)
        self.blocks += 1
        for condition in node.ifs:
            self.visit(condition)
        self.blocks -= 1

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        kind = self.scope.kind
        for target in node.targets:
            self.visit(target)
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                for t, v in zip(target.elts, node.value.elts):
                    self.scope.bind(t, kind(v))
            else:
                self.scope.bind(target, kind(node.value))
                self.scope.note(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.scope.bind(node.target, self.scope.kind(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if self.scope.kind(node.value):
            self.scope.bind(node.target, True)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.scope.bind(node.target, self.scope.kind(node.value))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.nested[node.name] = node  # linted only if called (see _follow)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        pass  # a class defined inside a function: not run by the call
