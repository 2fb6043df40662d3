"""The recompile causes BS101–BS103: not breaks, but code that makes Dynamo compile again (a branch on a
shape, global state mutated in forward, a loop over a size); their entries, lint checks and fixes.
"""
from __future__ import annotations

import ast

from .checks import BRANCH_CHECKS, LOOP_CHECKS, Scope, register
from .model import FixSpec, Rule

SHAPE_BRANCH = Rule(
    "BS101", "shape_branch", "shape-branch", "Branch on a tensor's shape", kind="recompile",
    why="Not a break: Dynamo guards on the shape and compiles one graph per value it sees "
        "(automatic dynamic shapes help only after the first recompile); past "
        "`recompile_limit` (8) the frame silently runs eagerly.",
    suggestion="Compile with `dynamic=True` (or `torch._dynamo.mark_dynamic(x, dim)` when "
               "the branch does not depend on that dimension), or make the branch a tensor "
               "op on the shape.",
    before="if x.shape[0] > 8:\n    x = x * 0.5",
    after="model = torch.compile(model, dynamic=True)  # one graph for every batch size",
    fixes=("dynamic",))

GLOBAL_MUTATION = Rule(
    "BS102", "global_mutation", "global-state", "Mutating global state in forward",
    kind="recompile",
    why="Not a break: `STATS['calls'] += 1` or `SEEN.append(...)` changes a guarded value, so "
        "every call recompiles; after 8 calls the frame falls back to eager for good.",
    suggestion="Keep counters and caches out of forward (in the caller), or in module "
               "buffers updated with tensor ops.",
    before="CALLS['n'] += 1\nreturn self.fc(x)",
    after="return self.fc(x)  # count calls in the training loop")

SHAPE_LOOP = Rule(
    "BS103", "shape_loop", "loop-over-shape", "Python loop over a tensor's size",
    kind="recompile",
    why="Not a break: Dynamo unrolls Python loops. A loop over a constant `range(5)` just "
        "makes a larger graph (more ops, longer compile); a loop over `range(x.shape[0])` "
        "is unrolled for that size and recompiles for every new size.",
    suggestion="Vectorise the loop body over the dimension (one op for the whole batch), or "
               "keep the trip count constant.",
    before="rows = [self.fc(x[i]) for i in range(x.shape[0])]\nreturn torch.stack(rows)",
    after="return self.fc(x)  # one op for the whole batch")

RULES: tuple[Rule, ...] = (SHAPE_BRANCH, GLOBAL_MUTATION, SHAPE_LOOP)

FIXES: tuple[FixSpec, ...] = (
    FixSpec("dynamic", "dynamic", "BS101", "torch.compile(model, dynamic=True)",
            offered="the scan saw recompiles, was not compiled with dynamic=True, and did not "
                    "find dynamic=True useless for them"),
)


def _is_int(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


@register(BRANCH_CHECKS, SHAPE_BRANCH)
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


@register(LOOP_CHECKS, SHAPE_LOOP)
def loop_over_size(w: Scope, node: ast.AST, it: ast.AST) -> str | None:
    qual = w.qual(it.func) if isinstance(it, ast.Call) else None
    sized = qual == "range" and any(w.tensor_size(n) for a in it.args for n in ast.walk(a))
    if qual in ("enumerate", "reversed") and it.args:
        it = it.args[0]
    if sized or w.kind(it) is True:
        return "loop over a tensor's size: the loop itself does not break (what it runs may), " \
               "but it is unrolled per size: recompiles for every new size"
    return None
