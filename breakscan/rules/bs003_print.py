"""BS003 print: print or logging call inside the compiled region.

The rule's whole behaviour: its entry, its lint checks and its fixes.
"""
from __future__ import annotations

import ast

from .checks import CALL_CHECKS, Scope, register, text_of
from .model import FixSpec, Match, Rule

RULE = Rule(
    "BS003", "print", "print-in-forward", "print or logging call inside the compiled region",
    why="Dynamo cannot put I/O in a graph: the graph ends before the call and resumes after "
        "it, and printing a tensor also syncs to fetch its values.",
    suggestion="Guard it with `if not torch.compiler.is_compiling(): ...`, move it out of "
               "forward, or add the function to "
               "`torch._dynamo.config.ignore_logging_functions`.",
    before='h = self.fc(x)\nprint("norm", h.norm())\nreturn h',
    after='h = self.fc(x)\nif not torch.compiler.is_compiling():\n'
          '    print("norm", h.norm())  # eager runs only\nreturn h',
    fixes=("print_guard",),
    matches=(Match("GB0059", r"builtin operator `print`"),
             Match("GB0291"),  # logging.Logger methods
             # logging.getLogger(__name__).info(...) written inline
             Match("GB6215", r"LoggingLoggerVariable"),
             Match("GB0007", r"`[\w.]*(print|logging|warn)\b")),
    type_pattern=r"\bprint\b|logging",
    ids="GB0296 GB0569")

FIXES: tuple[FixSpec, ...] = (
    # An .item() whose value is only printed or logged: guard the print.
    FixSpec("print_guard", "source", "BS003", also_for=("item",),
            title="guard the print/logging call with torch.compiler.is_compiling()",
            rewrite="rewrite"),
)


# What counts as a logging call, for the lint (ast) and the rewrite (libcst) alike.
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                         "fatal", "log"})
LOGGER_NAMES = frozenset({"logger", "log", "LOGGER", "_logger"})


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


@register(CALL_CHECKS, RULE)
def logging_call(w: Scope, node: ast.Call) -> str | None:
    if is_logging(w, node.func):
        return f"`{text_of(node.func)}(...)` is a logging call Dynamo does not trace: graph " \
               f"break ({RULE.gb('GB0291')})"
    return None


@register(CALL_CHECKS, RULE)
def print_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) in ("print", "builtins.print"):
        return "`print(...)` is Python I/O Dynamo cannot put in a graph: graph break " \
               f"({RULE.gb('GB0059')})"
    return None


@register(CALL_CHECKS, RULE)
def warn_call(w: Scope, node: ast.Call) -> str | None:
    if w.qual(node.func) == "warnings.warn":
        return f"`warnings.warn(...)` is a builtin Dynamo skips: graph break " \
               f"({RULE.gb('GB0007')})"
    return None
