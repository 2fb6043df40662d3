"""breakscan.lint: the static pre-scan, checked against fixtures that state their own findings.

Each ``tests/fixtures/lint/<case>.py`` marks every line lint must flag with a trailing
``# expect: <category>[, <category>] [loop]`` comment (``[loop]``: the message must say the line
is inside a loop/try); an optional ``# lint-only: NAME`` first line is passed as ``only``. Lint's
(line, category) set must equal the expected set exactly, so a false positive fails as surely as
a miss. The sample models are checked against their docstrings' ``Expected scan`` blocks.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breakscan.errors import UsageError
from breakscan.lint.checks import BREAK_CATEGORIES
from breakscan.lint.run import lint_file, lint_source
from breakscan.rules.catalogue import rule_id

from conftest import FIXTURES, ROOT, SAMPLES, locate, sample_expectations

LINT_FIXTURES = sorted((FIXTURES / "lint").glob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*([\w ,]+?)\s*(\[loop\])?\s*$")
LOOP_TEXT = "inside a loop/try"
SKIP_TEXT = "(frame runs eagerly)"  # a finding that says Dynamo skips the whole function
ALL_CATEGORIES = BREAK_CATEGORIES | {"shape_branch", "shape_loop"}


def expected(path: Path) -> tuple[str | None, dict[tuple[int, str], bool]]:
    """(only, {(line, category): inside a loop}) as the fixture's comments state them."""
    text = path.read_text()
    only = re.match(r"# lint-only: (\S+)", text)
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            for category in m.group(1).split(","):
                assert category.strip() in ALL_CATEGORIES, f"{path.name}:{number}: {category}"
                found[(number, category.strip())] = bool(m.group(2))
    return (only.group(1) if only else None), found


@pytest.mark.parametrize("path", LINT_FIXTURES, ids=lambda p: p.stem)
def test_fixture_findings_are_exactly_the_expected_ones(path):
    only, want = expected(path)
    findings = lint_file(path, only=only)
    got = {(f.line, f.category) for f in findings}
    assert sorted(got - want.keys()) == [], "false positives"
    assert sorted(want.keys() - got) == [], "missed"
    for f in findings:
        assert (LOOP_TEXT in f.message) == want[(f.line, f.category)], f
    lines = path.read_text().splitlines()
    for f in findings:
        assert f.rule == rule_id(f.category) and f.status == "static"
        assert f.file == str(path) and os.path.isabs(f.file)
        assert f.code == lines[f.line - 1].strip()
        assert f.function and f.message and "\n" not in f.message
    assert [(f.line, f.category) for f in findings] == sorted(got)  # sorted, no duplicates


def test_fixtures_cover_every_pattern_and_loop_context():
    cases = [expected(path)[1] for path in LINT_FIXTURES]
    categories = {category for case in cases for _, category in case}
    assert categories == ALL_CATEGORIES
    looped = {category for case in cases for (_, category), loop in case.items() if loop}
    assert {"print", "item", "explicit_break", "data_dependent_branch"} <= looped


def test_function_names_say_where_the_finding_is():
    by_line = {f.line: f.function for f in lint_file(FIXTURES / "lint" / "reachability.py")}
    text = (FIXTURES / "lint" / "reachability.py").read_text().splitlines()
    where = {text[line - 1].strip().split("  #")[0]: name for line, name in by_line.items()}
    assert where == {
        "return h.abs().max().item()": "rescale_factor",
        "return x.tolist()": "Base.step",
        'print("child step")': "Child.step",
        "if h.mean() > 0:": "Block.inner",
        "return t.numpy()": "Top.forward.local_helper",
        "return super().forward(h) + h.sum().item()": "Top.second",
    }


def test_only_restricts_to_one_class_or_method(tmp_path):
    path = FIXTURES / "lint" / "reachability.py"
    assert {f.function for f in lint_file(path, only="Block")} == {"Block.inner"}
    assert {f.function for f in lint_file(path, only="Top.first")} == {"Top.second"}
    assert lint_file(path, only="NotAModule") != []  # asked for explicitly: linted
    assert lint_file(path, only="Block.missing") == []  # a method not in this file
    with pytest.raises(UsageError, match="no class or function named 'Nope'"):
        lint_file(path, only="Nope")


