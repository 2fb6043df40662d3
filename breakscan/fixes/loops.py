"""``while_loop``: a ``while`` on a tensor condition as ``torch._higher_order_ops.while_loop``.

``while h.abs().max() > 1: h = h / 2`` breaks at the test on every step (a data-dependent
branch). When the body only rebinds names that are set before the loop, the loop is exactly
``while_loop(cond, body, carried)`` with the rebound names carried (eager, torch runs the same
Python loop; compiled, one graph). Body outputs must keep each carried value's shape and dtype;
the verifier finds out. Everything else is refused with the alternative named: an ``else:``, a
``break``/``continue``/``return``, a statement other than a name assignment, a name first set
inside the loop, and an early ``if <tensor>: break`` in a ``for`` loop (run the fixed trip
count and mask the steps after the condition held).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree, is_log_call

_ALTERNATIVE = ("run a fixed trip count and mask the steps after the condition holds "
                "(`done = done | cond; h = torch.where(done, h, step(h))`), or "
                "torch._higher_order_ops.while_loop")


def _early_break(t: Tree, line: int) -> None:
    ifs = [n for n in t.pos if isinstance(n, cst.If) and t.covers(n.test, line)]
    for node in ifs:
        if m.findall(node.body, m.Break()) and any(isinstance(a, (cst.For, cst.While))
                                                  for a in t.ancestors(node)):
            raise Refuse(f"an early `break` on `{t.snippet(node.test)}`: {_ALTERNATIVE}")


def _bound_before(t: Tree, fn: cst.FunctionDef, loop: cst.While) -> set[str]:
    names = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params,
                                    *fn.params.kwonly_params)}
    start = t.pos[loop].start.line
    for s in m.findall(fn.body, m.SimpleStatementLine() | m.For() | m.With()):
        if t.pos[s].end.line < start:
            names |= set(t.binds(s))
    return names


def _check_body(t: Tree, loop: cst.While) -> list[str]:
    if loop.orelse is not None:
        raise Refuse(f"the loop has an `else:`: {_ALTERNATIVE}")
    if m.findall(loop.body, m.Break() | m.Continue() | m.Return() | m.Yield()):
        raise Refuse(f"the loop body leaves early (break/continue/return): {_ALTERNATIVE}")
    for stmt in loop.body.body if isinstance(loop.body, cst.IndentedBlock) else [loop.body]:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and \
            len(stmt.body) == 1 else None
        plain = isinstance(small, cst.Assign) and len(small.targets) == 1 and \
            isinstance(small.targets[0].target, cst.Name) or \
            isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name)
        if not plain:
            raise Refuse(f"the loop body does more than rebind names (`{t.snippet(stmt)}`): "
                         f"{_ALTERNATIVE}")
        if any(is_log_call(c) for c in m.findall(stmt, m.Call())):
            raise Refuse(f"the loop body prints or logs: {_ALTERNATIVE}")
    return [n for n in t.binds(loop.body) if "." not in n]


def while_to_while_loop(t: Tree, line: int) -> tuple[str, cst.Module]:
    """The tensor ``while`` on ``line`` as ``torch._higher_order_ops.while_loop``."""
    loops = [n for n in t.pos if isinstance(n, cst.While) and t.covers(n.test, line)]
    if not loops:
        _early_break(t, line)
        raise NotHere(f"no `while` on line {line}")
    loop = max(loops, key=t.depth)
    fn = t.function_of(loop)
    if fn is None:
        raise Refuse("the loop is not inside a function")
    carried = _check_body(t, loop)
    missing = [n for n in carried if n not in _bound_before(t, fn, loop)]
    if missing:
        raise Refuse(f"`{missing[0]}` is first set inside the loop: while_loop carries only "
                     f"values set before it; {_ALTERNATIVE}")
    at = t.line(loop)
    names = ", ".join(carried)
    pack = f"({names},)" if len(carried) == 1 else f"({names})"
    cond = cst.parse_statement(f"def _cond_{at}({names}):\n    return 0\n")
    cond = cond.with_changes(body=cst.IndentedBlock(body=[cst.SimpleStatementLine(
        body=[cst.Return(value=loop.test)])]), leading_lines=loop.leading_lines)
    steps = list(loop.body.body) + [cst.parse_statement(f"return {pack}\n")]
    body = cst.parse_statement(f"def _body_{at}({names}):\n    pass\n").with_changes(
        body=cst.IndentedBlock(body=steps))
    call = cst.parse_statement(f"{pack} = torch._higher_order_ops.while_loop("
                               f"_cond_{at}, _body_{at}, {pack})\n")
    return (f"the tensor `while` as torch._higher_order_ops.while_loop carrying {names}",
            t.replace({id(loop): [cond, body, call]}))


def propose_while_loop(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``while_loop`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "while_loop", while_to_while_loop)
