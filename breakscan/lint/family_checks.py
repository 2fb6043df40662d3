"""The lint's checks for the break families beyond the first rules: what a source reader can see.

Each check is one pattern measured on torch 2.13 (a model through ``torch.compile`` with the
``graph_breaks`` log), flagged only in the form that breaks, with the look-alike that does not
left alone: ``sorted()`` over tensors (not over names or a shape), ``repeat_interleave`` with
tensor repeats (not an int, nor with ``output_size=``), ``np.random`` draws of one number (not of
an array, which Dynamo traces), a hook with a side effect (not a pure one), ``data_ptr()`` in a
comparison (not as a key), ``id()`` of a computed tensor stored outside the function (not of an
input), a lock entered with ``with`` (not ``torch.no_grad()``). The finding's category is the
family the live scan gives the same break, so a scan confirms the lead on the same line.
They register into the tables of :mod:`breakscan.lint.check_tables`, which the walker runs.
"""

from __future__ import annotations

import ast

from ..rules.catalogue import gb
from .check_tables import (CALL_CHECKS, COMPARE_CHECKS, METHOD_CHECKS, NP_RANDOM_DRAWS,
                           SUBSCRIPT_CHECKS, WITH_CHECKS, Scope, register, text_of)

_SKIPS = "Dynamo skips the whole function (frame runs eagerly)"
_REDUCTIONS = frozenset({"sum", "mean", "norm", "max", "min", "amax", "amin", "prod", "std",
                         "var", "median", "logsumexp", "count_nonzero"})
_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
_SPARSE_MAKERS = frozenset({"sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
                            "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor"})
_MODULE_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop",
                       "popitem", "clear", "remove", "discard", "appendleft"})


def _method_on_tensor(w: Scope, node: ast.Call, names: frozenset[str] | set[str]) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in names and w.qual(func) is None and \
        not w.is_self(func.value) and w.kind(func.value) is True


def _arg(node: ast.Call, index: int, keyword: str) -> ast.AST | None:
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args):
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


# -- BS013 data_dependent_value: tensors compared by Python's sort ------------------------------

def _tensor_key(key: ast.AST | None) -> bool:
    """``key=lambda t: t.sum()``: the sort key is a tensor reduction of the item."""
    if not (isinstance(key, ast.Lambda) and isinstance(key.body, ast.Call)):
        return False
    func, params = key.body.func, {a.arg for a in key.args.args}
    return isinstance(func, ast.Attribute) and func.attr in _REDUCTIONS and \
        isinstance(func.value, ast.Name) and func.value.id in params


