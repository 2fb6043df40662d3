"""`target.check_loadable`: which targets are refused without importing anything.

Refused: a name no statement of the file binds, a module no finder knows. Left to the scan
(never a false refusal): a name bound anywhere (inside an `if`, a `try`, a function's
`global`), a file that may make names at run time (`from x import *`, `globals()`,
`sys.modules`, a module `__getattr__`, importing itself), a package's submodule, a file that
does not parse. Through the CLI: tests/cli/test_check_unloadable.py.
"""

from __future__ import annotations

import textwrap

import pytest

from breakscan.errors import UsageError
from breakscan.target import check_loadable, parse_target


def _check(tmp_path, source: str, name: str, file: str = "model.py") -> str | None:
    path = tmp_path / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    try:
        check_loadable(parse_target(f"{path}:{name}"))
    except UsageError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("source", [
    "class Net: pass",
    "if True:\n    class Net: pass",
    "try:\n    from torch import Net\nexcept ImportError:\n    Net = None",
    "def build():\n    global Net\n    Net = 1",
    "import Net",
    "from x import *",
    "globals()['Net'] = 1",
    "import sys\nsetattr(sys.modules[__name__], 'Net', 1)",
    "def __getattr__(name):\n    return 1",
    "import model\nmodel.Net = 1",
    "def broken(:",
])
def test_a_name_that_may_exist_is_left_to_the_scan(tmp_path, source):
    assert _check(tmp_path, source, "Net") is None


def test_a_name_no_statement_binds_is_refused_with_the_scans_words(tmp_path):
    source = "import torch\nclass Encoder: pass\ndef make_encoder(): pass\nx = 1\n"
    path = tmp_path / "model.py"
    assert _check(tmp_path, source, "Encodr") == f"{path} has no 'Encodr'; did you mean Encoder?"
    assert _check(tmp_path, source, "Zzz") == \
        f"{path} has no 'Zzz'; it defines Encoder, make_encoder"
    assert _check(tmp_path, "x = 1\n", "Net") == f"{path} has no 'Net'; it defines no class " \
                                                 "or function"


def test_a_packages_submodule_is_left_to_the_scan(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "layers.py").write_text("")
    assert _check(tmp_path, "", "layers", file="pkg/__init__.py") is None
    assert _check(tmp_path, "", "heads", file="pkg/__init__.py") is not None


def test_a_module_no_finder_knows_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text("class Net: pass\n")
    check_loadable(parse_target("pkg.model:Net"))
    for source in ("pkg.missing", "nosuchpkg_3f9a.model", "pkg.model.deeper"):
        with pytest.raises(UsageError, match=f"^no module named '{source}' importable from "):
            check_loadable(parse_target(f"{source}:Net"))
    with pytest.raises(UsageError, match="^pkg.model has no 'Nett'; did you mean Net\\?$"):
        check_loadable(parse_target("pkg.model:Nett"))


def test_a_package_that_changes_its_path_is_left_to_the_scan(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "__init__.py").write_text("__path__.append('/elsewhere')\n")
    check_loadable(parse_target("ext.model:Net"))
