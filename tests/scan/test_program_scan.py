"""`breakscan.run_program`: a whole program run in this process, through the Python API.

The same runs through the real CLI (`breakscan run`) are in tests/cli/test_program.py.
"""

from __future__ import annotations

import sys

from conftest import FIXTURES

PROGRAMS = FIXTURES / "programs"


def test_python_api_runs_a_program_in_this_process():
    """`breakscan.run_program` runs the program here and returns the same report; the process's
    argv, path and Dynamo patches are as they were after."""
    from breakscan import ProgramOptions, run_program

    argv, path = list(sys.argv), list(sys.path)
    result = run_program(ProgramOptions(script=str(PROGRAMS / "three_regions.py"),
                                        capture_only=True, quiet=True))
    assert (sys.argv, sys.path) == (argv, path)
    assert [r.name for r in result.program.regions] == ["Encoder", "Decoder", "score"]
    assert result.program.exit_code == 0 and "encoded" in result.model_output
    import torch

    assert torch._dynamo.eval_frame._TorchDynamoContext.__call__.__module__ == \
        "torch._dynamo.eval_frame"
