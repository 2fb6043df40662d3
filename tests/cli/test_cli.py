"""The real CLI in a subprocess: the forms users type, its outputs and its exit codes, and every
way a user can hold the command wrong (the bad-input matrix).

The bad-input rows about the model itself (its name, constructor, inputs, forward) are the same
scan in the test's process: tests/scan/test_cli_scan.py; the checks of the options alone, made
before any scan process starts: tests/unit/test_options_unit.py.
"""

from __future__ import annotations

import json

import pytest

from breakscan.model.result import SCHEMA_VERSION

from conftest import FIXTURES, ROOT, SAMPLES, locate, run_cli

ITEM = "sample_models/item_logging.py:LogInsideForward"


def test_bare_form_prints_the_report():
    proc = run_cli(ITEM, "--input-shape", "8,16")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    _, line = locate("self.last_mean = h.mean().item()", SAMPLES / "item_logging.py")
    assert out.splitlines()[:3] == [
        ITEM, "graphs 2 · root-cause breaks 1 · break records 1 · ops 4 · frames skipped 0",
        "per call: graph calls 2 · returns to Python 1"]
    assert f"sample_models/item_logging.py:{line}" in out
    assert "self.last_mean = h.mean().item()" in out
    assert "GB0124" in out and "fix:" in out
    assert "\x1b[" not in out  # no colour when stdout is not a TTY
    assert proc.stderr == ""  # Dynamo's own warnings stay hidden without --verbose
    assert max(len(row) for row in out.splitlines()) <= 100


