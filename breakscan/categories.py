"""The one table from Dynamo's graph-break registry ids/types to breakscan's categories.

Each :class:`Rule` matches a registry id (``GB0124``), optionally narrowed by a regular expression
over the break's type, explanation and debug context (``GB0059`` "Failed to trace builtin
operator" is a ``print`` only when the builtin is ``print``). The first matching rule wins; a
break nothing matches is ``other`` and keeps Dynamo's own type and hints.
Tested in tests/test_categories.py against the registry that ships with torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .rules import CATALOGUE
from .rules import Rule as CatalogueRule

REGISTRY_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{id}.html"


# Every break category's title and advice live in the rule catalogue (rules.py).
CATEGORIES: dict[str, CatalogueRule] = {r.category: r for r in CATALOGUE if r.kind == "break"}


@dataclass(frozen=True)
class Rule:
    gb_id: str
    category: str
    pattern: str | None = None  # regex over "gb_type | explanation | context"


RULES: tuple[Rule, ...] = (
    Rule("GB0124", "item"),  # Tensor.item(), float(t), int(t)
    Rule("GB0170", "data_dependent_branch"),  # if/while on a tensor
    Rule("GB0035", "data_dependent_branch"),  # non-constant __bool__
    Rule("GB0034", "data_dependent_branch"),  # data-dependent assert
    Rule("GB0033", "item"),  # data-dependent operator (aten._local_scalar_dense…)
    Rule("GB0059", "print", r"builtin operator `print`"),
    Rule("GB0291", "print"),  # logging.Logger methods
    Rule("GB0109", "tolist_numpy"),  # Tensor.tolist() non-integer
    Rule("GB0105", "tolist_numpy"),  # Tensor.numpy() without trace_numpy
    Rule("GB0106", "tolist_numpy"),
    Rule("GB0185", "tolist_numpy"),
    Rule("GB0231", "tolist_numpy"),
    Rule("GB0290", "tolist_numpy"),
    Rule("GB0293", "tolist_numpy"),
    Rule("GB0294", "tolist_numpy"),
    Rule("GB0036", "dynamic_shape_op"),  # nonzero, boolean mask, unique…
    Rule("GB0037", "dynamic_shape_op"),
    Rule("GB0246", "dynamic_shape_op"),  # one_hot with data-dependent shape
    Rule("GB0025", "explicit_break"),  # torch._dynamo.graph_break()
    Rule("GB0098", "explicit_break"),  # torch.compiler.disable'd function
    Rule("GB0099", "explicit_break"),
    Rule("GB4297", "frame_skipped"),  # torch._dynamo.skip_frame()
    Rule("GB7000", "frame_skipped"),  # graph break in loop
    Rule("GB0007", "print", r"`[\w.]*(print|logging|warn)\b"),
    Rule("GB0007", "unsupported_call"),  # function marked as skipped (random, time, C ext)
    Rule("GB0008", "unsupported_call"),
    Rule("GB0009", "unsupported_call"),
    Rule("GB0059", "unsupported_call"),  # any other builtin operator
    Rule("GB0147", "unsupported_call"),
    Rule("GB0148", "unsupported_call"),
    Rule("GB0156", "unsupported_call"),
    Rule("GB0087", "unsupported_call"),  # op without fake/meta support
)

# Types with no registry id on older torch: match on the type text instead.
TYPE_FALLBACKS: tuple[tuple[str, str], ...] = (
    (r"\.item\(\)|capture_scalar_outputs", "item"),
    (r"[Dd]ata-dependent branching|generic_jump", "data_dependent_branch"),
    (r"\bprint\b|logging", "print"),
    (r"tolist|numpy", "tolist_numpy"),
    (r"[Dd]ynamic shape operator|nonzero", "dynamic_shape_op"),
    (r"graph_break\(\)", "explicit_break"),
    (r"marked as skipped|Unsupported function call", "unsupported_call"),
)


def categorize(gb_id: str | None, gb_type: str, explanation: str = "", context: str = "") -> str:
    """The breakscan category of one break (see the table above)."""
    text = f"{gb_type} | {explanation} | {context}"
    for rule in RULES:
        if rule.gb_id == gb_id and (rule.pattern is None or re.search(rule.pattern, text)):
            return rule.category
    if gb_id is None:
        for pattern, category in TYPE_FALLBACKS:
            if re.search(pattern, text):
                return category
    return "other"


def registry_url(gb_id: str | None) -> str | None:
    return REGISTRY_URL.format(id=gb_id.lower()) if gb_id else None
