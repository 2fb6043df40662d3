"""What a rule's lint checks register into and may read: the check tables, the ``Scope``
protocol, and the small AST helpers several rules share.

TorchFix-style: the lint's walker (``lint/walker.py``) knows the file (imports, classes, which
calls it follows) and, per function, which names hold tensors (``lint/tensors.py``, which
implements ``Scope``); each check gets that function's scope and one node and returns its
finding's message, or None. A rule module registers its checks by what they look at:

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
The rule modules are imported in id order (``catalogue.py``), which is the order of each table
(``first=True`` puts a check ahead of the others in a first-wins table). Each check is measured
on torch 2.13 and flags only the form that breaks, with its look-alike left alone.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from .model import Rule


class Scope(Protocol):
    """What a check may read of the function being linted (``tensors.FunctionScope``, which the
    walker passes): names, kinds, loggers of the file and of the function."""

    attrs: dict[str, str]  # the class's attributes: self.X -> "tensor", "items:…", …
    locals: set[str]  # names local to the function
    loggers: set[str]  # names bound to a logger
    names: Any  # the file's index (imports, classes, module-level locks and generators)
    cls: str | None  # the class ``self`` is an instance of
    nested: dict[str, Any]  # defs inside the function, by name

    def qual(self, node: ast.AST) -> str | None: ...
    def is_get_logger(self, node: ast.AST) -> bool: ...
    def is_self(self, node: ast.AST) -> bool: ...
    def kind(self, node: ast.AST) -> bool | None: ...
    def computed(self, node: ast.AST) -> bool: ...
    def scalar_tensor(self, node: ast.AST) -> bool: ...
    def tensor_test(self, test: ast.AST) -> bool: ...
    def tensor_size(self, node: ast.AST) -> bool: ...

Check = Callable[..., "str | tuple[str, ast.AST, str] | None"]
CALL_CHECKS: list[tuple[str, Check]] = []
METHOD_CHECKS: list[tuple[str, Check]] = []
BRANCH_CHECKS: list[tuple[str, Check]] = []
LOOP_CHECKS: list[tuple[str, Check]] = []
ASSERT_CHECKS: list[tuple[str, Check]] = []
CALLEE_CHECKS: list[tuple[str, Check]] = []
SUBSCRIPT_CHECKS: list[tuple[str, Check]] = []
WITH_CHECKS: list[tuple[str, Check]] = []
COMPARE_CHECKS: list[tuple[str, Check]] = []


def register(table: list[tuple[str, Check]], rule: Rule, *,
             first: bool = False) -> Callable[[Check], Check]:
    """Add a check reporting ``rule`` to a table (``first``: ahead of the others, for a
    first-wins table)."""
    def add(check: Check) -> Check:
        table.insert(0 if first else len(table), (rule.category, check))
        return check
    return add


def text_of(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# np.random draws and the position of their `size` argument: without one they give one number
# (bs015_rng.numpy_random_number); with one, or np.random.seed, traced: no break.
NP_RANDOM_DRAWS = {"rand": 0, "randn": 0, "random": 0, "random_sample": 0, "choice": 1,
                   "uniform": 2, "normal": 2, "randint": 2}


def tensor_method(w: Scope, node: ast.Call, name: str) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == name and not node.args and \
        w.qual(func) is None and not w.is_self(func.value)


# What a check says of a construct that makes Dynamo skip its function.
SKIPS_FRAME = "Dynamo skips the whole function (frame runs eagerly)"


def method_on_tensor(w: Scope, node: ast.Call, names: frozenset[str] | set[str]) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in names and w.qual(func) is None and \
        not w.is_self(func.value) and w.kind(func.value) is True


def call_arg(node: ast.Call, index: int, keyword: str) -> ast.AST | None:
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args):
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg == keyword), None)
