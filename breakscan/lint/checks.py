"""The lint's checks: one small function per source pattern, each reporting one rule.

TorchFix-style: the walker (``walker.py``) knows the file (imports, classes, which calls it
follows) and, per function, which names hold tensors (``tensors.py``); each check here gets that
function's scope and one node and returns its finding's message, or None. Checks are registered
by what they look at:

- ``CALL_CHECKS``: in order, the first that reports ends the call's checks (a reported call is
  not followed into the function it calls);
- ``METHOD_CHECKS``: every call, on its own (``.item()`` inside a ``print`` is both);
- ``BRANCH_CHECKS``: the test of an ``if``, ``while`` or conditional expression;
- ``LOOP_CHECKS``: what a ``for`` loop or comprehension iterates over;
- ``ASSERT_CHECKS`` and ``CALLEE_CHECKS`` (the function a followed call runs);
- ``SUBSCRIPT_CHECKS``: an index ``x[...]`` (a boolean mask);
- ``WITH_CHECKS`` (the expression of each ``with`` item), ``COMPARE_CHECKS`` (every comparison).

A check returns its message, or (message, node, function) to report at another node (a side
effect inside the hook a call registers; ``function`` starting with "." is below the caller's).
The checks of the newer families are in :mod:`breakscan.lint.family_checks`.

Every Dynamo registry id a message names is checked against the rule registry (``rules.gb``).
"""

from __future__ import annotations

import ast

from ..rules.catalogue import LOG_METHODS, gb, rule_for
from .check_tables import (ASSERT_CHECKS, BRANCH_CHECKS, CALL_CHECKS, CALLEE_CHECKS, COMPARE_CHECKS,
                           LOOP_CHECKS, METHOD_CHECKS, NP_RANDOM_DRAWS, SUBSCRIPT_CHECKS,
                           WITH_CHECKS, Scope, register, text_of)
from .loop_sizes import size_uses


