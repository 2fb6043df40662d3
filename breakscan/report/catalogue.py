"""The rule catalogue as Markdown: docs/rules.md is this text, generated, never edited by hand.

``breakscan rules --markdown`` prints it; tests/unit/test_rules_doc.py fails when docs/rules.md
and the catalogue differ, so adding a rule is its module in ``rules/`` and a regenerated page
(as in ruff's rule docs). The page names each rule's module and each source fix's, so it is
also the map of those modules (tests/unit/test_architecture.py reads it with
docs/architecture.md).
"""

from __future__ import annotations

from ..rules.catalogue import CATALOGUE, FIXES, MODULE_OF, all_fixes, fixes_for
from ..rules.model import Match, Rule

HEADER = """# Rules

Generated from breakscan's rule catalogue by `breakscan rules --markdown > docs/rules.md`; do
not edit by hand (a test compares the two). Every id of Dynamo's graph-break registry belongs
to one break family (a rule of kind `break`); where Dynamo uses one id for several causes it is
narrowed by the break's source line, its call chain or its text. `breakscan rules RULE` shows
one rule in the terminal.
"""

KINDS = {"break": "graph break", "recompile": "recompile", "kernel": "kernel (`--kernels`)"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rule_fixes(rule: Rule) -> list[str]:
    """Every fix `--fix` can try for the rule: its own, the settings, those of other rules
    that also apply to its breaks."""
    if rule.kind == "kernel":
        return list(rule.fixes)
    ids = [f.id for kind in ("source", "setting", "constants", "dynamic")
           for f in fixes_for(rule.category, kind)]
    return list(dict.fromkeys(list(rule.fixes) + ids))


def _narrowed(rule: Rule) -> list[str]:
    lines = []
    for field, what in (("code_matches", "source line"), ("chain_matches", "call chain"),
                        ("matches", "text")):
        for m in getattr(rule, field):
            if isinstance(m, Match) and m.pattern:
                lines.append(f"- {m.gb_id} when its {what} matches `{m.pattern}`")
    return lines


def _rule_section(rule: Rule) -> list[str]:
    out = [f"## {rule.id} {rule.name}", "", f"**{rule.title}** — {KINDS[rule.kind]}"
           + (f", family `{rule.category}`" if rule.kind == "break" else
              f", `{rule.category}`") + f"; defined in `{MODULE_OF[rule.id]}`", "",
           f"Why: {rule.why}", "", f"Advice: {rule.suggestion}"]
    if rule.before:
        out += ["", "Before:", "", "```python", rule.before, "```", "", "After:", "",
                "```python", rule.after, "```"]
    for gb, text in rule.advice_by_id:
        out += ["", f"Advice for {gb}: {text}"]
    if rule.settings:
        out += ["", "Settings tried by `--fix`: " + ", ".join(
            f"`{name} = {value!r}`" for name, value in rule.settings)]
    fixes = rule_fixes(rule)
    if fixes:
        out += ["", "Fixes `--fix` can verify: " + ", ".join(
            f"`{f}`" + (f" (`fixes/{FIXES[f].rewrite}.py`)" if f in FIXES and FIXES[f].rewrite
                        else "") for f in fixes)]
    if rule.ids:
        out += ["", f"Registry ids ({len(rule.ids.split())}): " + ", ".join(rule.ids.split())]
    narrowed = _narrowed(rule)
    plain = [m.gb_id for m in rule.matches if m.pattern is None]
    if plain:
        out += ["", "Also: " + ", ".join(plain)]
    if narrowed:
        out += ["", "Narrowed to this rule:", ""] + narrowed
    return out + [""]


def _fixes_section() -> list[str]:
    """Every fix by id: what it does and when ``--fix`` tries it (a source fix: at a break of
    its rule or families whose line its pattern is on; refused with a reason otherwise)."""
    out = ["## Fixes", "", "Every fix `--fix` can verify, by id. A source fix is tried at a "
           "break of its rule (or of the families it also applies to) and is refused, with "
           "its reason, when its pattern is not on the line; the others are tried when the "
           "break is as said.", "", "| fix | kind | rule | does | tried when |",
           "|---|---|---|---|---|"]
    for fix in all_fixes():
        does = fix.title or fix.setting or fix.id
        when = fix.offered or ("its pattern is on the break's line" + (
            f"; also for {', '.join(f'`{c}`' for c in fix.also_for)}" if fix.also_for else ""))
        rule = fix.rule or "the break's"
        out.append(f"| `{fix.id}` | {fix.kind} | {rule} | "
                   f"{_cell(does)} | {_cell(when)} |")
    return out + ["", "Besides these, `--fix` searches each break's path for a module or config "
                  "attribute tested on the way to it (`fixes/switches.py`) and tries it as a "
                  "switch on the path.", ""]


def catalogue_markdown() -> str:
    """docs/rules.md: a summary table, then one section per rule."""
    lines = [HEADER, "| rule | name | family / cause | kind | title | registry ids | fixes |",
             "|---|---|---|---|---|---|---|"]
    for rule in CATALOGUE:
        lines.append(f"| [{rule.id}](#{rule.id.lower()}-{rule.name}) | {rule.name} | "
                     f"`{rule.category}` | {rule.kind} | {_cell(rule.title)} | "
                     f"{len(rule.gb_ids) or '—'} | "
                     f"{', '.join(rule_fixes(rule)) or '—'} |")
    lines.append("")
    for rule in CATALOGUE:
        lines += _rule_section(rule)
    lines += _fixes_section()
    return "\n".join(lines).rstrip("\n") + "\n"
