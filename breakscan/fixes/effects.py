"""``guard_side_effect``: a statement whose result no tensor computation uses, run only eagerly.

Timers (``t0 = time.perf_counter()``), counters (``self.calls += 1``, ``COUNTS[k] += 1``),
``torch.manual_seed(...)``, asserts, checks and saves (``torch.testing.assert_close``,
``torch.save``, ``np.save``, an ``if`` whose block only raises, warns or logs), frame probes
(``sys._getframe``, ``inspect.stack``), records (a named container filled by a statement,
``self.callers.append(...)``: what it fills counts as assigned), print/logging and
``warnings.warn`` are wrapped in ``if not torch.compiler.is_compiling():`` (Dynamo folds the test,
so nothing breaks; an eager call still runs them). The print guard generalised: when a later
statement reads what the guarded one assigns, that statement must be a side effect too and is
guarded with it (a timer's ``t0`` and the line that stores the elapsed time); any other later use
(a tensor computation, a ``return``) refuses, since compiled the name would be unset. A compiled
call no longer runs the statement at all (a counter stops counting there): the verifier compares
outputs, which is what the fix promises to keep.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree, is_log_call

GUARD = "not torch.compiler.is_compiling()"
_TIMERS = frozenset({"time.perf_counter", "time.time", "time.monotonic", "time.process_time",
                     "time.perf_counter_ns", "time.time_ns", "time.monotonic_ns",
                     "perf_counter", "perf_counter_ns", "monotonic"})
_SEEDS = frozenset({"torch.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
                    "random.seed", "np.random.seed", "numpy.random.seed"})
_IDENTITY = frozenset({"id", "hash"})
# Checks and saves that only the host needs: their result is nothing the model computes.
_HOST_CALLS = frozenset({"torch.save", "np.save", "numpy.save", "np.savez", "numpy.savez",
                         "pickle.dump", "json.dump", "torch.testing.assert_allclose"})
_HOST_PREFIXES = ("torch.testing.assert_", "np.testing.assert_", "numpy.testing.assert_")
# Where am I / who called: a probe of the interpreter, never of a tensor.
_PROBES = frozenset({"sys._getframe", "inspect.currentframe", "inspect.stack",
                     "traceback.extract_stack", "traceback.format_stack", "os.getpid",
                     "threading.get_ident", "socket.gethostname"})
# A container filled by a statement (its receiver is what the statement "assigns").
_MUTATORS = frozenset({"append", "extend", "add", "update", "insert", "appendleft"})
_LOOPS = (cst.For, cst.While)


def _called(node: cst.CSTNode) -> set[str]:
    return {get_full_name_for_node(c.func) or "" for c in m.findall(node, m.Call())}


def _only_checks(block: cst.BaseSuite) -> bool:
    """Every statement of the block raises, warns or logs: a check, nothing computed."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for stmt in body:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else None
        if not smalls:
            return False
        for small in smalls:
            if isinstance(small, cst.Raise):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                    is_log_call(small.value):
                continue
            return False
    return True


def _kind(stmt: cst.CSTNode) -> str | None:
    """What side effect a one-statement line is, or None when it is not one."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and _only_checks(stmt.body):
        return "check"  # `if torch.isnan(h).any(): raise ValueError(...)`
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assert):
        return "assert"
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if is_log_call(call):
            return "log"
        name = get_full_name_for_node(call.func) or ""
        if name in _SEEDS:
            return "seed"
        if name in _HOST_CALLS or name.startswith(_HOST_PREFIXES):
            return "check"
        if _receiver(call):
            return "record"  # self.callers.append(...): read later only by side effects
        return None
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None:
        called = _called(small.value)
        if called & _TIMERS:
            return "timer"
        if called & _IDENTITY:
            return "identity"
        if called & _PROBES or any(c.startswith("sys._getframe") for c in called):
            return "probe"
        if isinstance(small, cst.AugAssign) and isinstance(
                small.value, (cst.Integer, cst.Float)) and not isinstance(small.target, cst.Name):
            return "counter"  # self.calls += 1, COUNTS[k] += 1
        if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and \
                isinstance(small.value, (cst.Integer, cst.Float)):
            return "counter"
    return None


def _receiver(call: cst.Call) -> str | None:
    """``self.callers`` of ``self.callers.append(...)``: a named container a statement fills."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _MUTATORS:
        return None
    receiver = func.value
    if isinstance(receiver, cst.Name):
        return receiver.value
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and \
            receiver.value.value == "self":
        return f"self.{receiver.attr.value}"
    return None


