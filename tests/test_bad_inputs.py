"""The bad-input matrix: every way a user can hold breakscan wrong.

Each row is one command line with its documented exit code (README "Exit codes") and the words its
one-line message must contain. No row may print a traceback; rows that are not errors (a model
without parameters, zero-size inputs, non-tensor outputs, hostile text) must produce a report.

Rows about the command line itself, and rows where the scan process dies, hangs, exits or runs
out of memory, go through the real CLI. Rows about the model (its name, constructor, inputs,
forward) are the same scan in this process: the same error, exit code and message, or the same
report, without paying a child process's torch import each (the CLI's mapping of those errors to
a one-line message and exit code is covered by the CLI rows of each kind).
"""

from __future__ import annotations

import re

import pytest
import torch

from conftest import FIXTURES, ROOT, run_cli

MODELS = FIXTURES / "models"
V = f"{MODELS}/variety.py"
M = f"{MODELS}/misbehaving.py"
ITEM = "sample_models/item_logging.py:LogInsideForward"
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")

# (id, arguments, exit code, text the one-line error (or, for exit 0, the report) contains)
MATRIX = [
    ("missing file", ["nope/missing.py:Net", "-s", "2,16"], 2, "target file not found: nope/missing.py"),
    ("directory, not file", [f"{FIXTURES}:Net", "-s", "2,16"], 2, "is a directory"),
    ("not a .py file", ["README.md:Net", "-s", "2,16"], 2, "target file README.md is not a .py file"),
    ("no :NAME", ["sample_models/item_logging.py", "-s", "8,16"], 2, "has no ':NAME'"),
    ("--dynamic not a bool", [ITEM, "-s", "8,16", "--dynamic", "maybe"], 2,
     "--dynamic takes true or false, got 'maybe'"),
    ("--compile-option without =", [ITEM, "-s", "8,16", "--compile-option", "max_autotune"], 2,
     "--compile-option takes KEY=VALUE, got 'max_autotune'"),
    ("--mode and --compile-option", [ITEM, "-s", "8,16", "--time", "--mode", "max-autotune",
                                     "--compile-option", "max_autotune=True"], 2,
     "torch.compile takes --mode or --compile-option, not both"),
    ("syntax error", [f"{MODELS}/broken_syntax.py:Net", "-s", "2,16"], 3, "SyntaxError"),
    ("import error inside", [f"{MODELS}/broken_import.py:Net", "-s", "2,16"], 3,
     "definitely_not_installed_pkg"),
    ("unknown module", ["no_such_pkg_xyz.models:Net", "-s", "2,16"], 2, "no module named"),
    ("NAME missing", [f"{V}:Plian", "-s", "2,16"], 2, "has no 'Plian'; did you mean Plain"),
    ("NAME a constant", [f"{V}:NOT_A_MODEL", "-s", "2,16"], 2, "is a int, not an nn.Module"),
    ("NAME a plain class", [f"{V}:NotAModule", "-s", "2,16"], 2, "not an nn.Module subclass"),
    ("factory returns a str", [f"{V}:make_nothing", "-s", "2,16"], 2, "returned str"),
    ("factory raises", [f"{V}:make_raising", "-s", "2,16"], 3, "checkpoint.pt not found"),
    ("constructor raises", [f"{V}:RaisesInInit", "-s", "2,16"], 3, "weights file missing"),
    ("init-args not JSON", [f"{V}:Plain", "-s", "2,16", "--init-args", "{width: 3}"], 2,
     "--init-args is not valid JSON"),
    ("init-args not an object", [f"{V}:Plain", "-s", "2,16", "--init-args", "[3]"], 2,
     "must be a JSON object"),
    ("init-args wrong key", [f"{V}:Plain", "-s", "2,16", "--init-args", '{"depth": 3}'], 2,
     "does not accept these --init-args"),
    ("shape 8,,16", [ITEM, "-s", "8,,16"], 2, "bad --input-shape '8,,16'"),
    ("shape -1", [ITEM, "-s", "-1"], 2, "bad --input-shape '-1'"),
    ("shape abc", [ITEM, "-s", "abc"], 2, "bad --input-shape 'abc'"),
    ("shape too large", [ITEM, "-s", "99999999999999999999,16"], 2, "cannot create inputs"),
    ("no inputs", [ITEM], 2, "no inputs given"),
    ("too few inputs", [f"{V}:TwoInputs", "-s", "2,16"], 2, "2 required"),
    ("too many inputs", [f"{V}:Plain", "-s", "2,16", "-s", "2,16"], 2, "got 2 positional input"),
    ("wrong inner size", [ITEM, "-s", "8,15"], 3, "check --input-shape"),
    ("unknown dtype", [ITEM, "-s", "8,16", "--dtype", "float8"], 2, "unknown --dtype 'float8'"),
    ("unknown device", [ITEM, "-s", "8,16", "--device", "tpu"], 2, "unknown --device 'tpu'"),
    ("cuda without CUDA", [ITEM, "-s", "8,16", "--device", "cuda"], 2,
     "--device cuda was asked for", NO_CUDA),
    ("missing method", [f"{V}:Plain", "-s", "2,16", "--method", "generate"], 2,
     "has no method 'generate'"),
    ("bad --vary-batch", [ITEM, "-s", "8,16", "--vary-batch", "2,x"], 2, "bad --vary-batch"),
    ("--format unknown", [ITEM, "-s", "8,16", "--format", "xml"], 2, "Invalid value for '--format'"),
    ("negative timeout", [ITEM, "-s", "8,16", "--timeout", "-1"], 2, "--timeout"),
    ("unwritable output", [ITEM, "-s", "8,16", "-f", "json", "-o", "/proc/no/such/dir/r.json"], 2,
     "cannot write /proc/no/such/dir/r.json"),
    ("output is a directory", [ITEM, "-s", "8,16", "-f", "json", "-o", str(FIXTURES)], 2,
     "is a directory"),
    ("forward raises", [f"{V}:RaisesInForward", "-s", "2,3"], 3, "RuntimeError: boom in forward"),
    ("forward calls sys.exit", [f"{M}:SysExit", "-s", "2,3"], 3, "called sys.exit(4)"),
    ("forward exhausts memory", [f"{M}:Greedy", "-s", "2,3", "--memory-limit", "2000"], 3,
     "ran out of memory (the scan's --memory-limit is 2000 MB)"),
    ("inputs larger than --memory-limit", [ITEM, "-s", "30000,30000", "--memory-limit", "2000"],
     3, "creating inputs of shape 30000,30000 ran out of memory (the scan's --memory-limit is "
        "2000 MB): use a smaller --input-shape or raise --memory-limit"),
    ("token ids given as floats", [f"{V}:Tokens", "-s", "4,32"], 3,
     "pass --dtype int64"),
    ("forward calls os._exit", [f"{M}:HardExit", "-s", "2,3"], 3,
     "exited with status 0 during explain"),
    ("forward segfaults", [f"{M}:Segfaults", "-s", "2,3"], 3,
     "crashed with SIGSEGV during explain at"),
    ("forward hangs", [f"{M}:HangsOnNewBatch", "-s", "3,3", "--timeout", "8"], 3,
     "timed out after 8 s during explain at"),
    # Not errors: each must be reported, not crash.
    ("non-tensor outputs", [f"{M}:ReturnsNoTensor", "-s", "2,3"], 0, "graphs 0"),
    ("no parameters", [f"{M}:NoParameters", "-s", "2,3"], 0, "graphs 1 · root-cause breaks 0"),
    ("zero-size tensors", [f"{V}:Plain", "-s", "0,16"], 0, "forward(x: float32[0, 16])"),
    ("0-d tensor", [f"{M}:NoParameters", "-s", "()"], 0, "forward(x: float32[])"),
    ("hostile strings", [f"{M}:Hostile", "-s", "2,3"], 0,
     'why: User-inserted graph break. Message: </pre><script>alert("reason")</script> [red]x[/red]'),
]


