"""docs/rules.md is generated from the rule catalogue: it must equal what the catalogue renders
(regenerate with `breakscan rules --markdown > docs/rules.md`)."""

from __future__ import annotations

from pathlib import Path

from breakscan.report.catalogue import catalogue_markdown
from breakscan.rules.catalogue import CATALOGUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_the_rules_page_is_the_catalogue():
    assert DOC.read_text(encoding="utf-8") == catalogue_markdown(), \
        "docs/rules.md is stale: run `breakscan rules --markdown > docs/rules.md`"


def test_the_page_has_every_rule_and_every_registry_id_of_its_families():
    text = catalogue_markdown()
    for rule in CATALOGUE:
        assert f"## {rule.id} {rule.name}" in text
        for gb in rule.ids.split():
            assert gb in text, (rule.id, gb)


def test_breakscan_rules_markdown_prints_it():
    from conftest import run_cli

    out = run_cli("rules", "--markdown")
    assert out.returncode == 0 and out.stdout == catalogue_markdown()


def test_markdown_with_a_rule_is_a_usage_error():
    from conftest import run_cli

    out = run_cli("rules", "--markdown", "BS001")
    assert out.returncode == 2 and "--markdown prints the whole catalogue" in out.stderr
