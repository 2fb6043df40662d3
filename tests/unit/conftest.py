"""tests/unit: torch-free tests that start no scan. A unit test that imports torch fails here;
``recorded_runs`` gives them real scan results without scanning.

pytest imports every ``conftest.py`` of a folder without ``__init__.py`` under the one module
name ``conftest``: once this file is imported, ``from conftest import ...`` (here and in any test
module collected after it) finds this module, so it re-exports every public name of
tests/conftest.py (from a second import of that file, under another module name).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "breakscan_tests_conftest", Path(__file__).resolve().parent.parent / "conftest.py")
_shared = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)
globals().update({name: value for name, value in vars(_shared).items()
                  if not name.startswith("_") and name not in globals()})

UNIT = Path(__file__).resolve().parent
RESULTS = _shared.FIXTURES / "results"


def recorded_runs(name: str) -> list:
    """tests/fixtures/results/<name>.json, real scan results saved by its record.py (the
    repository's path written as ``{ROOT}``), read back as fresh ``ModelRun`` objects."""
    from breakscan.model.jsondata import loads

    return loads((RESULTS / f"{name}.json").read_text().replace("{ROOT}", str(_shared.ROOT)))


def _unit_only(session: pytest.Session) -> bool:
    return bool(session.items) and all(UNIT in Path(item.path).parents for item in session.items)


@pytest.fixture(scope="session", autouse=True)
def _collection_imported_no_torch(request):
    """In a run of tests/unit alone, collecting them (module-level imports) loaded no torch."""
    if _unit_only(request.session):
        assert "torch" not in sys.modules, "collecting tests/unit imported torch"


@pytest.fixture(autouse=True)
def _test_imports_no_torch():
    """No unit test imports torch, not even lazily (in a mixed run: unless it already was)."""
    before = "torch" in sys.modules
    yield
    assert before or "torch" not in sys.modules, "this unit test imported torch"
