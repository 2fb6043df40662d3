"""``hoist_context``: a ``with`` over a global torch setting moved out of the model, to the
caller around the model call.

``torch.backends.cudnn.flags(...)`` (and the other backend ``flags``/``sdp_kernel``) and
``torch.random.fork_rng()`` are written as generators, which Dynamo does not enter: the frame is
skipped from the ``with`` on. What they do is global (flags read when each kernel runs; the
random state saved and restored), so the same ``with`` around the whole model call keeps what
the block computes while forward compiles without it. The rewrite removes the ``with`` and keeps
its block; the verifying child calls the rewritten model inside the manager (``Switch.around``,
rebuilt here by :func:`caller_manager` from its text: a torch function of this list with
constant arguments, nothing else is evaluated). What widens, said in the title: the flags then
cover the whole call (for ``fork_rng``, every draw of the call, not only the block's, leaves the
global random state as it was). With other managers in the same ``with`` (``torch.no_grad(),
cudnn.flags(...)``), only the setting leaves it. Refused: two global settings in one ``with``,
``as name`` (the block uses what the manager returns), arguments that are not constants,
``async with``.

``drop_fork_rng``: the same ``fork_rng()`` removed where the caller cannot enter it (a library's
training loop calls the model; its arguments are the model's own values). Its draws then
advance the global generator, which Dynamo cannot fork inside a graph (a ``torch.Generator`` made
in forward breaks; ``get_rng_state``/``set_rng_state`` are skipped), so the rewrite says what it
changes (``Rewrite.changes``) and is judged against its own eager run where the fixed model draws.
"""

from __future__ import annotations

import ast
import re
from contextlib import AbstractContextManager
from typing import Any, Callable

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .rewrite import Rewrite, apply_fix
from .syntax import NotHere, Refuse, Tree

# The managers whose effect is global, so a caller's ``with`` does the same for the model call.
_GLOBAL = re.compile(r"^torch\.(backends\.\w+\.(flags|sdp_kernel)|random\.fork_rng)$")


def _manager(t: Tree, line: int, *,
             caller: bool = True) -> tuple[cst.With, int, cst.FunctionDef, str]:
    """The ``with`` on ``line``, the position of its global setting among its items, the
    function it is in and the setting's call as text (``caller``: one the caller can enter,
    with constant arguments)."""
    stmt = t.innermost((cst.With,), line)
    if stmt is None or t.line(stmt) != line:
        raise NotHere(f"no `with` statement starts on line {line}")
    calls = [item.item for item in stmt.items]
    found = [i for i, c in enumerate(calls) if isinstance(c, cst.Call) and
             _GLOBAL.match(get_full_name_for_node(c.func) or "")]
    if not found:
        raise NotHere("the `with` enters no global torch setting (backend flags, fork_rng)")
    if len(found) > 1:
        raise Refuse(f"the `with` enters {len(found)} global settings: move them by hand")
    if stmt.asynchronous is not None:
        raise Refuse("an `async with`: the caller cannot enter it around a plain call")
    at = found[0]
    if stmt.items[at].asname is not None:
        raise Refuse("the block uses what the manager returns (`as "
                     f"{t.snippet(stmt.items[at].asname.name)}`)")
    fn = t.function_of(stmt)
    if fn is None:
        raise NotHere(f"line {line} is not inside a function")
    text = t.module.code_for_node(calls[at]).strip()
    try:
        if caller:
            parsed_manager(text)
    except ValueError as exc:
        raise Refuse(str(exc)) from None
    return stmt, at, fn, " ".join(text.split())


def hoist_context(t: Tree, line: int, *, caller: bool = True) -> tuple[str, cst.Module]:
    """Drop the global setting from the ``with`` on ``line``: the whole ``with`` (its block
    kept, its leading comments too) when it entered only that, else just that item."""
    stmt, at, fn, text = _manager(t, line, caller=caller)
    if len(stmt.items) == 1:
        body = list(stmt.body.body)
        body[0] = body[0].with_changes(leading_lines=list(stmt.leading_lines) +
                                       list(body[0].leading_lines))
    else:
        items = [item for i, item in enumerate(stmt.items) if i != at]
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        body = [stmt.with_changes(items=items)]
    widens = ("every random draw of the call, not only the block's, then leaves the global "
              "random state as it was" if "fork_rng" in text else
              "the setting then covers the whole call, not only this block")
    title = (f"move `with {text}:` out of {fn.name.value}() to the caller: `with {text}: out = "
             f"compiled(x)` ({widens})")
    return title, t.replace({id(stmt): body})