def _tensor_items(w: Scope, items: ast.AST) -> bool:
    if isinstance(items, (ast.List, ast.Tuple, ast.Set)):
        return any(w.kind(e) is True for e in items.elts)
    if isinstance(items, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        elt = items.elt
        return w.kind(elt) is True or (isinstance(elt, ast.Call) and
                                       isinstance(elt.func, ast.Attribute) and
                                       elt.func.attr in _REDUCTIONS)
    return False


@register(METHOD_CHECKS, "data_dependent_value")
def sort_tensors(w: Scope, node: ast.Call) -> str | None:
    key = next((k.value for k in node.keywords if k.arg == "key"), None)
    func = node.func
    if w.qual(func) == "sorted" and node.args and \
            (_tensor_items(w, node.args[0]) or _tensor_key(key)):
        what = "`sorted()`"
    elif isinstance(func, ast.Attribute) and func.attr == "sort" and _tensor_key(key) and \
            w.kind(func.value) is not True:
        what = "`list.sort()`"
    else:
        return None
    return f"{what} over tensors compares their values in Python: graph break " \
           f"({gb('data_dependent_value', 'GB0207')}); sort with tensor ops " \
           "(`torch.stack(xs).sort()`, `argsort`)"


# -- BS001 item: a slice bound taken from a tensor (Dynamo reports the .item() it needs) -------

@register(SUBSCRIPT_CHECKS, "item")
def tensor_slice_bound(w: Scope, node: ast.Subscript) -> str | None:
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    bounds = [b for s in parts if isinstance(s, ast.Slice) for b in (s.lower, s.upper, s.step)
              if b is not None and w.scalar_tensor(b)]
    if bounds and w.kind(node.value) is not False:
        return f"the slice bound `{text_of(bounds[0])}` is a tensor: Python needs its value, " \
               f"graph break ({gb('item', 'GB0124')}); slice by a Python int or use " \
               "`torch.narrow`/a mask"
    return None


# -- BS005 dynamic_shape_op: repeat counts and bin counts from the data -------------------------

@register(METHOD_CHECKS, "dynamic_shape_op")
def counts_from_data(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    if qual == "torch.bincount" or _method_on_tensor(w, node, {"bincount"}):
        what = "`bincount`"
    elif any(k.arg == "output_size" for k in node.keywords):
        return None
    elif qual == "torch.repeat_interleave" and len(node.args) + len(node.keywords) == 1:
        what = "`repeat_interleave(counts)`"
    elif (qual == "torch.repeat_interleave" and w.computed(_arg(node, 1, "repeats"))) or (
            _method_on_tensor(w, node, {"repeat_interleave"}) and
            w.computed(_arg(node, 0, "repeats"))):
        what = "`repeat_interleave` with tensor repeats"
    else:
        return None
    return f"{what} returns a tensor whose size depends on the data: graph break " \
           f"({gb('dynamic_shape_op', 'GB0036')}) unless capture_dynamic_output_shape_ops " \
           "(or pass `output_size=`)"


# -- BS015 rng: random state Dynamo cannot keep in the graph ------------------------------------

@register(CALL_CHECKS, "rng", first=True)
def numpy_random_number(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    name = qual.rpartition(".")[2]
    if qual.rpartition(".")[0] != "numpy.random" or name not in NP_RANDOM_DRAWS:
        return None
    size = _arg(node, NP_RANDOM_DRAWS[name], "size")
    if (node.args and name in ("rand", "randn")) or \
            (size is not None and not (isinstance(size, ast.Constant) and size.value is None)):
        return None  # an array: traced through torch._numpy (a different random stream)
    return f"`{text_of(node.func)}()` draws one Python number: Dynamo needs its value, graph " \
           f"break ({gb('rng', 'GB0033')}); draw with `torch.rand(())`"


@register(CALL_CHECKS, "rng")
def seed_or_generator(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual in _SEEDS:
        return f"`{text_of(node.func)}()` reseeds the global RNG, which Dynamo does not trace: " \
               f"graph break ({gb('rng', 'GB0007')}); seed outside forward or keep fixed " \
               "noise as a buffer"
    if qual == "torch.Generator":
        return "a `torch.Generator` made in forward is an object Dynamo cannot create in the " \
               f"graph: graph break ({gb('rng', 'GB0363')}); make it once in `__init__`, or " \
               "keep the noise as a buffer"
    return None


@register(METHOD_CHECKS, "rng")
def generator_argument(w: Scope, node: ast.Call) -> str | None:
    value = next((k.value for k in node.keywords if k.arg == "generator"), None)
    held = w.names.made.get(value.id) if isinstance(value, ast.Name) and \
        value.id not in w.locals else \
        w.attrs.get(value.attr) if isinstance(value, ast.Attribute) and \
        w.is_self(value.value) else None
    if held == "generator":
        return f"`generator={text_of(value)}` hands a `torch.Generator` to a traced call: " \
               f"graph break ({gb('rng', 'GB0055')}); draw the numbers outside forward"
    return None


# -- BS017 context_manager: a lock entered in forward --------------------------------------------

@register(WITH_CHECKS, "context_manager")
def lock_entered(w: Scope, expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Call) and w.names.made_kind(expr, w.locals) == "lock":
        return f"`with {text_of(expr)}:` makes and enters a lock, which Dynamo does not trace: " \
               f"graph break ({gb('context_manager', 'GB0007')}, then " \
               f"{gb('context_manager', 'GB0142')}), {_SKIPS}; take the lock in the caller"
    held = w.names.made.get(expr.id) if isinstance(expr, ast.Name) and \
        expr.id not in w.locals else \
        w.attrs.get(expr.attr) if isinstance(expr, ast.Attribute) and \
        w.is_self(expr.value) else None
    if held == "lock":
        return f"`with {text_of(expr)}:` enters a threading lock, a context manager Dynamo " \
               f"does not support: graph break ({gb('context_manager', 'GB0142')}), " \
               f"{_SKIPS}; take the lock in the caller"
    return None


# -- BS025 sparse_nested_tensor ------------------------------------------------------------------

@register(METHOD_CHECKS, "sparse_nested_tensor")
def sparse_tensor(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    func = node.func
    made = qual.startswith("torch.") and qual.rpartition(".")[2] in _SPARSE_MAKERS
    if made or qual.startswith("torch.sparse.") or (
            isinstance(func, ast.Attribute) and func.attr.startswith("to_sparse") and
            w.qual(func) is None and w.kind(func.value) is True):
        gb_id = "GB0007" if made else "GB0277"
        return f"`{text_of(func)}` makes or uses a sparse tensor, which Dynamo does not trace: " \
               f"graph break ({gb('sparse_nested_tensor', gb_id)}); keep it dense, or run " \
               "the sparse step outside the compiled region"
    return None


# -- BS021 autograd: autograd driven from inside forward -----------------------------------------

@register(METHOD_CHECKS, "autograd")
def autograd_in_forward(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual == "torch.autograd.grad":
        return "`torch.autograd.grad()` in forward is not traced: graph break " \
               f"({gb('autograd', 'GB9186')}); try `torch._dynamo.config.trace_autograd_ops " \
               "= True`, or take the gradient outside the compiled region"
    if qual == "torch.autograd.backward" or _method_on_tensor(w, node, {"backward"}):
        return "`backward()` in forward is not traced: graph break " \
               f"({gb('autograd', 'GB0123')}); call it on the compiled model's output"
    false = node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False
    if _method_on_tensor(w, node, {"requires_grad_"}) and not false:
        gb_id = "GB8985" if w.computed(node.func.value) else "GB0125"
        return "`requires_grad_()` on a tensor in forward: graph break " \
               f"({gb('autograd', gb_id)}); make the leaf in the caller, or return the " \
               "tensor detached"
    return None


# -- BS027 object_identity: addresses and ids Dynamo cannot know while tracing -------------------

def _id_of_computed(w: Scope, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and w.qual(node.func) == "id" and len(node.args) == 1 \
        and w.computed(node.args[0])


@register(COMPARE_CHECKS, "object_identity")
def address_compared(w: Scope, node: ast.Compare) -> str | None:
    if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return None  # `id(h) in CACHE`: a lookup, no break
    for operand in [node.left, *node.comparators]:
        if isinstance(operand, ast.Call) and _method_on_tensor(w, operand, {"data_ptr"}):
            return f"`{text_of(operand)}` compared: a storage address is a run-time fact " \
                   f"Dynamo cannot know while tracing, graph break " \
                   f"({gb('object_identity', 'GB5976')}); compare the tensors (`is`) or " \
                   "write out of place"
        if _id_of_computed(w, operand):
            return f"`{text_of(operand)}` compared: the id of a tensor made while tracing is " \
                   f"not a real id, graph break ({gb('object_identity', 'GB9316')}), " \
                   f"{_SKIPS}; compare with `is`"
    return None


@register(SUBSCRIPT_CHECKS, "object_identity")
def id_as_stored_key(w: Scope, node: ast.Subscript) -> str | None:
    root = node.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    local = isinstance(root, ast.Name) and root.id in w.locals and not w.is_self(root)
    key = next((n for n in ast.walk(node.slice) if _id_of_computed(w, n)), None)
    if key is not None and isinstance(node.ctx, ast.Store) and not local:
        return f"`{text_of(key)}` kept as a key outside forward: the id of a tensor made " \
               "while tracing cannot leave the graph, graph break " \
               f"({gb('object_identity', 'GB4501')}, reported at the return), {_SKIPS}; key " \
               "by something stable (a name, a layer index)"
    return None


# -- BS020 hook: hooks registered while tracing ---------------------------------------------------

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


@register(METHOD_CHECKS, "hook")
def hook_registered(w: Scope, node: ast.Call) -> str | tuple[str, ast.AST, str] | None:
    func = node.func
    if not isinstance(func, ast.Attribute) or w.qual(func) is not None or not node.args:
        return None
    if func.attr in _MODULE_HOOKS:
        return f"`{func.attr}()` in forward changes a module while it is traced: graph break " \
               f"({gb('hook', 'GB0467')}); register hooks once, in `__init__`"
    if func.attr != "register_hook" or w.is_self(func.value) or w.kind(func.value) is not True:
        return None
    hook, message = node.args[0], "a tensor hook registered in forward {}: Dynamo cannot put " \
        f"the side effect in the backward graph, graph break ({gb('hook', 'GB0067')}); have " \
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
