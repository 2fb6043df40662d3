"""pytest plugin (entry point ``pytest11``): a ``breakscan`` fixture and marker.

    @pytest.mark.breakscan(max_breaks=0)
    def test_encoder_compiles_cleanly(breakscan):
        breakscan(Encoder(), torch.randn(8, 16))

The fixture checks a model and fails the test with breakscan's report; the marker sets its
limits for one test (keyword arguments of :func:`breakscan.assert_max_graph_breaks`).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "breakscan(max_breaks=None, max_graphs=None, max_graph_calls=None, fail_on=None, "
        "fullgraph=False, dynamic=None): "
        "limits for the breakscan fixture in this test (only those given apply; none given: "
        "max_breaks=0)")


@pytest.fixture
def breakscan(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Call as ``breakscan(model, *inputs, **limits)``; returns the ScanResult."""
    from .assertions import GraphBreakError, assert_max_graph_breaks

    marker = request.node.get_closest_marker("breakscan")
    defaults = dict(marker.kwargs) if marker else {}

    def check(model: Any, *inputs: Any, **limits: Any) -> Any:
        options = {**defaults, **limits}  # only the limits given (marker, then call) apply
        try:
            return assert_max_graph_breaks(model, tuple(inputs), **options)
        except GraphBreakError as exc:
            message = str(exc)
        pytest.fail(message, pytrace=False)  # outside the except: one message, no chain

    return check