def _filled(stmt: cst.CSTNode) -> list[str]:
    """The container a ``record`` statement fills, as ``Tree.binds`` names it."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
            isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call):
        found = _receiver(stmt.body[0].value)
        return [found] if found else []
    return []


def _guarded(t: Tree, stmt: cst.CSTNode) -> str | None:
    is_compiling = m.Call(func=m.Name("is_compiling") | m.Attribute(attr=m.Name("is_compiling")))
    for node in t.ancestors(stmt):
        if isinstance(node, cst.If) and m.findall(node.test, is_compiling):
            return t.snippet(node.test)
    return None


def _later(t: Tree, fn: cst.FunctionDef, stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The function's statements that run after ``stmt`` (all of an enclosing loop's, too)."""
    loops = [a for a in t.ancestors(stmt) if isinstance(a, _LOOPS)]
    start = t.pos[loops[-1]].start.line if loops and t.function_of(loops[-1]) is fn else \
        t.pos[stmt].end.line + 1
    return [n for n in m.findall(fn.body, m.SimpleStatementLine() | m.If() | m.While() | m.For())
            if n is not stmt and t.line(n) >= start]


def _own_text(t: Tree, node: cst.CSTNode) -> cst.CSTNode:
    """What a compound statement itself reads (its test or iterable), not its body."""
    if isinstance(node, (cst.If, cst.While)):
        return node.test
    if isinstance(node, cst.For):
        return node.iter
    return node


def _closure(t: Tree, fn: cst.FunctionDef, first: cst.CSTNode) -> list[cst.CSTNode]:
    """``first`` and every later side-effect statement reading what the group assigns; refuse
    when anything else reads it."""
    group, todo = [first], [first]
    while todo:
        stmt = todo.pop()
        bound = set(t.binds(stmt)) | set(_filled(stmt))
        if not bound:
            continue
        for node in _later(t, fn, stmt):
            used = bound & set(t.reads(_own_text(t, node)))
            if isinstance(node, cst.SimpleStatementLine):
                small = node.body[0] if len(node.body) == 1 else None
                if isinstance(small, cst.AugAssign):  # `self.calls += 1` reads self.calls
                    used |= bound & set(t.binds(node))
            if not used or node in group:
                continue
            name = sorted(used)[0]
            if _kind(node) is None or _guarded(t, node) is not None:
                what = "returned" if m.findall(node, m.Return()) else "used"
                unset = "stay empty" if name in _filled(stmt) else "be unset"
                raise Refuse(f"`{name}` is {what} later on line {t.line(node)} "
                             f"(`{t.snippet(node)}`): guarded, it would {unset} when compiled")
            group.append(node)
            todo.append(node)
    return sorted(group, key=t.line)


def guard_side_effect(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Wrap the side-effect statement on ``line`` (and the later ones reading what it assigns)
    in ``if not torch.compiler.is_compiling():``."""
    stmt = t.innermost((cst.SimpleStatementLine, cst.BaseCompoundStatement), line)
    if stmt is None or _kind(stmt) is None:
        raise NotHere(f"no timer, counter, seed, assert, check, probe, record or logging "
                      f"statement on line {line}")
    fn = t.function_of(stmt)
    if fn is None:
        raise Refuse("the statement is not inside a function")
    if (where := _guarded(t, stmt)) is not None:
        raise Refuse(f"already guarded by `if {where}:`")
    if m.findall(stmt, m.NamedExpr()):
        raise Refuse("the statement assigns with `:=` inside an expression")
    if _kind(stmt) == "seed":
        _refuse_draw_after(t, fn, stmt)
    group = _closure(t, fn, stmt)
    edits = {}
    for node in group:
        edits[id(node)] = [cst.If(test=cst.parse_expression(GUARD),
                                  body=cst.IndentedBlock(body=[node.with_changes(
                                      leading_lines=())]),
                                  leading_lines=node.leading_lines)]
    more = [str(t.line(n)) for n in group if n is not stmt]
    also = f" (and line{'s' if len(more) > 1 else ''} {', '.join(more)})" if more else ""
    what = f"if {t.snippet(stmt.test)}: ..." if isinstance(stmt, cst.If) else t.snippet(stmt)
    return (f"run `{what}`{also} only eagerly: guard it with "
            "torch.compiler.is_compiling()", t.replace(edits))


_DRAW = re.compile(r"\b(rand\w*|randn\w*|randint\w*|randperm|normal_?|bernoulli_?|multinomial|"
                   r"dropout\w*|uniform_?|random|choice|shuffle|exponential_)\s*\(")


def _refuse_draw_after(t: Tree, fn: cst.CSTNode, stmt: cst.CSTNode) -> None:
    """Seeding decides the random numbers drawn after it: guarded, compiled calls would draw
    others (the verifier seeds every compared call the same way and could not tell)."""
    for node in _later(t, fn, stmt):
        if _DRAW.search(t.module.code_for_node(node)):
            raise Refuse(f"the seeding decides the random numbers drawn on line {t.line(node)} "
                         f"(`{t.module.code_for_node(node).strip().splitlines()[-1].strip()}`): guarded, compiled calls would "
                         "draw others; seed once outside forward instead")


def propose_guard_side_effect(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``guard_side_effect`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "guard_side_effect", guard_side_effect)
