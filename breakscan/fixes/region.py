"""``disable_region``: the loop, ``with`` or ``try`` holding a break moved into a small
module-level helper decorated with ``@torch.compiler.disable``, and called in its place.

Measured on torch 2.13: a break inside a ``for``/``while`` loop, a ``try`` or the ``with`` block
of a context manager Dynamo cannot trace makes Dynamo skip the whole function (0 graphs, it runs
eagerly); a disabled call at the same place skips it just the same, but the whole loop, ``with``
or ``try`` moved into a disabled helper lets the rest of the function compile (0 -> 2 graphs).
In straight-line code a disabled call is still one break where the old one was (same graphs),
so the region is always the outermost loop/``with``/``try`` around the line, and a break in
straight-line code is refused. Inputs: the names the region reads that are bound before it;
outputs: the names it binds that are read after it (returned as a tuple). Refused when the
region returns, yields, awaits, declares ``global``/``nonlocal``, uses ``super()``, a private
name or ``locals()``, is the whole function, or sits in a nested function (its free names
would not reach a module-level helper). The verifier must see the model keep every graph it
had (``gain.decide``): the fix must not make the model more eager.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree

_REGIONS = (cst.For, cst.While, cst.With, cst.Try)
_NEVER = (m.Return() | m.Yield() | m.Await() | m.Global() | m.Nonlocal() | m.Del()
          | m.Call(func=m.Name("super") | m.Name("locals") | m.Name("vars")))


def _region(t: Tree, line: int) -> tuple[cst.BaseCompoundStatement, cst.FunctionDef]:
    stmt = t.innermost((cst.SimpleStatementLine, cst.BaseCompoundStatement), line)
    fn = t.function_of(stmt) if stmt is not None else None
    if fn is None:
        raise NotHere(f"line {line} is not inside a function")
    if t.function_of(fn) is not None:
        raise Refuse(f"`{fn.name.value}` is nested in a function: its free names would not "
                     "reach a module-level helper")
    chain = [stmt] + [a for a in t.ancestors(stmt) if t.function_of(a) is fn or a is fn]
    regions = [n for n in chain[:chain.index(fn)] if isinstance(n, _REGIONS)]
    if not regions:
        raise Refuse("the break is in straight-line code: a disabled call there is still one "
                     "break (same graphs on torch 2.13); only a loop, `with` or `try` around "
                     "it makes moving it pay")
    region = regions[-1]
    if (bad := m.findall(region, _NEVER)):
        raise Refuse(f"the region uses `{t.snippet(bad[0])}`, which a helper function cannot "
                     "do in its place")
    private = [n.value for n in m.findall(region, m.Name()) if n.value.startswith("__")
               and not n.value.endswith("__")]
    if private:
        raise Refuse(f"`{private[0]}` is name-mangled in the class: not the same name in a "
                     "module-level helper")
    rest = [s for s in fn.body.body if s is not region]
    if not rest or all(m.matches(s, m.SimpleStatementLine(body=[m.Return(value=m.Name())
                                                                | m.Return(value=None)]))
                       for s in rest):
        raise Refuse("the region is the whole function: disable the function itself "
                     "(torch.compiler.disable) instead")
    return region, fn


def _io(t: Tree, region: cst.CSTNode, fn: cst.FunctionDef) -> tuple[list[str], list[str]]:
    start, end = t.pos[region].start.line, t.pos[region].end.line
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params,
                                     *fn.params.kwonly_params)]
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.append(star.name.value)
    statements = m.findall(fn.body, m.SimpleStatementLine() | m.For() | m.With())
    before = set(params) | {n for s in statements if t.pos[s].end.line < start
                            for n in t.binds(s)}
    after: set[str] = set()
    for s in statements:
        if t.pos[s].start.line > end and isinstance(s, cst.SimpleStatementLine):
            after |= set(t.reads(s))
    reads = [n for n in t.reads(region) if "." not in n]
    inputs = [n for n in reads if n in before]
    outputs = [n for n in t.binds(region) if "." not in n and n in after]
    return inputs, outputs


def _unique(module: cst.Module, name: str) -> str:
    taken = {n.value for n in m.findall(module, m.Name())}
    candidate, k = name, 1
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    return candidate


def disable_region(t: Tree, line: int) -> tuple[str, cst.Module]:
    """Move the loop/``with``/``try`` around ``line`` into a disabled helper and call it."""
    region, fn = _region(t, line)
    inputs, outputs = _io(t, region, fn)
    name = _unique(t.module, f"_{fn.name.value.strip('_')}_eager_{t.line(region)}")
    call = f"{name}({', '.join(inputs)})"
    text = f"{', '.join(outputs)} = {call}" if outputs else call
    placed = cst.parse_statement(text + "\n").with_changes(leading_lines=region.leading_lines)
    body = [region.with_changes(leading_lines=())]
    if outputs:
        body.append(cst.parse_statement(f"return {', '.join(outputs)}\n"))
    helper = cst.FunctionDef(
        name=cst.Name(name), body=cst.IndentedBlock(body=body),
        params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in inputs]),
        decorators=[cst.Decorator(cst.parse_expression("torch.compiler.disable"))])
    top = next(a for a in [fn, *t.ancestors(fn)] if t.parent.get(a) is t.module)
    at = list(t.module.body).index(top)
    module = t.replace({id(region): [placed]})
    new_body = list(module.body)
    helper = helper.with_changes(leading_lines=new_body[at].leading_lines)
    new_body[at] = new_body[at].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    new_body.insert(at, helper)
    kind = {cst.For: "for loop", cst.While: "while loop", cst.With: "with block",
            cst.Try: "try block"}[type(region)]
    return (f"run the {kind} at line {t.line(region)} eagerly: moved into "
            f"@torch.compiler.disable {name}()", module.with_changes(body=new_body))


def propose_disable_region(source: str, line: int, category: str, call: str | None) -> Rewrite:
    """The ``disable_region`` fix at ``line`` (fixes/source_fixes.py)."""
    return apply_fix(source, line, "disable_region", disable_region)
