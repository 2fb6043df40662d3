"""The lint's check tables and what a check may read: shared by checks.py and family_checks.py.

A check is registered in the table of the node kind it looks at (see :mod:`breakscan.lint.checks`
for what each table means); the walker runs the tables. Kept apart so the two modules of checks
register into the same tables without importing each other.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Protocol


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


def register(table: list[tuple[str, Check]], category: str, *,
             first: bool = False) -> Callable[[Check], Check]:
    """Add a check to a table (``first``: ahead of the others, for a first-wins table)."""
    def add(check: Check) -> Check:
        table.insert(0 if first else len(table), (category, check))
        return check
    return add


def text_of(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# np.random draws and the position of their `size` argument: without one they give one number
# (family_checks.numpy_random_number: rng); with one, or np.random.seed, traced: no break.
NP_RANDOM_DRAWS = {"rand": 0, "randn": 0, "random": 0, "random_sample": 0, "choice": 1,
                   "uniform": 2, "normal": 2, "randint": 2}
