"""The line a person changes, decided without torch (issue 32, section 4): which frame is acted on
when a library helper is on the stack, which loop a size came from, where a NumPy call is, and
what the lint says about sizes taken from iterating a tensor. The same decisions on the real
Dynamo: tests/scan/test_lines.py."""

from __future__ import annotations

import ast
import textwrap

import pytest

from breakscan.analysis.loops import iteration_behind
from breakscan.rules.bs001_item import size_uses
from breakscan.analysis.roots import break_frame
from breakscan.frames import Frame, acting_frame, library_helper, switched_helper
from breakscan.lint.run import lint_source

SITE = "/opt/env/lib/python3.11/site-packages/transformers"
MODEL = Frame(f"{SITE}/models/llava/modeling_llava.py", 210, "get_placeholder_mask")
CHECK = Frame(f"{SITE}/utils/import_utils.py", 1975, "torch_compilable_check")
WRAPPER = Frame(f"{SITE}/utils/generic.py", 943, "wrapper")


def test_a_helper_frame_is_never_the_line_to_act_on_when_a_model_line_called_it():
    assert acting_frame([WRAPPER, MODEL, CHECK]) == MODEL
    user = Frame("/home/me/model.py", 12, "forward")
    assert acting_frame([user, CHECK]) == user
    assert acting_frame([WRAPPER, CHECK]) == CHECK  # only helpers: the innermost one
    assert library_helper(MODEL.file) is None
    assert library_helper("/home/me/transformers/utils/import_utils.py") is None  # user's own


def test_the_switch_is_named_only_for_the_helper_function_it_turns_off():
    frame, helper = switched_helper([WRAPPER, MODEL, CHECK])
    assert (frame, helper.switch) == (CHECK, "TRANSFORMERS_DISABLE_TORCH_CHECK=1")
    assert switched_helper([WRAPPER, MODEL]) is None
    assert switched_helper([MODEL, Frame(CHECK.file, 10, "is_torch_available")]) is None


LOOPS = '''
import torch


def grid(h, grid_thw, layers, sizes):
    out = []
    for t, hh, w in grid_thw:
        n = t * hh * w
        out.append(h[:n].view(t, hh // 2, 2, w, -1))
    for t, hh, w in grid_thw.tolist():
        out.append(h[: t * hh * w].view(t, hh, w, -1))
    for layer in layers:
        h = layer(h)
        s = h.sum().item()
    for row in h:
        s = row.sum().item()
    for t in grid_thw:
        h = h + t
        s = float(h)
    return out
'''


@pytest.fixture
def loops(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text(LOOPS)
    lines = LOOPS.splitlines()
    return str(path), lambda text: lines.index(text) + 1 if text in lines else \
        [n for n, t in enumerate(lines, 1) if t.strip() == text][0]


def test_a_size_from_iterating_a_tensor_is_traced_back_to_its_loop(loops):
    path, line = loops
    found = iteration_behind(path, "grid", line("out.append(h[:n].view(t, hh // 2, 2, w, -1))"))
    assert (found.line, found.names, found.iterable) == (line("for t, hh, w in grid_thw:"),
                                                         ("t", "hh", "w"), "grid_thw")
    # a resume function's name still finds the user's function
    assert iteration_behind(path, "torch_dynamo_resume_in_grid_at_8", line("n = t * hh * w"))


@pytest.mark.parametrize("code", [
    "out.append(h[: t * hh * w].view(t, hh, w, -1))",  # the loop walks .tolist(): ints
    "s = h.sum().item()",  # h came from a call on the loop variable
    "s = row.sum().item()",  # the row's own data, not a size
    "s = float(h)",  # h mixes data with the loop variable
])
def test_uses_that_are_not_sizes_from_the_loop_stay_where_they_are(loops, code):
    path, line = loops
    assert iteration_behind(path, "grid", line(code)) is None


def test_the_size_uses_of_a_loop_are_its_view_and_slice_lines(loops):
    path, line = loops
    tree = ast.parse(LOOPS)
    first, listed, *_ = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    assert size_uses(first) == [line("out.append(h[:n].view(t, hh // 2, 2, w, -1))")]
    assert size_uses(listed) == []


NUMPY = '''
import numpy as np


def set_timesteps(self, steps):
    sigmas = np.interp(steps, np.arange(0, 10), self.table)

    if self.final == "zero":
        last = 0.0
    return sigmas, last
'''
EXPLANATION = "Can't find numpy numpy function <function interp at 0x7f00> in torch._numpy."


def test_a_numpy_call_dynamo_names_by_the_next_statement_is_moved_to_its_own_line(tmp_path):
    path = str(tmp_path / "sched.py")
    (tmp_path / "sched.py").write_text(NUMPY)
    outer = Frame("/home/me/loop.py", 12, "forward")
    named = Frame(path, 8, "set_timesteps")  # `if self.final == "zero":`, as Dynamo says
    chain, frame = break_frame([outer, named], EXPLANATION)
    assert (frame.line, frame.code) == (6, "sigmas = np.interp(steps, np.arange(0, 10), "
                                           "self.table)")
    assert chain == [outer, frame]
    at_call = Frame(path, 6, "set_timesteps")
    assert break_frame([at_call], EXPLANATION) == ([at_call], at_call)  # already there
    assert break_frame([named], "Dynamo does not support tracing Tensor.item()") == \
        ([named], named)  # another break: Dynamo's line stands


def test_lint_reports_sizes_from_iterating_a_tensor_at_the_for_line_once():
    source = textwrap.dedent('''
        import torch
        from torch import nn

        class Grid(nn.Module):
            def forward(self, x):
                grid_thw = torch.tensor([[1, 2, 2]])
                for t, h, w in grid_thw:
                    x = x[: int(t * h * w)].view(t, h, w, -1)
                for t, h, w in grid_thw.tolist():
                    x = x[: t * h * w].view(t, h, w, -1)
                return x
    ''')
    findings = [f for f in lint_source(source, "grid.py") if f.category == "item"]
    (finding,) = findings  # not also `int(t * h * w)`: the loop's variables are its sites
    assert (finding.line, finding.code) == (8, "for t, h, w in grid_thw:")
    assert "`t, h, w` used as sizes (line 9)" in finding.message
    assert "`.tolist()` before the loop" in finding.message


def test_package_path_is_the_path_inside_the_installed_package():
    """A file in a package folder is named from its top package on (a library patch's diff and
    title); the user's code and a lone module there have none."""
    from breakscan.frames import package_path

    site = "/venv/lib/python3.11/site-packages"
    assert package_path(f"{site}/transformers/models/bert/modeling_bert.py") == \
        "transformers/models/bert/modeling_bert.py"
    assert package_path("/usr/lib/python3/dist-packages/toylib/__init__.py") == \
        "toylib/__init__.py"
    assert package_path(f"{site}/six.py") is None
    assert package_path("/home/me/project/model.py") is None