def test_json_to_a_file_follows_the_schema(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli("sample_models/nested_break.py:NestedBreak", "--input-shape", "8,16",
                   "--dtype", "float32", "--device", "cpu", "--format", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {dest}" in proc.stdout
    doc = json.loads(dest.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert doc["target"].endswith("nested_break.py:NestedBreak")
    assert doc["inputs"] == [{"name": "x", "shape": [8, 16], "dtype": "float32", "kind": "tensor"}]
    assert doc["summary"] == {"graph_count": 6, "graph_break_count": 1, "break_records": 3,
                              "op_count": 7, "frames_skipped": 0,
                              "recompile_count": None,  # never called with other inputs
                              # the nested break resumes 3 frames: 3 returns to Python per call
                              "graph_calls_per_call": 6, "eager_gaps_per_call": 3,
                              "frames_run_eagerly_per_call": 0, "runtime_calls": 3,
                              "kernels_per_call": None}  # only with --kernels
    assert {k: doc["explain"][k] for k in ("graph_count", "graph_break_count", "op_count")} == {
        "graph_count": 6, "graph_break_count": 5, "op_count": 5}
    (brk,) = doc["breaks"]
    assert brk["fires_per_call"] == 1  # once per call, though it cuts three frames
    for key in ("owner", "category", "gb_id", "gb_type", "file", "line", "code", "function",
                "call_chain", "explanation", "hints", "suggestion"):
        assert key in brk
    assert (brk["category"], brk["gb_id"], brk["owner"]) == ("item", "GB0124", "user")
    assert brk["file"].endswith("nested_helpers.py")
    assert len(doc["graphs"]) == 6 and sum(g["op_count"] for g in doc["graphs"]) == 7
    assert {d["topic"] for d in doc["discrepancies"]} >= {"graph_break_count", "op_count"}
    assert doc["recompiles"] is None  # only with --vary-batch/--shapes


def test_json_to_stdout_is_only_json():
    proc = run_cli("sample_models/print_in_forward.py:PrintInForward", "-s", "8,16",
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the model's print did not leak into the document
    assert "hidden norm" in doc["model_output"]
    assert doc["breaks"][0]["category"] == "print"


def test_quiet_prints_only_the_summary():
    proc = run_cli(ITEM, "-s", "8,16", "--quiet")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        ITEM, "graphs 2 · root-cause breaks 1 · break records 1 · ops 4 · frames skipped 0",
        "per call: graph calls 2 · returns to Python 1"]


def test_python_dash_m_and_scan_subcommand_and_method_option():
    proc = run_cli("scan", f"{FIXTURES}/models/variety.py:Plain", "-s", "2,16",
                   "--method", "infer", "--verbose")
    assert proc.returncode == 0, proc.stderr
    assert "print" in proc.stdout and "infer torch.Size([2, 16])" in proc.stdout


def test_model_error_exit_3_and_debug_shows_the_traceback():
    proc = run_cli(ITEM, "-s", "8,15")
    assert proc.returncode == 3
    (line,) = proc.stderr.strip().splitlines()
    assert "mat1 and mat2 shapes cannot be multiplied" in line and "item_logging.py" in line
    debug = run_cli(ITEM, "-s", "8,15", "--debug")
    assert debug.returncode == 3 and "Traceback" in debug.stderr


def test_version():
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("breakscan ")


def test_html_option_writes_a_self_contained_page(tmp_path):
    dest = tmp_path / "report.html"
    proc = run_cli(ITEM, "-s", "8,16", "--html", str(dest), "-q")
    assert proc.returncode == 0, proc.stderr
    page = dest.read_text()
    assert page.startswith("<!DOCTYPE html>") and "LogInsideForward" in page
    assert 'data-key="graph_count"' in page and "<script" not in page
    assert f"wrote HTML report {dest}" in proc.stderr
    # The same writer for every command: `--format html` to stdout, on a recorded trace.
    trace = next((FIXTURES / "traces").glob("*/*.log"))
    same = run_cli("trace", str(trace), "--format", "html")
    assert same.returncode == 0 and same.stdout.startswith("<!DOCTYPE html>")


# --- bad inputs: the command line, and the scan process dying ---------------------------------
# Each row is one command line with its documented exit code (README "Exit codes") and the words
# its one-line message must contain. No row may print a traceback; a row that is not an error
# (hostile text) must produce a report. Through the real CLI: the rows about the command line
# itself, the rows where the scan process dies, hangs, exits or runs out of memory, and one
# model-level row per exit code (a usage error found by the child, the model's own error, a
# report). The other rows about the model are in tests/scan/test_cli_scan.py.

MODELS = FIXTURES / "models"
V = f"{MODELS}/variety.py"
M = f"{MODELS}/misbehaving.py"

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
    ("NAME missing", [f"{V}:Plian", "-s", "2,16"], 2, "has no 'Plian'; did you mean Plain"),
    ("init-args not JSON", [f"{V}:Plain", "-s", "2,16", "--init-args", "{width: 3}"], 2,
     "--init-args is not valid JSON"),
    ("init-args not an object", [f"{V}:Plain", "-s", "2,16", "--init-args", "[3]"], 2,
     "must be a JSON object"),
    ("shape 8,,16", [ITEM, "-s", "8,,16"], 2, "bad --input-shape '8,,16'"),
    ("shape -1", [ITEM, "-s", "-1"], 2, "bad --input-shape '-1'"),
    ("shape abc", [ITEM, "-s", "abc"], 2, "bad --input-shape 'abc'"),
    ("no inputs", [ITEM], 2, "no inputs given"),
    ("bad --vary-batch", [ITEM, "-s", "8,16", "--vary-batch", "2,x"], 2, "bad --vary-batch"),
    ("--format unknown", [ITEM, "-s", "8,16", "--format", "xml"], 2, "Invalid value for '--format'"),
    ("negative timeout", [ITEM, "-s", "8,16", "--timeout", "-1"], 2, "--timeout"),
    ("--memory-limit past setrlimit", [ITEM, "-s", "8,16", "--memory-limit",
                                       "9223372036854775807"], 2,
     "memory-limit must be at most 8796093022207 MB"),
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
    ("forward calls os._exit", [f"{M}:HardExit", "-s", "2,3"], 3,
     "exited with status 0 during explain"),
    ("forward segfaults", [f"{M}:Segfaults", "-s", "2,3"], 3,
     "crashed with SIGSEGV during explain at"),
    ("forward hangs", [f"{M}:HangsOnNewBatch", "-s", "3,3", "--timeout", "15"], 3,
     "timed out after 15 s during explain at"),
    # Not errors: each must be reported, not crash.
    ("hostile strings", [f"{M}:Hostile", "-s", "2,3"], 0,
     'why: User-inserted graph break. Message: </pre><script>alert("reason")</script> [red]x[/red]'),
]


def _params() -> list:
    return [pytest.param(*row[1:4], id=row[0], marks=row[4:]) for row in MATRIX]


@pytest.mark.parametrize("args, code, text", _params())
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


def test_the_matrix_covers_at_least_twenty_bad_inputs():
    assert sum(1 for row in MATRIX if row[2] != 0) >= 20


def test_every_help_text_shows_its_brackets_verbatim():
    """`[tool.breakscan]` and other bracketed words are text, never rich markup to be eaten."""
    import re

    import typer

    from breakscan.cli.application import app

    group = typer.main.get_command(app)
    seen = 0
    for name, command in [("", group), *group.commands.items()]:
        texts = [command.help or ""] + [getattr(p, "help", "") or "" for p in command.params]
        if name == "":
            texts += [c.get_short_help_str(limit=1000) for c in group.commands.values()]
        shown = " ".join(run_cli(*([name] if name else []), "--help").stdout.split())
        for text in texts:
            for token in re.findall(r"\[[^\]]+\]", text):
                seen += 1
                assert token in shown, (name, token)
    assert seen >= 3  # [tool.breakscan] in check's docstring and --config, at least


@pytest.mark.parametrize("columns, width", [("abc", 100), ("0", 100), ("60", 60)])
def test_a_bad_columns_value_is_ignored_not_an_internal_error(columns, width):
    """``COLUMNS`` (and ``LINES``) of a pipe are read as rich reads them: digits or nothing."""
    proc = run_cli("rules", env={"COLUMNS": columns, "LINES": "x"})
    assert proc.returncode == 0, proc.stderr
    assert max(len(line) for line in proc.stdout.splitlines()) == width