# Through the real CLI: the command line, process-level failures, and one model-level row per exit
# code (usage error found by the child, the model's own error, a report).
CLI_ROWS = {"missing file", "directory, not file", "not a .py file", "no :NAME", "NAME missing",
            "init-args not JSON", "init-args not an object", "shape 8,,16", "shape -1",
            "shape abc", "no inputs", "bad --vary-batch", "--format unknown", "negative timeout",
            "unwritable output", "output is a directory", "forward raises",
            "forward calls sys.exit", "forward exhausts memory",
            "inputs larger than --memory-limit", "forward calls os._exit", "forward segfaults",
            "forward hangs", "hostile strings", "--dynamic not a bool",
            "--compile-option without =", "--mode and --compile-option"}


def _params(cli: bool) -> list:
    return [pytest.param(*row[1:4], id=row[0], marks=row[4:]) for row in MATRIX
            if (row[0] in CLI_ROWS) is cli]


@pytest.mark.parametrize("args, code, text", _params(cli=True))
def test_bad_input(args, code, text):
    proc = run_cli(*args, cwd=ROOT, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == code, proc.stdout + proc.stderr
    if code == 0:
        assert text in proc.stdout
        return
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("breakscan: error: ")
    assert text in line


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


@pytest.mark.parametrize("args, code, text", _params(cli=False))
def test_bad_input_in_process(args, code, text, monkeypatch):
    import io

    from rich.console import Console

    from breakscan import scan
    from breakscan.errors import BreakscanError
    from breakscan.report import terminal
    from breakscan.result import ModelRun

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


def test_the_matrix_covers_at_least_twenty_bad_inputs():
    assert sum(1 for row in MATRIX if row[2] != 0) >= 20
    assert CLI_ROWS <= {row[0] for row in MATRIX}  # no stale name: each row runs one way


@pytest.mark.parametrize("target, options, text", [
    ("nope/missing.py:Net", {"input_shapes": ["2,16"]}, "target file not found: nope/missing.py"),
    ("sample_models/item_logging.py", {"input_shapes": ["8,16"]}, "has no ':NAME'"),
    (ITEM, {"input_shapes": ["8,,16"]}, "bad --input-shape '8,,16'"),
    (ITEM, {}, "no inputs given"),
    (ITEM, {"input_shapes": ["8,16"], "init_args": "{width: 3}"}, "--init-args is not valid JSON"),
    (ITEM, {"input_shapes": ["8,16"], "vary_batch": "2,x"}, "bad --vary-batch"),
])
def test_errors_that_need_no_model_are_found_before_a_scan_process_starts(target, options, text):
    """The same one-line errors as the matrix, from the options alone (no torch, no child):
    the CLI checks them first, so a typo is answered at once."""
    from breakscan.errors import UsageError
    from breakscan.options import ScanOptions

    with pytest.raises(UsageError, match=re.escape(text)):
        ScanOptions(**options).check(target)


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


@pytest.mark.parametrize("flag, value, text", [("--dtype", "float8", "unknown --dtype 'float8'"),
                                               ("--device", "tpu", "unknown --device 'tpu'")])
def test_the_cli_answers_a_wrong_dtype_or_device_without_starting_a_scan(
        flag, value, text, monkeypatch, capsys):
    import breakscan.process.isolate as isolate
    from breakscan.cli import main

    def no_child(*args, **kwargs):
        raise AssertionError("a scan process was started")

    monkeypatch.setattr(isolate, "run_isolated", no_child)
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as ended:
        main([ITEM, "-s", "8,16", flag, value])
    assert ended.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("breakscan: error: ") and text in line