def test_relative_path_is_made_absolute(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    (finding,) = lint_file("item_logging.py")
    assert finding.file == str(SAMPLES / "item_logging.py")
    assert lint_source("print(1)\n", "x.py") == []  # nothing outside a forward


# -- the sample models -----------------------------------------------------------------------

STATIC_LIMITS = {
    "NestedBreak": "the `.item()` is in nested_helpers.py, a function imported from another "
                   "file: lint reads one file and does not follow imports (the scan finds it)",
}
# Samples whose frame the scan sees skipped, where lint cannot tell from the line alone.
SKIP_UNSEEN = {
    "SparseAdjacency": "`to_sparse()` alone is a plain break (GB0277); what a sparse op on it does "
                       "to the frame is decided while tracing",
}
# Lint reads the source: the expectations without a torch release's own (`key@2.14`) lines
BROKEN = [e for e in sample_expectations()
          if (e.base.get("cause") or e.base.get("category")) in BREAK_CATEGORIES]
# The fixed twins (and the samples that are no break at all, e.g. a Python loop) — but not
# rare_path.py's RarePathPrint, whose print only breaks for batches over 64.
FIXED = [e for e in sample_expectations()
         if e.base["breaks"] == "0" and e.name != "RarePathPrint"
         and "later_breaks" not in e.facts]  # PrintAfterFirstCall breaks on later calls


def test_a_break_on_a_path_not_taken_is_still_found():
    (finding,) = [f for f in lint_file(SAMPLES / "rare_path.py", only="RarePathPrint")
                  if f.category in BREAK_CATEGORIES]
    assert (finding.category, finding.code) == ("print", 'print("large batch", x.shape)')


@pytest.mark.parametrize("expect", [
    pytest.param(e, marks=pytest.mark.xfail(strict=True, reason=STATIC_LIMITS[e.name]))
    if e.name in STATIC_LIMITS else e for e in BROKEN], ids=str)
def test_sample_break_is_found_on_its_line(expect):
    category = expect.base.get("cause") or expect.base["category"]
    file, line = locate(expect.base["break_at"], expect.file)
    findings = [f for f in lint_file(expect.file, only=expect.name)
                if f.category in BREAK_CATEGORIES]
    assert [(f.file, f.line, f.category) for f in findings] == [(str(file), line, category)]
    skipped = expect.base["category"] == "frame_skipped" and expect.name not in SKIP_UNSEEN
    assert (SKIP_TEXT in findings[0].message) == skipped


def test_samples_cover_the_break_categories_lint_knows():
    covered = {e.base.get("cause") or e.base["category"] for e in BROKEN}
    assert covered >= {"item", "print", "tolist_numpy", "data_dependent_branch",
                       "explicit_break", "unsupported_call"}


@pytest.mark.parametrize("expect", FIXED, ids=str)
def test_fixed_twin_has_no_break_finding(expect):
    findings = lint_file(expect.file, only=expect.name)
    assert [f for f in findings if f.category in BREAK_CATEGORIES] == []


def test_recompile_causes_in_samples_are_reported_as_such():
    shape = lint_file(SAMPLES / "shape_branch.py", only="ShapeBranch")
    assert [(f.category, f.code) for f in shape] == [("shape_branch", "if x.shape[0] > 8:")]
    rows = lint_file(SAMPLES / "python_loop.py", only="LoopOverRows")
    assert [(f.category, f.code) for f in rows] == [("shape_loop", "for row in x:")]


# -- bad input: one-line UsageError, never anything else ------------------------------------

def test_missing_file_directory_and_bad_python(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        lint_file(tmp_path / "nope.py")
    with pytest.raises(UsageError, match="is a directory"):
        lint_file(tmp_path)
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\nclass Net(torch.nn.Module):\n    def forward(self x):\n")
    with pytest.raises(UsageError, match=r"not valid Python \(line 4\)") as info:
        lint_file(bad)
    assert "\n" not in str(info.value) and str(bad) in str(info.value)
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"x = '\xe9'\n")
    with pytest.raises(UsageError, match="not valid Python source text"):
        lint_file(latin)
    with pytest.raises(UsageError, match="null"):
        lint_source("x = 1\0\n", "nul.py")


def test_source_encodings_and_line_endings(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\r\nimport torch\r\nclass N(torch.nn.Module):\r\n"
                     b"    def forward(self, x):\r\n        s = '\xe9'\r\n        print(s)\r\n")
    (finding,) = lint_file(path)
    assert (finding.line, finding.code) == (6, "print(s)")


def test_deep_nesting_is_a_usage_error_not_a_crash():
    source = ("import torch\nclass N(torch.nn.Module):\n    def forward(self, x):\n"
              "        return " + "+".join(["x"] * 20000) + "\n")
    try:
        findings = lint_source(source, "deep.py")
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert findings == []


FRAGMENTS = ["x", "self", "h", ".item()", ".sum()", ".shape[0]", " > 0", " if ", " else ", "(",
             ")", "print(", "torch.", "rand(1)", "np.", "random.random()", " and ", "not ",
             "len(", "[", "]", ".size(1)", "lambda t: ", "*", ", ", ":=", "await ", "yield "]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
       st.sampled_from(["if {}:\n            pass", "return {}", "for i in {}:\n            pass",
                        "assert {}, f'{{x}}'", "y = {}", "while {}:\n            break"]))
