"""A break type breakscan has never seen (issue 46 §1): an id of the installed registry that no
family lists, by id or by what the break is, is named as new in this torch with Dynamo's own
text and hints, never silently `other` with a guess."""

from __future__ import annotations

import io
import json

from breakscan import ScanOptions, scan
from breakscan.report import terminal
from breakscan.rules import categories, registry

from conftest import SAMPLES


def test_a_break_type_no_family_lists_is_named_new_with_dynamos_own_text(monkeypatch):
    """`Tensor.resize_` breaks with GB0126 on every tested torch; with GB0126 taken out of
    breakscan's catalogue (as a release's new random id would be), the real scan names it new,
    with Dynamo's title, explanation and hints from the installed registry."""
    unlisted = {k: v for k, v in categories.FAMILY_OF.items() if k != "GB0126"}
    monkeypatch.setattr(categories, "FAMILY_OF", unlisted)
    monkeypatch.setattr(categories, "family_titles", lambda: {})
    result = scan(f"{SAMPLES}/family_tensor_mutation.py:ResizeWorkspace",
                  ScanOptions(input_shapes=("8,16",)))
    (brk,) = result.breaks
    entry = registry.entry("GB0126")
    assert brk.gb_id == "GB0126" and brk.category == "other" and brk.new_in_torch
    assert brk.code == "workspace.resize_(h.shape)"
    assert brk.suggestion.startswith(f"New in this torch (torch ") and \
        f'GB0126 "{entry.title}" is a break type breakscan has no family for yet.' in brk.suggestion
    assert f"Dynamo: {brk.explanation.splitlines()[0].rstrip('.')}." in brk.suggestion
    out = io.StringIO()
    terminal.render(result, terminal.console(file=out, width=200))
    assert "New in this torch" in out.getvalue()
    doc = json.loads(json.dumps(result.to_dict(), default=str))
    assert doc["breaks"][0]["new_in_torch"] is True


def test_a_listed_break_type_is_not_new():
    result = scan(f"{SAMPLES}/family_tensor_mutation.py:ResizeWorkspace",
                  ScanOptions(input_shapes=("8,16",)))
    (brk,) = result.breaks
    assert brk.category == "tensor_mutation" and not brk.new_in_torch
    assert "New in this torch" not in brk.suggestion
