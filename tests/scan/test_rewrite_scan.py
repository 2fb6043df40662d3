"""The rewritten fixture pairs (tests/fixtures/rewrite) under real torch: same outputs, and the
break gone; and fixes planned on a live scan (tests/unit/test_rewrite.py checks the rewrites
themselves)."""

from __future__ import annotations

import warnings

import pytest
import torch

from conftest import FIXTURES, SAMPLES

HERE = FIXTURES / "rewrite"
PAIRS = sorted(p.name[: -len(".in.py")] for p in HERE.glob("*.in.py"))
WHERE_PAIRS = [c for c in PAIRS if c.startswith("where_")]


def _load(source: str, name: str) -> dict:
    torch.manual_seed(0)  # same parameters for .in and .out modules
    ns: dict = {"__name__": f"rewrite_fixture_{name}"}
    exec(compile(source, name, "exec"), ns)
    return ns


def _inputs(seed: int) -> list[torch.Tensor]:
    x = torch.randn(8, generator=torch.Generator().manual_seed(seed))
    return [x, -x, 0.1 * x, x + 3]  # both branches get taken


@pytest.mark.parametrize("case", WHERE_PAIRS)
def test_where_rewrite_same_outputs(case):
    before = _load((HERE / f"{case}.in.py").read_text(), f"{case}.in.py")["f"]
    after = _load((HERE / f"{case}.out.py").read_text(), f"{case}.out.py")["f"]
    for seed in range(3):
        for x in _inputs(seed):
            torch.testing.assert_close(after(x.clone()), before(x.clone()), rtol=0, atol=0)


def test_where_rewrite_removes_the_break():
    counts = {}
    for kind in ("in", "out"):
        fn = _load((HERE / f"where_assign.{kind}.py").read_text(), f"where_assign.{kind}.py")["f"]
        torch._dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counts[kind] = torch._dynamo.explain(fn)(torch.randn(8)).graph_break_count
    torch._dynamo.reset()
    assert counts == {"in": 1, "out": 0}


# -- fixes planned on a live scan -----------------------------------------------------------------

def test_a_refused_fix_title_does_not_repeat_and_diffs_name_user_paths(tmp_path, monkeypatch):
    """A fix refused before any rewrite shows its id once; a diff of a file outside the working
    directory names its real path, never a chain of ../ up to it. Both are decided when fixes
    are planned (in the parent, before any verification), so they are planned here."""
    import io
    import shutil

    from rich.console import Console

    from breakscan import scan
    from breakscan.fixes.plan import plan_fixes
    from breakscan.report import terminal
    from breakscan.model.result import ModelRun

    work = tmp_path / "elsewhere"
    work.mkdir()
    model = tmp_path / "models" / "branchy.py"
    model.parent.mkdir()
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    monkeypatch.chdir(work)
    target = f"{model}:TensorIf"
    (plan,) = [p for p in plan_fixes(target, scan(target, input_shapes=["8,16"]))
               if p.fix.fix_id == "torch_where"]
    assert plan.fix.diff.startswith(f"--- a/{model}\n") and "../" not in plan.fix.diff
    # A break in a file outside the target's folder or package: refused before any rewrite, so
    # the title is the id itself.
    outer = tmp_path / "app" / "outer.py"
    outer.parent.mkdir()
    outer.write_text(f"import sys\nsys.path.insert(0, {str(model.parent)!r})\n"
                     "from branchy import TensorIf as Outer\n")
    target = f"{outer}:Outer"
    result = scan(target, input_shapes=["8,16"])
    result.fixes = [p.fix for p in plan_fixes(target, result)]
    assert result.fixes and all(f.reason and f.reason.startswith("refused: source fixes rewrite "
                                                                 "only files of the target's")
                                for f in result.fixes)
    console = Console(file=io.StringIO(), width=100, highlight=False)
    terminal.render_runs([ModelRun(target=target, result=result)], console)
    (head,) = [line for line in console.file.getvalue().splitlines()
               if "BS002 torch_where" in line]
    assert head.count("torch_where") == 1, head
