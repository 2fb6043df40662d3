"""Dynamo's recompile messages parsed (no torch, no scan)."""

from __future__ import annotations

from breakscan.analysis.recompiles import parse_recompile_message


def test_parse_recompile_message():
    text = ("Recompiling function forward in /m/model.py:21\n"
            "    triggered by the following guard failure(s):\n"
            "    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4\n")
    rec = parse_recompile_message(text)
    assert (rec.function, rec.file, rec.line) == ("forward", "/m/model.py", 21)
    assert rec.reasons == ["tensor 'x' size mismatch at index 0. expected 8, actual 4"]
    assert rec.failed_compile_ids == ["0/0"]
    assert parse_recompile_message("Graph break in user code at x.py:1") is None
