"""breakscan.fixes.rewrite against fixture pairs (TorchFix style), and fixes.write on the user's
file (tests/scan/test_rewrite_scan.py runs the rewritten fixtures under real torch).

tests/fixtures/rewrite/<case>.in.py marks the target line with ``# rewrite: <fix id>``; the
rewrite must equal <case>.out.py byte for byte. <case>.refuse.py also carries
``# refuse: <part of the reason>``.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import stat

import pytest

from breakscan.errors import UsageError
from breakscan.fixes.rewrite import Rewrite, unified_diff
from breakscan.fixes.source_fixes import propose_rewrite
from breakscan.fixes.write import write_fixes
from breakscan.model.verdicts import Fix

from conftest import FIXTURES

HERE = FIXTURES / "rewrite"
PAIRS = sorted(p.name[: -len(".in.py")] for p in HERE.glob("*.in.py"))
REFUSALS = sorted(p.name[: -len(".refuse.py")] for p in HERE.glob("*.refuse.py"))


def marker(source: str) -> tuple[int, str]:
    hits = [(i, m.group(1)) for i, text in enumerate(source.splitlines(), 1)
            if (m := re.search(r"# rewrite: (\w+)", text))]
    assert len(hits) == 1, hits
    return hits[0]


def target_span(source: str, line: int) -> tuple[int, int]:
    """Lines of the innermost statement at ``line`` (plus a `return` right after an else-less if),
    found with ``ast``: independent of the libcst code under test."""
    tree = ast.parse(source)
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    stmt = min((n for n in ast.walk(tree) if isinstance(n, ast.stmt)
                and n.lineno <= line <= n.end_lineno), key=lambda n: n.end_lineno - n.lineno)
    end = stmt.end_lineno
    body = getattr(parents[stmt], "body", [])
    if isinstance(stmt, ast.If) and not stmt.orelse and stmt in body:
        nxt = body[body.index(stmt) + 1: body.index(stmt) + 2]
        if nxt and isinstance(nxt[0], ast.Return):
            end = nxt[0].end_lineno
    start = min([stmt.lineno] + [getattr(d, "lineno", stmt.lineno) for d in
                                 getattr(stmt, "decorator_list", [])])
    return start, end


@pytest.mark.parametrize("case", PAIRS)
def test_fixture_pair(case):
    src = (HERE / f"{case}.in.py").read_text()
    expected = (HERE / f"{case}.out.py").read_text()
    line, fix_id = marker(src)
    rw = propose_rewrite(src, line, fix_id)
    assert rw.refused is None, rw.refused
    assert (rw.fix_id, rw.line) == (fix_id, line)
    assert rw.title and "\n" not in rw.title
    assert rw.new_source == expected, unified_diff(expected, rw.new_source or "", case)
    compile(rw.new_source, f"{case}.out.py", "exec")

    # Everything outside the target statement is byte-identical (comments, blanks, spacing).
    start, end = target_span(src, line)
    old, new = src.splitlines(keepends=True), rw.new_source.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2 and new[j1:j2] == ["import torch\n"]:
            continue  # the one allowed addition elsewhere
        assert start - 1 <= i1 and i2 <= end, (case, tag, old[i1:i2], new[j1:j2], (start, end))


@pytest.mark.parametrize("case", REFUSALS)
def test_fixture_refusal(case):
    src = (HERE / f"{case}.refuse.py").read_text()
    line, fix_id = marker(src)
    want = re.search(r"# refuse: (.+)", src).group(1).strip()
    rw = propose_rewrite(src, line, fix_id)
    assert rw.new_source is None
    assert rw.refused and want in rw.refused and "\n" not in rw.refused, rw.refused


def test_unified_diff_labels():
    src = (HERE / "print_plain.in.py").read_text()
    rw = propose_rewrite(src, marker(src)[0], "print_guard")
    diff = unified_diff(src, rw.new_source, "models/net.py")
    assert diff.startswith("--- a/models/net.py\n+++ b/models/net.py\n")
    assert "+    if not torch.compiler.is_compiling():\n" in diff
    assert unified_diff("a", "b", "x.py").endswith("+b\n\\ No newline at end of file\n")
    assert unified_diff(src, src, "x.py") == ""


DDB = "torch_where"  # the fix a data-dependent branch gets
SMALL = "import torch\n\n\ndef f(x):\n    {stmt}\n    return x\n"


@pytest.mark.parametrize("stmt, title", [
    ("self.logger.debug('x %s', x)", "self.logger.debug()"),
    ("logging.warning('careful')", "logging.warning()"),
    ("logging.getLogger(__name__).info(x)", "logging.getLogger(__name__).info()"),
])
def test_logging_calls_are_guarded(stmt, title):
    rw = propose_rewrite(SMALL.format(stmt=stmt), 5, "print_guard")
    assert rw.refused is None and title in rw.title
    assert f"    if not torch.compiler.is_compiling():\n        {stmt}\n" in rw.new_source


@pytest.mark.parametrize("source, line, fix_id, reason", [
    ("def f(:\n", 1, "print_guard", "not valid Python"),
    ("x = 1\n\x00", 1, "print_guard", "not valid Python"),
    ("", 1, "print_guard", "no statement"),
    (SMALL.format(stmt="y = x + 1"), 5, "print_guard", "no print or logging call"),
    (SMALL.format(stmt="print(x); y = 1"), 5, "print_guard", "shares its line"),
    (SMALL.format(stmt="if x: print(x)"), 5, "print_guard", "compound statement"),
    (SMALL.format(stmt="y = x"), 99, "print_guard", "no statement"),
    (SMALL.format(stmt="y = x"), -3, DDB, "no `if`"),
    (SMALL.format(stmt="assert x.sum() > 0"), 5, DDB, "no `if`"),
    (SMALL.format(stmt="if x.sum() > 0 and x.max() < 1: x = -x"), 5, DDB,
     "and/or/not"),
    (SMALL.format(stmt="if x.sum().item() > 0: x = -x"), 5, DDB, ".item()"),
    (SMALL.format(stmt="if x.sum() > 0: x = x * x.sum().item()"), 5, DDB,
     "a .item() call"),
    (SMALL.format(stmt="if x.sum() > 0: x = x.add_(1)"), 5, DDB, "in-place .add_()"),
    (SMALL.format(stmt="if x.sum() > 0: x = (y := x * 2)"), 5, DDB, "walrus"),
    (SMALL.format(stmt="if x.sum() > 0: x = seen.append(x)"), 5, DDB, ".append()"),
    (SMALL.format(stmt="if x.sum() > 0: x = print(x)"), 5, DDB, "print() call"),
    (SMALL.format(stmt="if x.sum() > 0: buf[0] = x"), 5, DDB, "subscript assignment"),
    (SMALL.format(stmt="if x.sum() > 0: pass"), 5, DDB, "`pass`"),
    (SMALL.format(stmt="if x.sum() > 0: a, b = x, x"), 5, DDB, "tuple assignment"),
    (SMALL.format(stmt="if x.sum() > 0: return x\n    x = x + 1"), 5, DDB, "returns early"),
    (SMALL.format(stmt="if x.sum() > 0: x = x * 2; y = x"), 5, DDB,
     "assigned earlier"),
    (SMALL.format(stmt="y = x"), 5, "item", "no source rewrite for item; see the settings fixes"),
    (SMALL.format(stmt="y = x"), 5, "frame_skipped", "no source rewrite for frame_skipped"),
])
def test_refusals(source, line, fix_id, reason):
    rw = propose_rewrite(source, line, fix_id)
    assert isinstance(rw, Rewrite) and rw.new_source is None
    assert rw.refused and reason in rw.refused and "\n" not in rw.refused, rw.refused


def test_one_line_if_and_module_level():
    rw = propose_rewrite(SMALL.format(stmt="if x.sum() > 0: x = x * 2  # note"), 5,
                         "torch_where")
    assert "    x = torch.where(x.sum() > 0, x * 2, x)  # note\n" in rw.new_source
    rw = propose_rewrite("print('hi')\n", 1, "print_guard")
    assert rw.new_source == "import torch\nif not torch.compiler.is_compiling():\n    print('hi')\n"


def test_never_raises_on_odd_input():
    for args in [(None, 1, "print_guard"), ("x = 1\n", "one", "torch_where"),
                 (b"print(1)\n", 1, "print_guard")]:
        rw = propose_rewrite(*args)
        assert isinstance(rw, Rewrite)


# -- writing a verified fix into the user's file (fixes.write) ---------------------------------

SOURCE = ('import torch\r\nfrom torch import nn\r\n\r\n\r\nclass M(nn.Module):\r\n'
          '    def forward(self, x):\r\n        h = x * 2\r\n        print("h", h)\r\n'
          '        return h\r\n')


def _guard_fix(path, **extra) -> Fix:
    return Fix(rule="BS003", fix_id="print_guard", kind="source", title="guard",
               category="print", file=str(path), line=8, verified=True, **extra)


def test_write_keeps_line_ends_bom_mode_and_hard_links(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    os.chmod(path, 0o600)
    link = tmp_path / "linked.py"
    os.link(path, link)
    (fix,) = [_guard_fix(path)]
    write_fixes([fix])
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\n" not in data.replace(b"\r\n", b"")
    assert b"        if not torch.compiler.is_compiling():\r\n            print(\"h\", h)\r\n" \
        in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and link.read_bytes() == data
    assert fix.written and open(fix.backup, "rb").read() == b"\xef\xbb\xbf" + SOURCE.encode()


def test_write_refuses_a_file_changed_since_the_scan_or_read_only(tmp_path):
    import hashlib

    path = tmp_path / "m.py"
    path.write_text(SOURCE.replace("\r\n", "\n"))
    planned = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text("# a line added after the scan\n" + SOURCE.replace("\r\n", "\n"))
    with pytest.raises(UsageError, match="it changed since the scan verified the fix"):
        write_fixes([_guard_fix(path, source_sha256=planned)])
    assert not list(tmp_path.glob("*.bak"))
    path.write_text(SOURCE.replace("\r\n", "\n"))
    os.chmod(path, 0o444)  # refused by its mode, even for root
    with pytest.raises(UsageError, match="the file is read-only"):
        write_fixes([_guard_fix(path)])
    assert path.read_text() == SOURCE.replace("\r\n", "\n")


def test_write_into_a_read_only_folder_is_a_one_line_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.py"
    path.write_text(SOURCE.replace("\r\n", "\n"))
    os.chmod(folder, 0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write read-only folders (root)")
        with pytest.raises(UsageError, match="cannot write .*m.py or its backup"):
            write_fixes([_guard_fix(path)])
    finally:
        os.chmod(folder, 0o755)
