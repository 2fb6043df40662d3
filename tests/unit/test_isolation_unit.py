"""Writing a report atomically: a write that fails half-way keeps the old file and leaves no
temporary file behind (what a scan stopped by a crash or a timeout relies on)."""

from __future__ import annotations

import pytest

from breakscan.errors import UsageError
from breakscan.files import write_atomic


def test_write_atomic_keeps_the_old_file_when_a_write_fails(tmp_path):
    dest = tmp_path / "report.json"
    dest.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(dest, "new \ud800 text")  # a lone surrogate cannot be encoded mid-write
    assert dest.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left behind
    write_atomic(dest, "new\n")
    assert dest.read_text() == "new\n"


def job_that_refuses(request, on_stage, on_progress):
    on_stage("apply", None)
    raise UsageError("not applicable: no such attribute on the built model")


def job_whose_model_raises(request, on_stage, on_progress):
    on_stage("eager run", None)
    raise ZeroDivisionError("division by zero")


def job_that_finishes(request, on_stage, on_progress):
    return {"seen": request["x"]}


def test_run_here_ends_a_job_as_a_child_would():
    """``run_here`` (``verify_fixes(isolate=False)``): the job's result, or its one-line error
    and exit code with the stage it stopped in, as the child reports them."""
    from breakscan.process.child import run_here

    done = run_here(f"{__name__}:job_that_finishes", {"x": 1}, target="t")
    assert (done.result, done.error, done.exit_code) == ({"seen": 1}, None, 0)
    refused = run_here(f"{__name__}:job_that_refuses", {}, target="t")
    assert (refused.error, refused.exit_code, refused.stage) == (
        "not applicable: no such attribute on the built model", 2, "apply")
    failed = run_here(f"{__name__}:job_whose_model_raises", {}, target="t")
    # raised outside breakscan's code: the model's failure, exit 3, naming the stage
    assert failed.exit_code == 3 and failed.stage == "eager run"
    assert failed.error.startswith("during eager run, the model failed: ZeroDivisionError")
