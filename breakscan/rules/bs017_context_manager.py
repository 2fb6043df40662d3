"""BS017 context_manager: Unsupported context manager.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import SKIPS_FRAME, WITH_CHECKS, Scope, register, text_of
from .model import Match, Rule

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
    code_matches=(Match("GB0007", r"^\s*(async\s+)?with\b"),),
    advice_by_id=(("GB0142", 'Dynamo cannot enter this `with` object (a `threading.Lock`, a custom manager): '
                          'take the lock (or enter the manager) in the caller around the model call; '
                          'inside forward keep only managers Dynamo knows (`torch.no_grad`, '
                          '`torch.autocast`).'),),
    ids=('GB0066 GB0142 GB0209 GB0212 GB0221 GB0262 GB0263 GB0274 GB0279 GB0370 '
         'GB2533 '
         'GB2473 GB4996'))


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
