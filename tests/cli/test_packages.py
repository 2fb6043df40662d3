"""Models inside packages through the real CLI: a module target loaded from the working
directory, and source fixes that rewrite a file of the package (in a temporary copy).

Package files scanned by path in this process are in tests/scan/test_packages_scan.py; how a
file's package and module are found in tests/unit/test_packages_unit.py.
"""

from __future__ import annotations

import hashlib
import json

from conftest import GAINED, FIXTURES, QUICK, run_cli

PACKAGES = FIXTURES / "packages"
BLOCK = PACKAGES / "bs_pkg" / "layers" / "block.py"


def test_a_module_target_loads_from_the_working_directory_and_names_both_fixes_when_not():
    proc = run_cli("bs_pkg.model:PkgNet", "-s", "4,16", "-q", cwd=PACKAGES)
    assert proc.returncode == 0, proc.stderr
    assert "graphs 2 · root-cause breaks 1" in proc.stdout
    proc = run_cli("bs_pkg.model:PkgNet", "-s", "4,16", "-q", cwd=FIXTURES)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"breakscan: error: no module named 'bs_pkg.model' importable from {FIXTURES}: run "
        "breakscan from the folder that holds it (or add that folder to PYTHONPATH), or pass its "
        "file instead, e.g. path/to/model.py:NAME"]


def _digests() -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in PACKAGES.rglob("*.py")}


def test_fix_verifies_a_rewrite_inside_the_package_for_a_path_and_a_module_target():
    before = _digests()
    for target, cwd in ((f"{PACKAGES / 'bs_pkg' / 'model.py'}:PkgNet", FIXTURES),
                        ("bs_pkg.model:PkgNet", PACKAGES)):
        proc = run_cli(target, "-s", "4,16", "--fix", *QUICK, "-f", "json", cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        (fix,) = [f for f in json.loads(proc.stdout)["fixes"] if f["fix_id"] == "torch_where"]
        assert fix["status"] in GAINED and fix["outputs_match"], fix["reason"]
        assert fix["file"] == str(BLOCK)
        assert (fix["before"]["graph_count"], fix["after"]["graph_count"]) == (2, 1)
        assert "+        h = torch.where(h.sum() > 0, h * 2, h - 1)" in fix["diff"]
    assert _digests() == before  # the package itself untouched
    assert not list(PACKAGES.rglob("__pycache__"))
