"""Writing a report atomically: a write that fails half-way keeps the old file and leaves no
temporary file behind (what a scan stopped by a crash or a timeout relies on)."""

from __future__ import annotations

import pytest

from breakscan.files import write_atomic


def test_write_atomic_keeps_the_old_file_when_a_write_fails(tmp_path):
    dest = tmp_path / "report.json"
    dest.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(dest, "new \ud800 text")  # a lone surrogate cannot be encoded mid-write
    assert dest.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left behind
    write_atomic(dest, "new\n")
    assert dest.read_text() == "new\n"
