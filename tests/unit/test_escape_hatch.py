"""breakscan.fixes.escape: the escape-hatch rewrite (custom_op, leaf_function, nonstrict_trace,
opaque_function on a helper of the user's file) against fixture pairs, the hatches read from
the installed torch without importing it, and the rewritten models run under real torch.

tests/fixtures/rewrite/escape/<case>.in.py marks the line with ``# rewrite: escape_hatch``
(optional ``# backend: NAME`` and ``# installed: hatch,hatch``; else torch 2.13's hatches); the
rewrite must equal <case>.out.py byte for byte; <case>.refuse.py carries ``# refuse: <part of
the reason>``. They live in their own folder: tests/unit/test_rewrite.py reads every
``*.in.py`` of tests/fixtures/rewrite/ with ``propose_rewrite``. Unit tests import no torch, so
the real-torch check runs in a child process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from breakscan.fixes.escape import HATCHES, available_hatches, propose_escape
from breakscan.fixes.rewrite import unified_diff

from conftest import FIXTURES

HERE = FIXTURES / "rewrite" / "escape"
MODELS = FIXTURES / "models" / "escape_cases.py"
PAIRS = sorted(p.name[: -len(".in.py")] for p in HERE.glob("*.in.py"))
REFUSALS = sorted(p.name[: -len(".refuse.py")] for p in HERE.glob("*.refuse.py"))
TORCH_2_13 = {"custom_op": True, "leaf_function": True, "nonstrict_trace": True,
              "opaque_function": False, "leaf_function_inductor": False}


def setup(source: str) -> tuple[int, dict[str, bool], str]:
    hits = [i for i, text in enumerate(source.splitlines(), 1)
            if "# rewrite: escape_hatch" in text]
    assert len(hits) == 1, hits
    backend = re.search(r"# backend: (\w+)", source)
    names = re.search(r"# installed: ([\w,]+)", source)
    installed = TORCH_2_13 if names is None else (
        dict.fromkeys(TORCH_2_13, False) | dict.fromkeys(names.group(1).split(","), True))
    return hits[0], installed, backend.group(1) if backend else "inductor"


def test_cases_cover_every_hatch_and_refusal():
    assert len(PAIRS) >= 5 and len(REFUSALS) >= 10
    used = {re.search(r"@torch\.[\w.]+\.(\w+)", (HERE / f"{c}.out.py").read_text()).group(1)
            for c in PAIRS}
    assert used == set(HATCHES)


@pytest.mark.parametrize("case", PAIRS)
def test_fixture_pair(case):
    src = (HERE / f"{case}.in.py").read_text()
    expected = (HERE / f"{case}.out.py").read_text()
    line, installed, backend = setup(src)
    rw = propose_escape(src, line, installed, backend)
    assert rw.refused is None, rw.refused
    assert rw.title and "\n" not in rw.title and rw.line == line
    assert rw.new_source == expected, unified_diff(expected, rw.new_source or "", case)


@pytest.mark.parametrize("case", REFUSALS)
def test_fixture_refusal(case):
    src = (HERE / f"{case}.refuse.py").read_text()
    line, installed, backend = setup(src)
    want = re.search(r"# refuse: (.+)", src).group(1).strip()
    rw = propose_escape(src, line, installed, backend)
    assert rw.new_source is None
    assert rw.refused and want in rw.refused and "\n" not in rw.refused, rw.refused


def test_quiet_when_no_helper_on_the_line():
    src = (HERE / "escape_not_in_file.refuse.py").read_text()
    assert propose_escape(src, setup(src)[0], TORCH_2_13).matched is False
    src = (HERE / "escape_method.refuse.py").read_text()  # a method: said, not quiet
    assert propose_escape(src, setup(src)[0], TORCH_2_13).matched is True


def test_backend_picks_the_hatch():
    """One helper, three answers: Inductor gets custom_op, aot_eager leaf_function, and a torch
    whose leaf_function compiles with Inductor gets leaf_function there too."""
    src = (HERE / "escape_custom_op_item.in.py").read_text()
    line = setup(src)[0]
    assert "custom_op" in propose_escape(src, line, TORCH_2_13, "inductor").title
    assert "leaf_function" in propose_escape(src, line, TORCH_2_13, "aot_eager").title
    newer = TORCH_2_13 | {"leaf_function_inductor": True}
    assert "custom_op" in propose_escape(src, line, newer, "inductor").title
    trained = propose_escape(src, line, newer, "inductor", training=True)
    assert "leaf_function" in trained.title  # a custom_op would carry no gradients
    assert "no autograd formula" in propose_escape(src, line, TORCH_2_13, "inductor",
                                                   training=True).refused
    none = dict.fromkeys(TORCH_2_13, False)
    assert "no escape hatch" in propose_escape(src, line, none).refused


# -- against the installed torch -----------------------------------------------------------------

RUN = r"""
import json, random, sys, types
import torch, torch._dynamo as dynamo, torch._dynamo.decorators as d, torch.compiler
cases, out = json.loads(sys.stdin.read()), {}
out["facts"] = {"custom_op": hasattr(torch.library, "custom_op"),
                "leaf_function": hasattr(d, "leaf_function"),
                "nonstrict_trace": hasattr(d, "nonstrict_trace"),
                "opaque_function": hasattr(torch.compiler, "opaque_function")}
out["version"] = torch.__version__
torch.set_grad_enabled(False)  # as breakscan scans (inference unless --train)
def module(name, source):
    mod = types.ModuleType(name)
    exec(compile(source, name + ".py", "exec"), mod.__dict__)
    return mod
def call(fn, x, seed=0):
    random.seed(seed)
    return fn(x)
