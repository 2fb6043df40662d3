"""Where a source file belongs: its import root, module name and package folder (a package, a
src/ layout, a namespace package, a lone file), and a module name's file. No model, no torch."""

from __future__ import annotations

from breakscan.sources import module_file, source_tree

from conftest import FIXTURES

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
