"""The lint's checks as the walker runs them: every rule module's checks (``rules/bs*.py``,
``rules/recompiles.py``), registered into the tables of ``rules/checks.py`` when the catalogue
is imported, and what the lint can report (``CATEGORIES``) and which of it breaks the graph
(``BREAK_CATEGORIES``; the rest recompiles).
"""

from __future__ import annotations

from ..rules.catalogue import rule_for
from ..rules.checks import (ASSERT_CHECKS, BRANCH_CHECKS, CALL_CHECKS, CALLEE_CHECKS,
                            COMPARE_CHECKS, LOOP_CHECKS, METHOD_CHECKS, SUBSCRIPT_CHECKS,
                            WITH_CHECKS)

TABLES = (CALL_CHECKS, METHOD_CHECKS, BRANCH_CHECKS, LOOP_CHECKS, ASSERT_CHECKS, CALLEE_CHECKS,
          SUBSCRIPT_CHECKS, WITH_CHECKS, COMPARE_CHECKS)
CATEGORIES = frozenset(category for table in TABLES for category, _ in table)
BREAK_CATEGORIES = frozenset(c for c in CATEGORIES if rule_for(c).kind == "break")

__all__ = ["ASSERT_CHECKS", "BRANCH_CHECKS", "BREAK_CATEGORIES", "CALLEE_CHECKS", "CALL_CHECKS",
           "CATEGORIES", "COMPARE_CHECKS", "LOOP_CHECKS", "METHOD_CHECKS", "SUBSCRIPT_CHECKS",
           "TABLES", "WITH_CHECKS"]
