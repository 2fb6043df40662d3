"""The bad-input matrix's rows about the model (its name, constructor, inputs, forward), as the
same scan in this process: the same error, exit code and one-line message, or the same report, as
the CLI gives, without paying a child process's torch import each. The CLI's mapping of those
errors to a one-line message and exit code is covered by the CLI rows of each kind, with the rows
about the command line and the scan process, in tests/cli/test_cli.py.

Also: the dtype and device names the parent checks before any child are exactly the child's.
"""

from __future__ import annotations

import pytest
import torch

from conftest import FIXTURES, ROOT

MODELS = FIXTURES / "models"
V = f"{MODELS}/variety.py"
M = f"{MODELS}/misbehaving.py"
ITEM = "sample_models/item_logging.py:LogInsideForward"
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")

# (id, arguments, exit code, text the one-line error (or, for exit 0, the report) contains)
MATRIX = [
    ("syntax error", [f"{MODELS}/broken_syntax.py:Net", "-s", "2,16"], 3, "SyntaxError"),
    ("import error inside", [f"{MODELS}/broken_import.py:Net", "-s", "2,16"], 3,
     "definitely_not_installed_pkg"),
    ("unknown module", ["no_such_pkg_xyz.models:Net", "-s", "2,16"], 2, "no module named"),
    ("NAME a constant", [f"{V}:NOT_A_MODEL", "-s", "2,16"], 2, "is a int, not an nn.Module"),
    ("NAME a plain class", [f"{V}:NotAModule", "-s", "2,16"], 2, "not an nn.Module subclass"),
    ("factory returns a str", [f"{V}:make_nothing", "-s", "2,16"], 2, "returned str"),
    ("factory raises", [f"{V}:make_raising", "-s", "2,16"], 3, "checkpoint.pt not found"),
    ("constructor raises", [f"{V}:RaisesInInit", "-s", "2,16"], 3, "weights file missing"),
    ("init-args wrong key", [f"{V}:Plain", "-s", "2,16", "--init-args", '{"depth": 3}'], 2,
     "does not accept these --init-args"),
    ("shape too large", [ITEM, "-s", "99999999999999999999,16"], 2, "is too large for a tensor"),
    ("too few inputs", [f"{V}:TwoInputs", "-s", "2,16"], 2, "2 required"),
    ("too many inputs", [f"{V}:Plain", "-s", "2,16", "-s", "2,16"], 2, "got 2 positional input"),
    ("wrong inner size", [ITEM, "-s", "8,15"], 3, "check --input-shape"),
    ("unknown dtype", [ITEM, "-s", "8,16", "--dtype", "float8"], 2, "unknown --dtype 'float8'"),
    ("unknown device", [ITEM, "-s", "8,16", "--device", "tpu"], 2, "unknown --device 'tpu'"),
    ("cuda without CUDA", [ITEM, "-s", "8,16", "--device", "cuda"], 2,
     "--device cuda was asked for", NO_CUDA),
    ("missing method", [f"{V}:Plain", "-s", "2,16", "--method", "generate"], 2,
     "has no method 'generate'"),
    ("token ids given as floats", [f"{V}:Tokens", "-s", "4,32"], 3,
     "pass --dtype int64"),
    # Not errors: each must be reported, not crash.
    ("non-tensor outputs", [f"{M}:ReturnsNoTensor", "-s", "2,3"], 0, "graphs 0"),
    ("no parameters", [f"{M}:NoParameters", "-s", "2,3"], 0, "graphs 1 · root-cause breaks 0"),
    ("zero-size tensors", [f"{V}:Plain", "-s", "0,16"], 0, "forward(x: float32[0, 16])"),
    ("0-d tensor", [f"{M}:NoParameters", "-s", "()"], 0, "forward(x: float32[])"),
]


def _params() -> list:
    return [pytest.param(*row[1:4], id=row[0], marks=row[4:]) for row in MATRIX]


_FLAGS = {"-s": "input_shapes", "--init-args": "init_args", "--dtype": "dtype",
          "--device": "device", "--method": "method"}


def _scan_options(args: list[str]) -> tuple[str, dict]:
    """The row's command line as scan() arguments (only the flags the in-process rows use)."""
    target, rest, options = args[0], args[1:], {}
    for flag, value in zip(rest[::2], rest[1::2]):
        key = _FLAGS[flag]
        if key == "input_shapes":
            options.setdefault(key, []).append(value)
        else:
            options[key] = value
    return target, options


@pytest.mark.parametrize("args, code, text", _params())
def test_bad_input_in_process(args, code, text, monkeypatch):
    import io

    from rich.console import Console

    from breakscan import scan
    from breakscan.errors import BreakscanError
    from breakscan.report import terminal
    from breakscan.model.result import ModelRun

    monkeypatch.chdir(ROOT)
    target, options = _scan_options(args)
    if code != 0:
        with pytest.raises(BreakscanError) as raised:
            scan(target, **options)
        assert raised.value.exit_code == code and text in str(raised.value)
        assert len(str(raised.value).splitlines()) == 1  # one line
        return
    console = Console(file=io.StringIO(), width=100, highlight=False)
    terminal.render_runs([ModelRun(target=target, result=scan(target, **options))], console)
    assert text in console.file.getvalue()


@pytest.mark.parametrize("options", [{"dtype": "float8"}, {"dtype": "FLOAT8"}, {"device": "tpu"},
                                     {"device": "TPU"}, {"device": "gpu"}])
def test_a_wrong_dtype_or_device_name_is_the_childs_error_before_any_child(options, monkeypatch):
    """``--dtype``/``--device`` names are checked in the parent (no torch) with the very message
    the child's loader gives."""
    from breakscan.errors import UsageError
    from breakscan.options import ScanOptions
    from breakscan.pipeline.load import parse_dtype, resolve_device

    monkeypatch.chdir(ROOT)
    with pytest.raises(UsageError) as child:
        if "dtype" in options:
            parse_dtype(options["dtype"])
        else:
            resolve_device(options["device"])
    with pytest.raises(UsageError) as parent:
        ScanOptions(input_shapes=["8,16"], **options).check(ITEM)
    assert str(parent.value) == str(child.value)


def test_the_parent_knows_every_dtype_and_device_the_child_accepts(monkeypatch):
    from breakscan.options import ScanOptions
    from breakscan.pipeline.load import DTYPES
    from breakscan.target import DTYPE_NAMES

    monkeypatch.chdir(ROOT)
    assert DTYPE_NAMES == set(DTYPES)
    for name in [*DTYPES, "Float32", "BFloat16"]:
        ScanOptions(input_shapes=["8,16"], dtype=name).check(ITEM)
    for device in ("cpu", "CPU", "auto", "cuda", "cuda:1", "Cuda:0"):
        ScanOptions(input_shapes=["8,16"], device=device).check(ITEM)  # CUDA: the child's to tell
