"""A scan's child process crashing, seen through the Python API (`scan_isolated`): the crash is
the scan's error at the user's line, with what the stages before it found kept, marked partial.

The same failures through the real CLI are in tests/cli/test_isolation.py.
"""

from __future__ import annotations

from breakscan.options import Limits, ScanOptions
from breakscan.runs.runner import scan_isolated

from conftest import FIXTURES, locate, shown

M = FIXTURES / "models" / "misbehaving.py"


def test_abort_in_forward_is_a_crash_at_the_users_line():
    _, line = locate("os.abort()", M)
    run = scan_isolated(f"{M}:AbortsOnNewBatch",
                        ScanOptions(input_shapes=["8,4"], vary_batch="8,16"), Limits(timeout=60))
    assert run.exit_code == 3 and run.stage == "recompiles" and run.partial
    assert run.error == f"the scan process crashed with SIGABRT during recompiles at {shown(M)}:{line} " \
                        "in forward"
    assert run.result.summary.graph_count == 1  # explain had finished
    assert "Fatal Python error: Aborted" in run.detail  # what --debug shows
