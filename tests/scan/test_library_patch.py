"""Issue 44 §4: a break inside an installed library gets the same rewrite on a patched copy of
the library's file, proved in the fix's child without writing into site-packages
(tests/fixtures/site-packages/toylib, a stand-in: its folder is named site-packages)."""

from __future__ import annotations

import hashlib

from breakscan.fixes.library_patch import installed_package

from conftest import FIXTURES, GAINED, fixes_in_process

CASES = FIXTURES / "models" / "library_cases.py"
TOYLIB = FIXTURES / "site-packages" / "toylib" / "__init__.py"


def test_installed_package_names_the_package_and_its_path_inside_it():
    package = installed_package(str(TOYLIB))
    assert (package.name, package.relative, package.version) == ("toylib", "toylib/__init__.py",
                                                                 "")
    assert installed_package(str(CASES)) is None  # the user's own code


def test_a_library_check_is_patched_on_a_copy_and_proved():
    """The library's `if torch.isnan(h).any(): raise` breaks (4 graphs with the caller's
    frames); guarded on a patched copy of the library file, the model compiles as 1 graph with
    the same outputs. The diff names the package and the file's path inside it; the installed
    file is untouched."""
    before = hashlib.sha256(TOYLIB.read_bytes()).hexdigest()
    fixes = fixes_in_process(f"{CASES}:UsesCheckedEncoder", "4,16")
    (fix,) = [f for f in fixes if f["kind"] == "library"]
    assert fix["fix_id"] == "guard_side_effect" and fix["file"] == str(TOYLIB)
    assert fix["title"] == ("patch toylib (version unknown) (toylib/__init__.py): run "
                            "`if torch.isnan(h).any(): ...` only eagerly: guard it with "
                            "torch.compiler.is_compiling()")
    assert fix["diff"].startswith("--- a/toylib/__init__.py\n+++ b/toylib/__init__.py\n")
    assert "+        if not torch.compiler.is_compiling():\n" in fix["diff"]
    assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (4, 1)
    assert fix["outputs_match"] and fix["status"] in GAINED, fix["reason"]
    assert not fix["written"]
    assert hashlib.sha256(TOYLIB.read_bytes()).hexdigest() == before
