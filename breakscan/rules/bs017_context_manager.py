"""BS017 context_manager: Unsupported context manager.

The rule's whole behaviour: its entry, its advice for the managers seen in real models, its
lint checks and its fix.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from .checks import SKIPS_FRAME, WITH_CHECKS, Scope, register, text_of
from .model import FixSpec, Match, Rule

_BACKEND_FLAGS = re.compile(r"torch\.backends\.\w+\.(flags|sdp_kernel)\(|sdpa_kernel\(")
_FORK_RNG = re.compile(r"\bfork_rng\(")
_LOCK = re.compile(r"lock\b|Lock\(|\bmutex", re.IGNORECASE)


def _advise(brk: Any, context: Any) -> str:
    """What works for the managers seen in real models; "" for others (the rule's text).
    Never a guard that drops what the block does, never a lock held twice."""
    code = brk.code or ""
    if (flags := _BACKEND_FLAGS.search(code)):
        return ("These are global backend flags, read when each kernel runs: remove the `with` "
                "from the model and set them around the call in the caller (`with "
                f"{_call_text(code, flags.start())}: out = compiled(x)`, which "
                "`--fix` verifies as hoist_context); they then apply to the whole call, not only "
                "this block.")
    if _FORK_RNG.search(code):
        return ("`fork_rng()` restores the random state after the block, so its draws do not "
                "advance the global generator. No guard keeps that: skipping the block when "
                "compiling (`torch.compiler.is_compiling()`) would drop its draws from the "
                "compiled model. Move the `with torch.random.fork_rng():` to the caller, around "
                "the model call (`--fix` verifies it as hoist_context): the block draws the same "
                "numbers, and no draw of the call then advances the global generator; or draw "
                "the values in the caller inside `fork_rng()` and pass them in. Where the "
                "caller cannot enter it (a library's training loop), removing the `with` keeps "
                "the block's numbers on the first draw but lets them advance the global "
                "generator (`--fix` verifies it as drop_fork_rng, labelled as a change).")
    inner = context.inner_site(brk)  # taken deeper than the line shown (a library's `with`)
    if inner is not None and inner.function == "__get__" and \
            inner.file.replace("\\", "/").endswith("/functools.py"):
        return ("A `functools.cached_property` read on this line takes its lock on the first "
                "read only (later reads find the value cached). Read it, or call the model "
                "once, before compiling (`--fix` verifies `warm_up`), or compute the value in "
                "`__init__`: then forward compiles without this break.")
    if (_LOCK.search(code) and brk.owner != "user") or \
            (inner is not None and _LOCK.search(inner.code or "")):
        return ("A lock taken inside the library: no change of yours removes this `with`. If "
                "it guards a one-time setup (taken on the first call only), call the model once "
                "before compiling it (`--fix` verifies `warm_up`); otherwise accept the break.")
    if _LOCK.search(code):
        return ("Take the lock in the caller around the model call and remove it from the "
                "model (holding it in both deadlocks a non-reentrant `threading.Lock`).")
    return ""


def _call_text(code: str, start: int) -> str:
    """The call starting at ``start`` up to its closing parenthesis (the flags alone, not the
    other managers of the same `with`)."""
    depth = 0
    for i in range(code.index("(", start), len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return code[start:i + 1]
    return code[start:].rstrip(":")


RULE = Rule(
    "BS017", "context_manager", "context-manager",
    'Unsupported context manager',
    why='Dynamo does not know how to enter this `with` object (a `threading.Lock`, a custom '
        'C-level manager, a profiler object escaping), and a break inside it skips the '
        'function.',
    suggestion='Hold the lock (or other manager) in the caller around the model call, or use '
               'a supported manager (`torch.no_grad`, `torch.autocast`).',
    before='with LOCK:\n    y = y + 1',
    after='y = y + 1  # caller: with LOCK: out = model(x)',
    # GB0208 "torch.* op returned non-Tensor" at a `with` line: the call that makes the
    # manager (`cudnn.flags(...)`, `fork_rng()`); torch 2.14 and 2.15 log only it.
    code_matches=(Match("GB0007", r"^\s*(async\s+)?with\b"),
                  Match("GB0208", r"^\s*(async\s+)?with\b")),
    advice_by_id=(("GB0142", 'Dynamo cannot enter this `with` object (a `threading.Lock`, a custom manager): '
                          'take the lock (or enter the manager) in the caller around the model call; '
                          'inside forward keep only managers Dynamo knows (`torch.no_grad`, '
                          '`torch.autocast`).'),),
    ids=('GB0066 GB0142 GB0209 GB0212 GB0221 GB0262 GB0263 GB0274 GB0279 GB0370 '
         'GB2533 '
         'GB2473 GB4996 GB6956 GB2710'),
    advise=_advise)


FIXES: tuple[FixSpec, ...] = (
    # A global torch setting entered in forward (cuDNN's flags, fork_rng): the `with` moved to
    # the caller around the model call (fixes/hoist.py); verified with the caller's `with`. Tried
    # on every break of the family, silent where no such `with` is on the line (rule None).
    FixSpec("hoist_context", "source", None, also_for=("context_manager",),
            title="move the `with` of a global torch setting out of the model, around the call",
            rewrite="hoist"),
    # The same `with torch.random.fork_rng():` removed where the caller cannot wrap the call:
    # its draws then advance the global generator, so it is judged against its own eager run
    # and labelled "verified: changes semantics" (Dynamo cannot fork the state inside a graph:
    # a torch.Generator made in forward breaks, get/set_rng_state are skipped).
    FixSpec("drop_fork_rng", "source", None, also_for=("context_manager",),
            title="remove a `with torch.random.fork_rng():` the caller cannot enter, keeping "
                  "its block (its draws then advance the global generator)",
            rewrite="hoist"),
)


@register(WITH_CHECKS, RULE)
def lock_entered(w: Scope, expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Call) and w.names.made_kind(expr, w.locals) == "lock":
        return f"`with {text_of(expr)}:` makes and enters a lock, which Dynamo does not trace: " \
               f"graph break ({RULE.gb('GB0007')}, then " \
               f"{RULE.gb('GB0142')}), {SKIPS_FRAME}; take the lock in the caller"
    held = w.names.made.get(expr.id) if isinstance(expr, ast.Name) and \
        expr.id not in w.locals else \
        w.attrs.get(expr.attr) if isinstance(expr, ast.Attribute) and \
        w.is_self(expr.value) else None
    if held == "lock":
        return f"`with {text_of(expr)}:` enters a threading lock, a context manager Dynamo " \
               f"does not support: graph break ({RULE.gb('GB0142')}), " \
               f"{SKIPS_FRAME}; take the lock in the caller"
    return None


_GLOBAL_MANAGERS = {"fork_rng": "forks the random state", "flags": "sets global backend flags",
                    "sdp_kernel": "sets global backend flags"}


@register(WITH_CHECKS, RULE)
def torch_manager(w: Scope, expr: ast.AST) -> str | None:
    """``torch.random.fork_rng()``, ``torch.backends.cudnn.flags(...)``: managers written as
    generators, which Dynamo does not enter."""
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute):
        return None
    name = text_of(expr.func, 80)
    what = _GLOBAL_MANAGERS.get(expr.func.attr)
    if what is None or not name.startswith("torch.") or \
            (expr.func.attr != "fork_rng" and ".backends." not in name):
        return None
    return f"`with {text_of(expr)}:` {what} in a generator-based context manager, which " \
           f"Dynamo does not enter: graph break ({RULE.gb('GB0142')}), {SKIPS_FRAME}"
