"""Every source fix by its fix id: the one way from a planned fix to its rewrite.

The catalogue names each source fix (a ``FixSpec`` of kind ``source`` in its rule's module, with
its generic title, the families it is tried on and ``rewrite``, the module here that makes it);
that module's ``propose_<fix id>(source, line, category, call)`` is its rewrite: a libcst
handler in a module of its own (``where.py``, ``effects.py``, ``region.py``, ``torch_ops.py``,
``loops.py``, ``casts.py``, ``escape.py``) or one of the small ones in ``rewrite.py``. ``tests/unit/test_source_fixes.py`` checks that the two agree and that every
fix has a fixture pair and a refusal (``tests/fixtures/rewrite/``).
"""

from __future__ import annotations

import importlib
from typing import Callable

from ..rules.catalogue import FIXES
from .rewrite import Rewrite

# (source, line, the break's category, the call or lines it names) -> the proposed rewrite
Propose = Callable[[str, int, str, "str | None"], Rewrite]


def _proposer(fix_id: str, module: str) -> Propose:
    """``propose_<fix_id>`` of ``breakscan.fixes.<module>``, the module its FixSpec names."""
    return getattr(importlib.import_module(f"{__package__}.{module}"), f"propose_{fix_id}")


SOURCE_FIXES: dict[str, Propose] = {f.id: _proposer(f.id, f.rewrite) for f in FIXES.values()
                                    if f.kind == "source"}


def propose_rewrite(source: str, line: int, fix_id: str, *, category: str = "",
                    call: str | None = None) -> Rewrite:
    """The source fix ``fix_id`` at ``line`` of ``source`` (``category``: the break's, for a
    fix whose rewrite depends on it; ``call``: the call or lines it names); never raises."""
    propose = SOURCE_FIXES.get(fix_id)
    if propose is None:
        return Rewrite(fix_id, line, f"no source rewrite for {fix_id}", None,
                       f"no source rewrite for {fix_id}; see the settings fixes")
    return propose(source, line, category, call)