for case in cases:
    before, after = module("before_" + case["name"], case["before"]), \
        module("after_" + case["name"], case["after"])
    x = torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0); m0 = getattr(before, case["name"])()
    torch.manual_seed(0); m1 = getattr(after, case["name"])()
    row = {}
    for key, m in (("before", m0), ("after", m1)):
        dynamo.reset(); random.seed(0)
        row[key] = dynamo.explain(m)(x).graph_break_count
    dynamo.reset()
    compiled = torch.compile(m1, backend=case["backend"])
    row["equal"] = torch.allclose(call(compiled, x), call(m0, x), atol=1e-5) and \
        torch.allclose(call(compiled, x, 3), call(m0, x, 3), atol=1e-5)
    out[case["name"]] = row
if "leaf" in cases[-1]:
    leaf = module("leaf", cases[-1]["leaf"])
    try:
        dynamo.reset(); torch.compile(leaf.forward)(torch.randn(3)); out["leaf_inductor"] = True
    except Exception as exc:
        out["leaf_inductor"] = type(exc).__name__
print(json.dumps(out))
"""


def run_models(backend: str, names: tuple[str, ...],
               leaf: bool) -> tuple[dict, dict[str, str], dict[str, bool]]:
    """escape_cases.py's models, each with its helper rewritten, run in a child: each one's
    break count before/after (explain), whether the compiled rewrite equals the eager original."""
    source = MODELS.read_text()
    lines = [i for i, text in enumerate(source.splitlines(), 1) if text.endswith("# escape")]
    hatches = available_hatches()
    cases = []
    for line, name in zip(lines, ("SortRows", "Jitter", "Salted", "Gate")):
        if name not in names:
            continue
        rw = propose_escape(source, line, hatches, "inductor")
        assert rw.new_source is not None, rw.refused
        cases.append({"name": name, "before": source, "after": rw.new_source,
                      "backend": backend, "hatch": rw.title})
    if leaf:
        cases[-1]["leaf"] = (HERE / "escape_leaf_aot_eager.out.py").read_text()
    done = subprocess.run([sys.executable, "-c", RUN], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # what ast read equals what an import of the same torch has (and torch stayed unimported:
    # checked in a fresh interpreter, since other tests of this worker may have imported it)
    fresh = subprocess.run([sys.executable, "-c", "import sys; from breakscan.fixes.escape "
                            "import available_hatches; available_hatches(); "
                            "assert 'torch' not in sys.modules"], capture_output=True, text=True,
                           timeout=120)
    assert fresh.returncode == 0, fresh.stderr[-1000:]
    assert {k: hatches[k] for k in got["facts"]} == got.pop("facts")
    if got.pop("version").startswith("2.13."):
        assert hatches == TORCH_2_13
    return got, {c["name"]: c["hatch"].split("@")[1].split(",")[0] for c in cases}, hatches


def test_rewritten_models_break_less_and_agree():
    """Dynamo's own count (``torch._dynamo.explain``) drops to 0 and the compiled rewrite
    (aot_eager: the graph Inductor would get, without its slow first compile) equals the eager
    original; what ``available_hatches`` read with ``ast`` equals what importing torch finds."""
    got, hatch, _ = run_models("aot_eager", ("SortRows", "Salted"), leaf=False)  # < 10 s
    assert hatch == {"SortRows": "torch.library.custom_op",
                     "Salted": "torch._dynamo.decorators.nonstrict_trace"}
    assert got == {"SortRows": {"before": 3, "after": 0, "equal": True},
                   "Salted": {"before": 2, "after": 0, "equal": True}}


@pytest.mark.slow
def test_hatches_under_inductor():
    """With Inductor itself (about 8 s of first compile here): every rewrite agrees, and
    leaf_function fails to compile exactly where ``available_hatches`` says it does."""
    got, hatch, hatches = run_models("inductor", ("SortRows", "Jitter", "Salted", "Gate"),
                                     leaf=True)
    assert (got.pop("leaf_inductor") is True) == hatches["leaf_function_inductor"]
    assert hatch["Jitter"] == hatch["Gate"] == "torch.library.custom_op"
    assert got == {"SortRows": {"before": 3, "after": 0, "equal": True},
                   "Jitter": {"before": 2, "after": 0, "equal": True},
                   "Salted": {"before": 2, "after": 0, "equal": True},
                   "Gate": {"before": 3, "after": 0, "equal": True}}


def test_a_data_dependent_length_gets_a_dynamic_fake_and_the_setting_it_needs():
    """np.trim_zeros' length depends on the data: the fake's length is a size only the run knows,
    only a custom_op takes it, and the rewrite carries capture_dynamic_output_shape_ops (without
    it Dynamo breaks at the op, "Dynamic shape operator")."""
    src = (HERE / "escape_custom_op_trim.in.py").read_text()
    line = setup(src)[0]
    rw = propose_escape(src, line, TORCH_2_13, "inductor")
    assert rw.config == {"capture_dynamic_output_shape_ops": True}
    assert "new_dynamic_size()" in rw.new_source and rw.title.endswith(
        "with torch._dynamo.config.capture_dynamic_output_shape_ops = True")
    aot = propose_escape(src, line, TORCH_2_13, "aot_eager")  # leaf_function first there
    assert "custom_op" in aot.title and aot.config
    no_custom = TORCH_2_13 | {"custom_op": False, "opaque_function": True}
    refused = propose_escape(src, line, no_custom, "aot_eager").refused
    assert "length depends on the data" in refused
    same = (HERE / "escape_custom_op_numpy.in.py").read_text()  # a shape like its input
    assert propose_escape(same, setup(same)[0], TORCH_2_13).config is None
