"""BS020 hook: Hook registered or run in the compiled region.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, Scope, register, text_of
from .model import Match, Rule

RULE = Rule(
    "BS020", "hook", "hook-in-forward",
    'Hook registered or run in the compiled region',
    why='A tensor/module hook registered in forward whose body has a side effect (appending, '
        'logging), or a backward hook that needs compiled autograd.',
    suggestion='Register hooks outside forward (in `__init__` or the training loop) and keep '
               'hook bodies pure; backward hooks on modules need compiled autograd.',
    before='y.register_hook(lambda g: GRADS.append(g.norm()))',
    after='# outside the compiled model:\nout.register_hook(lambda g: GRADS.append(g.norm()))',
    # a hook registered in forward: Dynamo breaks in the hook or in torch's hook handle; torch
    # 2.15 traces a hook's body as a higher-order op, and a body that writes a buffer breaks
    # there (GB0041 "input mutation during higher order op tracing")
    chain_matches=tuple(Match(gb, r"\.register_\w*hook\(") for gb in ("GB0067", "GB0467",
                                                                        "GB0041")),
    advice_by_id=(("GB0067", 'The hook registered here has a side effect (it appends, logs or mutates Python '
                          'state), which Dynamo cannot replay when the hook runs in backward: register '
                          "the hook outside forward (on the model's output, in the training loop), or "
                          'make its body a pure tensor function (`lambda g: g * 0.5`).'),),
    ids=('GB0013 GB0029 GB0083 GB0100 GB0101 GB0165 GB0166 GB7444 GB5821'))


_MODULE_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook"})


_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop",
                       "popitem", "clear", "remove", "discard", "appendleft"})


def _roots_outside(node: ast.AST, local: set[str]) -> bool:
    """``GRADS``, ``self.grads``, ``STATS["k"]``: a place that outlives the hook's call."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id not in local


def _side_effect(w: Scope, body: list[ast.AST], local: set[str]) -> ast.AST | None:
    """The first statement or call in ``body`` that changes something outside the hook."""
    for node in (n for part in body for n in ast.walk(part)):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _MUTATORS and _roots_outside(node.func.value, local):
            return node
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            tensor = isinstance(t, ast.Subscript) and w.kind(t.value) is True
            if isinstance(t, (ast.Attribute, ast.Subscript)) and not tensor and \
                    _roots_outside(t, local):
                return node
    return None


def _hook_function(w: Scope, hook: ast.AST) -> tuple[ast.FunctionDef, str] | None:
    """The def a hook argument names (a nested def, a module function, a method) and its label."""
    if isinstance(hook, ast.Name) and hook.id in w.nested:
        return w.nested[hook.id], f".{hook.id}"
    if isinstance(hook, ast.Name) and hook.id in w.names.functions and hook.id not in w.locals:
        return w.names.functions[hook.id], hook.id
    if isinstance(hook, ast.Attribute) and w.is_self(hook.value) and \
            (found := w.names.method(w.cls, hook.attr)):
        return found[1], f"{found[0]}.{hook.attr}"
    return None


@register(METHOD_CHECKS, RULE)
def hook_registered(w: Scope, node: ast.Call) -> str | tuple[str, ast.AST, str] | None:
    func = node.func
    if not isinstance(func, ast.Attribute) or w.qual(func) is not None or not node.args:
        return None
    if func.attr in _MODULE_HOOKS:
        return f"`{func.attr}()` in forward changes a module while it is traced: graph break " \
               f"({RULE.gb('GB0467')}); register hooks once, in `__init__`"
    if func.attr != "register_hook" or w.is_self(func.value) or w.kind(func.value) is not True:
        return None
    hook, message = node.args[0], "a tensor hook registered in forward {}: Dynamo cannot put " \
        f"the side effect in the backward graph, graph break ({RULE.gb('GB0067')}); have " \
        "the hook write a buffer (`copy_`), or record outside the compiled region"
    if isinstance(hook, ast.Lambda):
        local = {a.arg for a in hook.args.args}
        found = _side_effect(w, [hook.body], local)
        return message.format("changes state outside it") if found is not None else None
    if (named := _hook_function(w, hook)) is None:
        return None
    fn, label = named
    args = fn.args
    local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} - {"self"}
    local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and
              isinstance(n.ctx, ast.Store)}
    found = _side_effect(w, fn.body, local)
    if found is None:
        return None
    where = f"(`{text_of(func.value)}.register_hook({text_of(hook)})`, line {node.lineno})"
    return message.format(f"{where} changes state outside it"), found, label
