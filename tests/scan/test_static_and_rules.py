"""The static section of a scan: lint findings confirmed, not exercised or not traced by the run
(in this process)."""

from __future__ import annotations

import pytest

from breakscan import scan
from breakscan.rules.catalogue import finding_status

from conftest import FIXTURES, SAMPLES, locate

RARE = f"{SAMPLES}/rare_path.py:RarePathPrint"


@pytest.mark.parametrize("shape, status, graphs", [("8,16", "not exercised", 1),
                                                     ("128,16", "break", 2)])
def test_a_break_on_a_path_not_taken_is_not_exercised_until_it_is(shape, status, graphs):
    doc = scan(RARE, input_shapes=[shape]).to_dict()  # stage logic: in this process
    assert doc["summary"]["graph_count"] == graphs
    _, line = locate('print("large batch", x.shape)', SAMPLES / "rare_path.py")
    (finding,) = [f for f in doc["static"] if f["category"] == "print"]
    assert (finding["rule"], finding["line"], finding["status"]) == ("BS003", line, status)


def test_static_findings_confirmed_by_the_run_are_marked_break():
    doc = scan(f"{SAMPLES}/tensor_branch.py:TensorIf", input_shapes=["8,16"]).to_dict()
    (finding,) = doc["static"]
    assert (finding["category"], finding["status"]) == ("data_dependent_branch", "break")
    assert finding["line"] == doc["breaks"][0]["line"]


# -- lint statuses in a skipped frame (tests/fixtures/models/real_code.py) ------------------------

RC = FIXTURES / "models" / "real_code.py"


def _scan(name: str, shape: str = "4,16", **kwargs):
    return scan(f"{RC}:{name}", input_shapes=[shape], **kwargs)


def _line(text: str, file=RC) -> int:
    return locate(text, file)[1]


def test_lint_says_not_traced_for_a_line_in_a_skipped_frame():
    result = _scan("SkippedFrameLint")
    (item,) = [f for f in result.static if f.category == "item"]
    assert item.line == _line("scale = x.abs().max().item()") and item.status == "not traced"
    assert "not traced (frame skipped)" in finding_status(item.status, item.category)
