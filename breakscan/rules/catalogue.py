"""The rule catalogue: every rule module of this folder, assembled, and what is asked of it.

Like ruff's rules, a rule is one module (``bs001_item.py`` …, a family of several in
``recompiles.py`` and ``kernels.py``) holding its whole behaviour: its entry (a stable id, a
name, why it hurts, the Dynamo registry ids it covers, read by ``categories.categorize``; a
generic before/after; the advice), the lint checks that see it in source, and the fixes
breakscan can offer and verify (``FIXES``; fixes tried across families and the library switches
are ``fixes.py``'s). ``breakscan rules`` lists them, ``breakscan rules BS001`` explains one. A
break no rule knows (``other``) still carries Dynamo's own hints and its registry link.

The modules are found here (``bs*`` in name order, then the families and the shared fixes), so
adding a rule is adding its module. The advice is checked against torch 2.13 (see
../shared/DYNAMO_NOTES.md and the sample models).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from types import ModuleType
from typing import Any

from .model import Chain, FixSpec, Rule

__all__ = ["CATALOGUE", "FIXES", "Chain", "FixSpec", "Rule"]


def _rule_modules() -> tuple[ModuleType, ...]:
    """Every rule module of this folder, imported in name order (``bs001_item`` first): that
    order is the order their lint checks run in."""
    names = sorted(m.name for m in pkgutil.iter_modules([os.path.dirname(__file__)])
                   if m.name.startswith("bs") and m.name[2:5].isdigit())
    names += ["recompiles", "kernels", "fixes"]
    return tuple(importlib.import_module(f"{__package__}.{name}") for name in names)


RULE_MODULES = _rule_modules()


def _rules_in(module: ModuleType) -> tuple[Rule, ...]:
    """A family module's ``RULES``, a rule module's ``RULE``, or none (``fixes.py``)."""
    return getattr(module, "RULES", (module.RULE,) if hasattr(module, "RULE") else ())


# Where each rule is defined: ``rules/bs001_item.py`` (docs/rules.md names it).
MODULE_OF: dict[str, str] = {
    rule.id: module.__name__.replace("breakscan.", "").replace(".", "/") + ".py"
    for module in RULE_MODULES for rule in _rules_in(module)}

# The one registry of fixes, by fix id: the rules' own, then those tried across families.
FIXES: dict[str, FixSpec] = {f.id: f for module in RULE_MODULES
                             for f in getattr(module, "FIXES", ())}

# In id order: the break families (BS0xx), the recompile causes (BS1xx), the kernel rules (BS2xx).
CATALOGUE: tuple[Rule, ...] = tuple(sorted(
    (rule for module in RULE_MODULES for rule in _rules_in(module)),
    key=lambda r: r.id))
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in CATALOGUE}
RULES_BY_CATEGORY: dict[str, Rule] = {r.category: r for r in CATALOGUE}
RULE_IDS: dict[str, str] = {r.category: r.id for r in CATALOGUE}


def rule_id(category: str) -> str:
    return RULE_IDS.get(category, RULE_IDS["other"])


def rule_for(category: str) -> Rule:
    return RULES_BY_CATEGORY.get(category, RULES_BY_CATEGORY["other"])


def rule_for_fix(fix_id: str, category: str) -> str:
    """The rule a fix belongs to: the one whose registry entry offers it (the print guard is
    BS003 even when the break it removes is an `.item()` inside a print), else the break's."""
    spec = FIXES.get(fix_id)
    return spec.rule if spec is not None and spec.rule else rule_id(category)


def settings_of(category: str) -> list[tuple[str, Any]]:
    """The Dynamo settings worth trying for a break of ``category``: its rule's setting fixes,
    then the family's own settings (``Rule.settings``)."""
    found = [pair for spec in fixes_for(category, "setting") for pair in spec.config]
    return found + [pair for pair in rule_for(category).settings if pair not in found]


def all_fixes() -> list[FixSpec]:
    """Every fix by id: the registry's, then each family's own settings."""
    found = dict(FIXES)
    for rule in CATALOGUE:
        if rule.kind == "break":
            for spec in family_setting_fixes(rule.category):
                found.setdefault(spec.id, spec)
    return list(found.values())


def family_setting_fixes(category: str) -> list[FixSpec]:
    """The family's own settings as setting fixes (one entry in the catalogue, no FIXES row)."""
    rule = rule_for(category)
    return [FixSpec(name, "setting", rule.id, f"torch._dynamo.config.{name} = {value!r}",
                    ((name, value),), offered=_SETTING_OFFERED)
            for name, value in rule.settings if name not in FIXES]


_SETTING_OFFERED = "a break of this rule's family, unless the scanned process already sets it"


def fixes_for(category: str, kind: str) -> list[FixSpec]:
    """The fixes of this kind tried on a break of ``category``: its rule's, then those that
    also apply to it (the print guard for an ``.item()`` that is only printed), then the
    family's own settings."""
    own = [FIXES[i] for i in rule_for(category).fixes if FIXES[i].kind == kind]
    if kind == "setting":
        own += family_setting_fixes(category)
    return own + [f for f in FIXES.values() if category in f.also_for and f.kind == kind]


def library_switches() -> list[FixSpec]:
    """The library switches (transformers), in the order they are offered."""
    return [f for f in FIXES.values() if f.switch is not None]


def gb(category: str, gb_id: str) -> str:
    """``gb_id``, checked to be one of the rule's registry ids (for messages that name one)."""
    return RULES_BY_CATEGORY[category].gb(gb_id)


def finding_status(status: str, category: str) -> str:
    """What a static finding's run status means, in words (terminal and HTML share this).

    A recompile-cause rule (shape branch, global mutation, loop over a size) is never "a break
    waiting for other data": it does not break, it recompiles.
    """
    recompile = rule_for(category).kind == "recompile"
    return {
        "break": "broke here in this run",
        "ran": ("ran in this run (not a break: it recompiles when the guarded value changes)"
                if recompile else "ran in this run without breaking (the scan confirms)"),
        "not exercised": ("not exercised by these inputs" if recompile else
                          "not exercised by these inputs: a break waiting for other data"),
        "not traced": "not traced (frame skipped): Dynamo ran this function eagerly, so the "
                      "scan says nothing about this line",
    }.get(status, "")


def find_rule(text: str) -> Rule | None:
    """A rule by id (``BS001``, case-insensitive), name (``tensor-item``) or category (``item``)."""
    key = text.strip().lower()
    for rule in CATALOGUE:
        if key in (rule.id.lower(), rule.name, rule.category):
            return rule
    return None