def test_any_text_lints_or_gives_a_usage_error(body, template):
    """Random text in a forward: findings or a one-line UsageError (and no SyntaxWarning)."""
    source = ("import torch\nimport numpy as np\nimport random\n"
              "class N(torch.nn.Module):\n    def forward(self, x, h=None):\n        "
              + template.format(body) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            lint_source(source, "fuzz.py")
        except UsageError as exc:
            assert "\n" not in str(exc)


def test_real_code_never_crashes():
    """Every class and function of some real files as the entry: findings or nothing."""
    import json

    files = [*SAMPLES.glob("*.py"), *(FIXTURES / "models").glob("*.py"),
             *(FIXTURES / "third_party").glob("*.py"), *Path(json.__file__).parent.glob("*.py"),
             *(ROOT / "breakscan").rglob("*.py")]
    for path in files:
        source = path.read_text()
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        names = [n.name for n in tree.body
                 if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        for name in [None, *names]:
            lint_source(source, str(path), only=name)


def test_lint_never_imports_torch():
    code = ("import sys; from breakscan.lint.run import lint_file; "
            f"lint_file({str(SAMPLES / 'tensor_branch.py')!r}); "
            "assert 'torch' not in sys.modules, 'torch imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_modules_held_in_a_modulelist_or_sequential_are_followed(tmp_path):
    """The layer loop of most real models: ``for layer in self.layers: x = layer(x)``,
    ``self.layers[i](x)`` and an ``nn.Sequential`` of a class of the same file."""
    path = tmp_path / "stack.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\n"
        "class Layer(nn.Module):\n"
        "    def forward(self, x):\n"
        "        print('layer')\n"
        "        return x\n\n\n"
        "class Loop(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layers = nn.ModuleList([Layer() for _ in range(3)])\n\n"
        "    def forward(self, x):\n"
        "        for layer in self.layers:\n"
        "            x = layer(x)\n"
        "        return x\n\n\n"
        "class Indexed(Loop):\n"
        "    def forward(self, x):\n"
        "        return self.layers[0](x)\n\n\n"
        "class Seq(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.body = nn.Sequential(Layer(), Layer())\n\n"
        "    def forward(self, x):\n"
        "        return self.body(x)\n")
    for entry, in_loop in (("Loop", True), ("Indexed", False), ("Seq", False)):
        (finding,) = lint_file(path, only=entry)
        assert (finding.line, finding.category, finding.function) == (7, "print", "Layer.forward")
        assert ("called from inside a loop/try (line 18)" in finding.message) == in_loop, entry


def test_flags_and_library_outputs_are_python_values_not_tensors(tmp_path):
    """Issue 45 §3, seen on transformers' T5: `if use_cache and past_key_values is None:` is no
    `if` on a tensor (untyped, None-defaulted flags), and `len(encoder_outputs) > 1` no tensor
    size (the function tests it against BaseModelOutput); a real tensor parameter still is."""
    model = tmp_path / "t5_like.py"
    model.write_text(
        "from torch import nn\n\n\n"
        "class Stack(nn.Module):\n"
        "    def forward(self, input_ids, past_key_values=None, use_cache=None,\n"
        "                output_hidden_states=None):\n"
        "        if use_cache and past_key_values is None:\n"
        "            past_key_values = []\n"
        "        if output_hidden_states:\n"
        "            return input_ids\n"
        "        return input_ids\n\n\n"
        "class Model(nn.Module):\n"
        "    def forward(self, input_ids, encoder_outputs=None, return_dict=None, mask=None):\n"
        "        if encoder_outputs is None:\n"
        "            encoder_outputs = self.encoder(input_ids)\n"
        "        elif return_dict and not isinstance(encoder_outputs, BaseModelOutput):\n"
        "            encoder_outputs = BaseModelOutput(\n"
        "                hidden_states=encoder_outputs[1] if len(encoder_outputs) > 1 else None)\n"
        "        if input_ids.sum() > 0:\n"
        "            return input_ids\n"
        "        return encoder_outputs\n")
    found = [(f.line, f.category) for f in lint_file(model)]
    assert found == [(21, "data_dependent_branch")], found


def test_a_breaking_line_is_never_linted_as_fine():
    """Issue 45: a comprehension over a tensor whose element calls ``int(t)`` was linted as "loop
    over a tensor's size: not a break" while the scan breaks there. The element is read with the
    loop's names bound, so the break is found; the loop's own note says only the loop is fine."""
    findings = lint_file(FIXTURES / "lint" / "comprehension.py")
    breaking = {f.line for f in findings if f.category in BREAK_CATEGORIES}
    assert breaking  # int(t) in TaskHeads, float(v) in PickedScalars
    for f in findings:
        assert "not a break" not in f.message, f
        if f.category == "shape_loop" and f.line - 1 in breaking:
            assert "what it runs may" in f.message
