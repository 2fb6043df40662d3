"""What the documentation states as fact about the code: kept true by reading both."""

from __future__ import annotations

import re
from pathlib import Path

from breakscan.model.result import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_schema_version_the_docs_name_is_the_current_one():
    stated = [(doc.name, version) for doc in DOCS
              for version in re.findall(r'schema[_ ]version"?:?\s*"?,?\s*(?:currently\s+)?"?'
                                        r'(\d+\.\d+)', doc.read_text(encoding="utf-8"))]
    assert stated, "the JSON schema's example names its version"
    assert [s for s in stated if s[1] != SCHEMA_VERSION] == []


def test_install_commands_pin_torch_before_anything_pulls_it():
    """An unpinned torch pulls several GB of CUDA packages; ``pip install breakscan`` names a
    package that is not on PyPI. Every documented install pins torch first."""
    for doc in DOCS:
        for line in doc.read_text(encoding="utf-8").splitlines():
            if "pip install" not in line:
                continue
            assert "pip install breakscan" not in line, (doc.name, line)
            installs = line.split("pip install")[1:]
            if any(re.match(r"\s+(-U\s+)?torch(\s|$)", part) for part in installs):
                raise AssertionError(f"{doc.name}: unpinned torch: {line.strip()}")
