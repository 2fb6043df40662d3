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


def job_that_swaps_a_module(request, on_stage, on_progress):
    """As a fix's job does: drop the user's module, import a rewritten copy from a temporary
    folder, remove the folder."""
    import importlib
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    del sys.modules[request["name"]]
    folder = Path(tempfile.mkdtemp())
    (folder / f"{request['name']}.py").write_text("REWRITTEN = True\n")
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module(request["name"])
    finally:
        sys.path.remove(str(folder))
        shutil.rmtree(folder)
    return "swapped"


def test_run_here_gives_the_caller_its_modules_back(tmp_path, monkeypatch):
    """After a job in this process, `import model` finds the user's module, not the fix's
    rewritten copy (whose files are gone): the default suite's `from per_layer_branch import
    PerLayerBranch` got the torch.where rewrite, without its break, once."""
    import importlib
    import sys

    from breakscan.process.child import run_here

    (tmp_path / "users_model.py").write_text("REWRITTEN = False\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    original = importlib.import_module("users_model")
    try:
        run = run_here(f"{__name__}:job_that_swaps_a_module", {"name": "users_model"},
                       target="t")
        assert run.result == "swapped"
        assert sys.modules["users_model"] is original and not original.REWRITTEN
    finally:
        sys.modules.pop("users_model", None)