def _is_int(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _const_text(node: ast.AST | None) -> bool:
    """A message CPython folds to a constant (Dynamo can then rewrite the assert)."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in node.values)
    return isinstance(node, ast.BinOp) and _const_text(node.left) and _const_text(node.right)


LOGGER_NAMES = frozenset({"logger", "log", "LOGGER", "_logger"})
_RANDOM_TRACED = frozenset({"randint", "randrange", "uniform"})  # Dynamo replays these: no break
_DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})


# -- BS001 item: a tensor turned into a Python number ---------------------------------------------

def _tensor_method(w: Scope, node: ast.Call, name: str) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == name and not node.args and \
        w.qual(func) is None and not w.is_self(func.value)


@register(METHOD_CHECKS, "item")
def item_method(w: Scope, node: ast.Call) -> str | None:
    if _tensor_method(w, node, "item"):
        return f"`.item()` turns a tensor into a Python number: graph break " \
               f"({gb('item', 'GB0124')}) and a device sync"
    return None


@register(CALL_CHECKS, "item")
def number_of_tensor(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual in ("float", "int") and node.args and w.kind(node.args[0]) is True:
        return f"`{qual}(tensor)` turns a tensor into a Python number: graph break " \
               f"({gb('item', 'GB0124')}) and a device sync"
    return None


@register(LOOP_CHECKS, "item")
def sizes_from_tensor(w: Scope, node: ast.AST, it: ast.AST) -> str | None:
    """``for t, h, w in grid_thw:`` then ``.view(t, h // 2, …)``: reported at the ``for`` line
    (the walker treats the loop's variables as the finding's sites, not as tensors)."""
    if not isinstance(node, ast.For) or w.kind(it) is not True:
        return None
    lines = size_uses(node)
    if not lines:
        return None
    names = ", ".join(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    where = ", ".join(map(str, lines))
    return f"iterating the tensor `{text_of(it)}` hands out 0-d tensors; `{names}` used as " \
           f"sizes (line {where}) need their values on the host: graph break " \
           f"({gb('item', 'GB0124')}) on every step; turn them into Python ints once " \
           "(pass them in, or `.tolist()` before the loop)"


# -- BS002 data_dependent_branch: Python control flow on a tensor value ---------------------------

@register(BRANCH_CHECKS, "data_dependent_branch")
def branch_on_tensor(w: Scope, node: ast.AST, test: ast.AST, what: str) -> str | None:
    if w.tensor_test(test):
        return f"{what} on a tensor value: Dynamo cannot know which way to go, graph break " \
               f"({gb('data_dependent_branch', 'GB0170')})"
    return None


@register(ASSERT_CHECKS, "data_dependent_branch")
def assert_with_computed_message(w: Scope, node: ast.Assert) -> str | None:
    # Dynamo rewrites `assert <tensor>[, "text"]` into torch._assert_async (no break); a
    # computed message (an f-string with values) defeats the rewrite.
    if not _const_text(node.msg) and w.tensor_test(node.test):
        return "`assert` on a tensor with a computed message: Dynamo cannot rewrite it to " \
               f"torch._assert_async, graph break ({gb('data_dependent_branch', 'GB0170')})"
    return None


# -- BS003 print: print, logging and warnings ------------------------------------------------------

def is_logging(w: Scope, func: ast.AST) -> bool:
    """``logging.info(...)``, ``logger.warning(...)``, ``self.log.debug(...)``: a logger's call."""
    if not (isinstance(func, ast.Attribute) and func.attr in LOG_METHODS):
        return False
    obj = func.value
    if w.qual(obj) == "logging" or w.is_get_logger(obj):
        return True
    if isinstance(obj, ast.Name):
        return obj.id not in w.locals and obj.id in w.loggers
    return isinstance(obj, ast.Attribute) and w.is_self(obj.value) and \
        (obj.attr in LOGGER_NAMES or w.attrs.get(obj.attr) == "logger")


@register(CALL_CHECKS, "print")
def logging_call(w: Scope, node: ast.Call) -> str | None:
    if is_logging(w, node.func):
        return f"`{text_of(node.func)}(...)` is a logging call Dynamo does not trace: graph " \
               f"break ({gb('print', 'GB0291')})"
    return None


@register(CALL_CHECKS, "print")
def print_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) in ("print", "builtins.print"):
        return "`print(...)` is Python I/O Dynamo cannot put in a graph: graph break " \
               f"({gb('print', 'GB0059')})"
    return None


@register(CALL_CHECKS, "print")
def warn_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "warnings.warn":
        return f"`warnings.warn(...)` is a builtin Dynamo skips: graph break " \
               f"({gb('print', 'GB0007')})"
    return None


# -- BS004 tolist_numpy: a tensor turned into a list or array --------------------------------------

@register(METHOD_CHECKS, "tolist_numpy")
def tolist_method(w: Scope, node: ast.Call) -> str | None:
    if _tensor_method(w, node, "tolist"):
        return "`.tolist()` copies a tensor into Python numbers: graph break " \
               f"({gb('tolist_numpy', 'GB0109')}) and a device sync"
    if _tensor_method(w, node, "numpy"):
        return "`.numpy()` leaves torch for NumPy: Dynamo can trace it through torch._numpy, " \
               "so it may not break (a scan tells)"
    return None


# -- BS005 dynamic_shape_op: an output whose shape depends on the data -----------------------------

_DATA_SHAPE = ("nonzero", "unique", "unique_consecutive", "masked_select", "argwhere")


@register(METHOD_CHECKS, "dynamic_shape_op")
def data_shape_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    func = node.func
    name = qual.rpartition(".")[2] if qual.startswith("torch.") else (
        func.attr if isinstance(func, ast.Attribute) and w.qual(func) is None and
        not w.is_self(func.value) and w.kind(func.value) is True else "")
    if name in _DATA_SHAPE:
        return f"`{name}` returns a tensor whose size depends on the data: graph break " \
               f"({gb('dynamic_shape_op', 'GB0036')}) unless capture_dynamic_output_shape_ops"
    return None


def _bool_mask(w: Scope, index: ast.AST) -> bool:
    """``x > 0``, ``~m``, ``(a > 0) & (b < 1)`` on tensors: a boolean mask."""
    if isinstance(index, ast.Compare):
        return any(w.kind(v) is True for v in [index.left, *index.comparators])
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _bool_mask(w, index.operand)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _bool_mask(w, index.left) or _bool_mask(w, index.right)
    return False


@register(SUBSCRIPT_CHECKS, "dynamic_shape_op")
def boolean_mask_index(w: Scope, node: ast.Subscript) -> str | None:
    if w.kind(node.value) is True and _bool_mask(w, node.slice) and \
            isinstance(node.ctx, ast.Load):
        return "indexing with a boolean mask gives a tensor whose size depends on the data: " \
               f"graph break ({gb('dynamic_shape_op', 'GB0036')}); `torch.where(mask, x, 0)` " \
               "keeps the shape"
    return None


# -- BS006 unsupported_call: calls Dynamo does not trace ------------------------------------------

@register(CALL_CHECKS, "unsupported_call")
def numpy_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("numpy.random.") and \
            qual[13:] in {*NP_RANDOM_DRAWS, "seed"}:
        return None  # measured: traced through torch._numpy (a one-number draw is rng)
    if qual and qual.startswith("numpy."):
        return f"`{text_of(node.func)}(...)` is a NumPy call: Dynamo can trace some NumPy calls " \
               "on tensors, so it may not break (a scan tells)"
    return None


@register(CALL_CHECKS, "unsupported_call")
def clock_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("time."):
        return f"`{text_of(node.func)}()` reads the host clock, which Dynamo does not trace: " \
               f"graph break ({gb('unsupported_call', 'GB0007')})"
    return None


# (BS015 rng: Python's random module; the other random-state checks are in family_checks.py)
@register(CALL_CHECKS, "rng")
def random_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("random.") and qual.split(".")[-1] not in _RANDOM_TRACED:
        return f"`{text_of(node.func)}()` is Python's random module, which Dynamo does not " \
               f"trace: graph break ({gb('rng', 'GB0007')}); use `torch.rand`"
    return None


# -- BS007 explicit_break -------------------------------------------------------------------------

@register(CALL_CHECKS, "explicit_break")
def graph_break_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "torch._dynamo.graph_break":
        return "`torch._dynamo.graph_break()` forces a graph break " \
               f"({gb('explicit_break', 'GB0025')})"
    return None


# -- BS010 disabled_call --------------------------------------------------------------------------

@register(CALLEE_CHECKS, "disabled_call")
def disabled_callee(w: Scope, node: ast.Call,
                    callee: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    decorators = {w.qual(d.func if isinstance(d, ast.Call) else d)
                  for d in callee.decorator_list}
    if decorators & _DISABLE:
        return f"`{text_of(node.func)}` is wrapped in torch.compiler.disable: calling it is a " \
               f"graph break ({gb('disabled_call', 'GB0098')})"
    return None


# -- BS011 tensor_deepcopy ------------------------------------------------------------------------

@register(CALL_CHECKS, "tensor_deepcopy")
def deepcopy_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "copy.deepcopy" and node.args and w.kind(node.args[0]) is True:
        return "`copy.deepcopy()` of a tensor is not traced by Dynamo: graph break " \
               f"({gb('tensor_deepcopy', 'GB4198')}); use `.clone()`"
    return None


# -- BS101 shape_branch and BS103 shape_loop: recompiles, not breaks -----------------------------

@register(BRANCH_CHECKS, "shape_branch")
def branch_on_size(w: Scope, node: ast.AST, test: ast.AST, what: str) -> str | None:
    if what == "`while`":
        return None
    for cmp in ast.walk(test):
        if isinstance(cmp, ast.Compare):
            operands = [cmp.left, *cmp.comparators]
            if any(map(w.tensor_size, operands)) and any(map(_is_int, operands)):
                return f"{what} on a tensor's size: not a break, but one compiled graph per " \
                       "shape seen (recompiles); use `dynamic=True` or `mark_dynamic`"
    return None


@register(LOOP_CHECKS, "shape_loop")
def loop_over_size(w: Scope, node: ast.AST, it: ast.AST) -> str | None:
    qual = w.qual(it.func) if isinstance(it, ast.Call) else None
    sized = qual == "range" and any(w.tensor_size(n) for a in it.args for n in ast.walk(a))
    if qual in ("enumerate", "reversed") and it.args:
        it = it.args[0]
    if sized or w.kind(it) is True:
        return "loop over a tensor's size: not a break, the loop is unrolled per size: " \
               "recompiles for every new size"
    return None


from . import family_checks  # noqa: E402,F401  (registers the newer families' checks)

# What the lint can report, and which of it breaks the graph (the rest recompiles).
CATEGORIES = frozenset(category for table in (CALL_CHECKS, METHOD_CHECKS, BRANCH_CHECKS,
                                              LOOP_CHECKS, ASSERT_CHECKS, CALLEE_CHECKS,
                                              SUBSCRIPT_CHECKS, WITH_CHECKS, COMPARE_CHECKS)
                       for category, _ in table)
BREAK_CATEGORIES = frozenset(c for c in CATEGORIES if rule_for(c).kind == "break")
