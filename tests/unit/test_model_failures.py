"""Whose failure an exception is, read from where it was raised (its traceback), never from its
type: the model's (exit 3, one line naming its line) or breakscan's own bug (exit 4).

The same rule serves a stage's calls of the model (``errors.running_model``) and whatever
escapes a job in the scan's child (``process.child._ending``). Through the real CLI, per
stage: tests/cli/test_model_fails_later.py.
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from breakscan.errors import ModelError, raised_by_breakscan, running_model
from breakscan.frames import relative_to, split_location
from breakscan.process.child import _ending


@pytest.fixture()
def model(tmp_path):
    """A user's module: ``fail()`` raises on its own line, ``leave()`` calls sys.exit."""
    path = tmp_path / "usermodel.py"
    path.write_text(textwrap.dedent("""
        import sys

        def fail():
            raise TypeError("linear(): argument 'input' must be Tensor, not NoneType")

        def leave():
            sys.exit(4)
    """))
    spec = importlib.util.spec_from_file_location("usermodel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def caught(fn, *args):
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the test looks at what was raised
        return exc
    raise AssertionError("nothing raised")


def test_the_models_exception_is_the_models_in_any_stage(model):
    module, path = model
    exc = caught(module.fail)
    assert not raised_by_breakscan(exc)
    message, code = _ending(exc, "timing (eager)")
    assert (message, code) == (
        "during timing (eager), the model failed: TypeError: linear(): argument 'input' must "
        f"be Tensor, not NoneType at {path}:5", 3)
    assert _ending(caught(module.leave), "recompiles") == (
        f"during recompiles, the model called sys.exit(4) at {path}:8", 3)
    with pytest.raises(ModelError) as failed:
        with running_model("timing the eager model"):
            module.fail()
    assert str(failed.value) == (
        "timing the eager model failed: TypeError: linear(): argument 'input' must be Tensor, "
        f"not NoneType at {path}:5")
    assert failed.value.exit_code == 3


def test_an_exception_raised_on_breakscans_own_line_is_breakscans_bug():
    exc = caught(split_location, None)  # AttributeError on a line of breakscan.frames
    assert raised_by_breakscan(exc) and raised_by_breakscan(exc, calling_model=True)
    message, code = _ending(exc, "timing (eager)")
    assert code == 4 and message.startswith("internal error in breakscan: AttributeError:")
    with pytest.raises(AttributeError):  # not turned into the model's failure
        with running_model("timing the eager model"):
            split_location(None)


def test_python_or_torch_below_breakscan_is_its_bug_unless_it_was_calling_the_model():
    # breakscan's line called the standard library, which raised: breakscan passed it junk;
    # while calling the model (which may be torch's own module), the model's.
    exc = caught(relative_to, 123, "/")
    assert raised_by_breakscan(exc)
    assert not raised_by_breakscan(exc, calling_model=True)
    assert _ending(exc, "explain")[1] == 4


def test_breakscans_own_errors_keep_their_code():
    from breakscan.errors import UsageError

    assert _ending(UsageError("not applicable: no such attribute"), "load") == (
        "not applicable: no such attribute", 2)
    with pytest.raises(UsageError):
        with running_model("eager call"):
            raise UsageError("bad")
