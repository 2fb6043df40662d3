"""Models inside packages scanned in this process by their file's path: relative imports,
src/ layouts and namespace packages.

Module targets and fixes inside a package, through the real CLI: tests/cli/test_packages.py.
"""

from __future__ import annotations

from breakscan import scan

from conftest import FIXTURES, locate

PACKAGES = FIXTURES / "packages"
BLOCK = PACKAGES / "bs_pkg" / "layers" / "block.py"


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
