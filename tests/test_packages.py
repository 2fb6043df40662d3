"""Models inside packages: relative imports, src/ layouts, namespace packages, module targets,
and source fixes that rewrite a file of the package (in a temporary copy)."""

from __future__ import annotations

import hashlib
import json

from breakscan import scan
from breakscan.sources import module_file, source_tree

from conftest import GAINED, FIXTURES, QUICK, locate, run_cli

PACKAGES = FIXTURES / "packages"
BLOCK = PACKAGES / "bs_pkg" / "layers" / "block.py"


def test_the_source_tree_of_a_package_file_a_src_layout_a_namespace_package_and_a_lone_file():
    tree = source_tree(PACKAGES / "bs_pkg" / "model.py")
    assert (tree.root, tree.module, tree.package_dir) == (
        PACKAGES, "bs_pkg.model", PACKAGES / "bs_pkg")
    assert source_tree(BLOCK).module == "bs_pkg.layers.block"
    src = source_tree(PACKAGES / "src" / "bs_srcpkg" / "model.py")
    assert (src.root, src.module) == (PACKAGES / "src", "bs_srcpkg.model")
    namespace = source_tree(PACKAGES / "bs_nspkg" / "model.py")  # no __init__.py
    assert (namespace.root, namespace.module) == (PACKAGES, "bs_nspkg.model")
    lone = source_tree(FIXTURES / "impact_models.py")
    assert (lone.module, lone.package_dir, lone.tree) == (None, None, FIXTURES)
    assert module_file("bs_pkg.layers.block", [str(PACKAGES)]) == BLOCK
    assert module_file("bs_pkg", [str(PACKAGES)]) == PACKAGES / "bs_pkg" / "__init__.py"
    assert module_file("bs_pkg.nothing", [str(PACKAGES)]) is None


def test_a_package_file_with_relative_imports_loads_by_its_path():
    result = scan(f"{PACKAGES / 'bs_pkg' / 'model.py'}:PkgNet", input_shapes=["4,16"])
    (brk,) = result.breaks
    assert (brk.file, brk.line) == (str(BLOCK), locate("if h.sum() > 0:", BLOCK)[1])
    assert brk.category == "data_dependent_branch" and brk.owner == "user"
    assert result.summary.graph_count == 2


def test_src_layout_and_namespace_packages_load_by_path():
    for path, name in ((PACKAGES / "src" / "bs_srcpkg" / "model.py", "SrcNet"),
                       (PACKAGES / "bs_nspkg" / "model.py", "NsNet")):
        result = scan(f"{path}:{name}", input_shapes=["4,16"])
        (brk,) = result.breaks
        assert (brk.category, brk.file) == ("print", str(path)), name


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
