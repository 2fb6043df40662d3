"""``--fix --write`` keeps every line's own end: a file mixing CRLF and LF, a CR-only file, a
last line without an end. Only the rewritten statement changes; its new lines take the end of
the line they replace. Real files, compared byte for byte line by line."""

from __future__ import annotations

import re

import pytest

from breakscan.fixes.write import write_fixes
from breakscan.model.verdicts import Fix

LINES = [b"import torch", b"from torch import nn", b"", b"", b"class M(nn.Module):",
         b"    def forward(self, x):", b"        h = x * 2", b'        print("h", h)',
         b"        h = h + 1", b'        print("again", h)', b"        return h"]
FIRST, SECOND = 8, 10  # the two print lines (1-based)


def _guard(path, line: int) -> Fix:
    return Fix(rule="BS003", fix_id="print_guard", kind="source", title="guard",
               category="print", file=str(path), line=line, verified=True)


def _split(data: bytes) -> list[bytes]:
    """Lines with their own ends, read independently of breakscan."""
    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", data)


def _guarded(line: bytes, end: bytes) -> list[bytes]:
    indent = line[: len(line) - len(line.lstrip())]
    return [indent + b"if not torch.compiler.is_compiling():" + end, b"    " + line + end]


def _write(tmp_path, ends: list[bytes], lines: tuple[int, ...]) -> tuple[list[bytes], list[bytes]]:
    """The file written from LINES with ``ends``, each print at ``lines`` guarded with --write;
    (the lines before, the lines after), each with its end."""
    path = tmp_path / "model.py"
    path.write_bytes(b"".join(text + end for text, end in zip(LINES, ends)))
    before = _split(path.read_bytes())
    fixes = [_guard(path, n) for n in lines]
    write_fixes(fixes)
    assert all(f.written for f in fixes)
    return before, _split(path.read_bytes())


def _expected(before: list[bytes], ends: list[bytes], lines: tuple[int, ...]) -> list[bytes]:
    out = []
    for number, (text, end) in enumerate(zip(LINES, ends), 1):
        out += _guarded(text, end) if number in lines else [before[number - 1]]
    return out


@pytest.mark.parametrize("ends", [
    pytest.param([b"\r\n", b"\n"] * 5 + [b"\r\n"], id="mixed-crlf-lf"),
    pytest.param([b"\n", b"\r\n"] * 5 + [b"\n"], id="mixed-lf-crlf"),
    pytest.param([b"\r"] * 11, id="cr-only"),
    pytest.param([b"\r\n"] * 3 + [b"\r"] * 3 + [b"\n"] * 5, id="all-three"),
])
def test_every_untouched_line_keeps_its_own_end(tmp_path, ends):
    before, after = _write(tmp_path, ends, (FIRST,))
    assert after == _expected(before, ends, (FIRST,))
    assert after[: FIRST - 1] == before[: FIRST - 1] and after[FIRST + 1:] == before[FIRST:]


def test_two_rewrites_in_one_file_each_take_their_own_lines_end(tmp_path):
    ends = [b"\n"] * 7 + [b"\r\n", b"\n", b"\r", b"\r\n"]
    before, after = _write(tmp_path, ends, (FIRST, SECOND))
    assert after == _expected(before, ends, (FIRST, SECOND))
    assert after[FIRST - 1: FIRST + 1] == [b"        if not torch.compiler.is_compiling():\r\n",
                                          b'            print("h", h)\r\n']
    assert after[SECOND: SECOND + 2] == [b"        if not torch.compiler.is_compiling():\r",
                                        b'            print("again", h)\r']


def test_a_last_line_without_an_end_keeps_none(tmp_path):
    ends = [b"\r\n"] * 10 + [b""]
    before, after = _write(tmp_path, ends, (SECOND,))
    assert after == _expected(before, ends, (SECOND,))
    assert after[-1] == b"        return h"


def test_a_rewritten_last_line_without_an_end_ends_as_it_did(tmp_path):
    """The statement's new lines take the end of the line above; the last one has none."""
    path = tmp_path / "model.py"
    path.write_bytes(b"import torch\r\n\r\ndef f(x):\r\n    x = x + 1\n    print(x)")
    write_fixes([_guard(path, 5)])
    assert path.read_bytes() == (b"import torch\r\n\r\ndef f(x):\r\n    x = x + 1\n"
                                 b"    if not torch.compiler.is_compiling():\n"
                                 b"        print(x)")