def parsed_manager(text: str) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """The torch function ``text`` calls and its arguments: only one of :data:`_GLOBAL`, with
    constant arguments (``ValueError`` otherwise). The text comes from the user's source through
    the fix request: it is parsed, never evaluated."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ValueError(f"`{text}` is not a call") from None
    if not isinstance(node, ast.Call):
        raise ValueError(f"`{text}` is not a call")
    name = ast.unparse(node.func)
    if not _GLOBAL.match(name):
        raise ValueError(f"`{name}` is not a global torch setting the caller can enter")
    if any(k.arg is None for k in node.keywords):
        raise ValueError(f"`{name}` is given **kwargs: its arguments are not constants")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        raise ValueError(f"the arguments of `{name}` are not constants: the caller would need "
                         "the model's own values") from None
    return name, args, kwargs


def caller_manager(text: str) -> Callable[[], AbstractContextManager[Any]]:
    """The manager of :func:`parsed_manager`, made by this torch's function of that name."""
    import torch

    name, args, kwargs = parsed_manager(text)
    factory: Any = torch
    for part in name.split(".")[1:]:
        factory = getattr(factory, part, None)
    if not callable(factory):
        raise ValueError(f"this torch has no `{name}`")
    return lambda: factory(*args, **kwargs)


def call_inside(loaded: Any, around: str) -> None:
    """The model called inside ``around`` (a global torch setting the rewrite moved out of it),
    as the user's caller would: every call, eager and compiled, enters it; only the model's
    method is compiled, the caller's ``with`` stays eager (``compile_only``)."""
    from ..errors import UsageError

    try:
        manager = caller_manager(around)
    except ValueError as exc:
        raise UsageError(f"not applicable: {exc}") from None
    call = loaded.fn

    def caller(*args: Any, **kwargs: Any) -> Any:
        with manager():
            return call(*args, **kwargs)

    loaded.fn = caller
    loaded.compile_only = loaded.method


# What dropping ``fork_rng()`` changes, said where the fixed model draws (fixes/fix_job.py).
FORK_DROPPED = ("its random draws then advance the global generator: the numbers drawn after "
                "them (later in the call, in later calls and in the caller) differ from the "
                "original's, which `fork_rng()` put back")


def drop_fork_rng(t: Tree, line: int) -> tuple[str, cst.Module]:
    """The ``with torch.random.fork_rng():`` on ``line`` removed, its block kept, for a model
    whose caller cannot enter it around the call (a library's training loop): the same rewrite
    as :func:`hoist_context`, judged without the caller's ``with``."""
    _stmt, _at, fn, text = _manager(t, line, caller=False)  # its arguments may be the model's
    if "fork_rng" not in text:
        raise NotHere("the `with` enters no `fork_rng()`")
    _title, module = hoist_context(t, line, caller=False)
    return (f"remove `with {text}:` from {fn.name.value}() and keep its block, where the "
            "caller cannot enter it around the model call (its draws then advance the global "
            "random generator)"), module


def propose_drop_fork_rng(source: str, line: int, category: str, call: str | None) -> Rewrite:
    rewrite = apply_fix(source, line, "drop_fork_rng", drop_fork_rng, needs_torch=False)
    if rewrite.new_source is not None:
        rewrite.changes = FORK_DROPPED
    return rewrite


def propose_hoist_context(source: str, line: int, category: str, call: str | None) -> Rewrite:
    found: list[str] = []  # the setting's text, kept from the one parse the rewrite makes

    def handler(t: Tree, at: int) -> tuple[str, cst.Module]:
        title, module = hoist_context(t, at)
        found.append(_manager(t, at)[3])
        return title, module

    rewrite = apply_fix(source, line, "hoist_context", handler, needs_torch=False)
    if rewrite.new_source is not None and found:
        rewrite.around = found[0]
    return rewrite
