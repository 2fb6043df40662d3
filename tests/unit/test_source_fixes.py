"""One registry of fixes by fix id (issue 43): every fix the catalogue names is complete, and
every source fix has its rewrite, a title, a fixture pair and a refusal.

One fixture layout for every source fix: ``tests/fixtures/rewrite/[group/]<case>.in.py`` marks
its line with ``# rewrite: <fix id>`` (``# call: NAME`` for a fix at a call), the rewrite must
equal ``<case>.out.py`` byte for byte, and ``<case>.refuse.py`` carries ``# refuse: <part of the
reason>``. The groups' own tests run their cases (test_rewrite.py, test_rewrite_families.py,
test_escape_hatch.py); this module runs the library/ group and checks that every fix has both.
"""

from __future__ import annotations

import re

import pytest

from breakscan.fixes.rewrite import unified_diff
from breakscan.fixes.source_fixes import SOURCE_FIXES, propose_rewrite
from breakscan.rules.catalogue import CATALOGUE, FIXES

from conftest import FIXTURES

ROOT = FIXTURES / "rewrite"
LIBRARY = ROOT / "library"
KINDS = {"setting", "source", "dynamic", "switch", "constants"}


def marker(source: str) -> tuple[int, str, str | None]:
    hits = [(i, m.group(1)) for i, text in enumerate(source.splitlines(), 1)
            if (m := re.search(r"# rewrite: (\w+)", text))]
    assert len(hits) == 1, hits
    call = re.search(r"# call: (\w+)", source)
    return hits[0][0], hits[0][1], call.group(1) if call else None


def test_every_fix_is_registered_once_with_what_its_kind_needs():
    rules = {r.id for r in CATALOGUE}
    families = {r.category for r in CATALOGUE}
    for fix in FIXES.values():
        assert fix.kind in KINDS, fix.id
        assert fix.rule is None or fix.rule in rules, fix.id
        assert set(fix.also_for) <= families, fix.id
        if fix.kind == "setting":
            assert fix.config and fix.setting, fix.id
        if fix.kind == "switch":
            assert fix.switch and fix.applies is not None and fix.setting, fix.id
        if fix.kind == "source":
            assert fix.title and "\n" not in fix.title, fix.id
    for rule in CATALOGUE:  # a rule names only fixes the registry has
        assert set(rule.fixes) <= set(FIXES), rule.id


def test_every_source_fix_has_its_rewrite():
    assert set(SOURCE_FIXES) == {f.id for f in FIXES.values() if f.kind == "source"}
    assert propose_rewrite("x = 1\n", 1, "no_such_fix").refused == (
        "no source rewrite for no_such_fix; see the settings fixes")


def test_every_source_fix_has_a_fixture_pair_and_a_refusal():
    pairs = {p: marker(p.read_text())[1] for p in ROOT.rglob("*.in.py")}
    refusals = {marker(p.read_text())[1] for p in ROOT.rglob("*.refuse.py")}
    assert all(p.with_name(p.name.replace(".in.py", ".out.py")).exists() for p in pairs)
    assert set(pairs.values()) == refusals == set(SOURCE_FIXES)


# The groups this module runs: library/ (fixes at a library call), host/ (host code done by
# torch ops, a container indexed by a tensor: fixes/host_equivalents.py) and caller/ (a global
# torch setting moved to the caller: fixes/hoist.py).
GROUPS = (LIBRARY, ROOT / "host", ROOT / "caller")


@pytest.mark.parametrize("case", sorted(p.relative_to(ROOT).as_posix()[:-len(".in.py")]
                                        for g in GROUPS for p in g.glob("*.in.py")))
def test_library_fixture_pair(case):
    src = (ROOT / f"{case}.in.py").read_text()
    expected = (ROOT / f"{case}.out.py").read_text()
    line, fix_id, call = marker(src)
    rw = propose_rewrite(src, line, fix_id, call=call)
    assert rw.refused is None, rw.refused
    assert (rw.fix_id, rw.line) == (fix_id, line) and rw.title and "\n" not in rw.title
    assert rw.new_source == expected, unified_diff(expected, rw.new_source or "", case)


@pytest.mark.parametrize("case", sorted(p.relative_to(ROOT).as_posix()[:-len(".refuse.py")]
                                        for g in GROUPS for p in g.glob("*.refuse.py")))
def test_library_fixture_refusal(case):
    src = (ROOT / f"{case}.refuse.py").read_text()
    line, fix_id, call = marker(src)
    want = re.search(r"# refuse: (.+)", src).group(1).strip()
    rw = propose_rewrite(src, line, fix_id, call=call)
    assert rw.new_source is None
    assert rw.refused and want in rw.refused and "\n" not in rw.refused, rw.refused



def test_hoisted_manager_is_parsed_never_evaluated():
    """The caller's manager crosses to the verifying child as text: only a global torch setting
    with constant arguments is accepted; anything else is refused before any call."""
    from breakscan.fixes.hoist import parsed_manager

    assert parsed_manager("torch.backends.cudnn.flags(enabled=False, deterministic=True)") == (
        "torch.backends.cudnn.flags", (), {"enabled": False, "deterministic": True})
    assert parsed_manager("torch.random.fork_rng()") == ("torch.random.fork_rng", (), {})
    for text, reason in (("os.system('touch /tmp/x')", "not a global torch setting"),
                         ("torch.backends.cudnn.flags(enabled=open('/etc/passwd'))",
                          "not constants"),
                         ("torch.backends.cudnn.flags(**settings)", "not constants"),
                         ("torch.no_grad()", "not a global torch setting"),
                         ("__import__('os').system('x')", "not a global torch setting"),
                         ("torch.random.fork_rng", "not a call")):
        with pytest.raises(ValueError, match=reason):
            parsed_manager(text)
