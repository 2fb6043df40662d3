"""The line a person changes (issue 32, section 4), with the real Dynamo in this process: a break
inside a library helper is reported at the line that calls it, with the switch that avoids it;
sizes taken from iterating a tensor at the `for` line; a NumPy call Dynamo cannot trace at its
own line when Dynamo's record names the next statement; constants made through a helper or a
lambda at the line that creates them. Models: tests/fixtures/models/line_cases.py."""

from __future__ import annotations

import pytest

from breakscan import scan
from breakscan.pipeline.constants import module_constants
from breakscan.pipeline.load import load_target

from conftest import FIXTURES, locate

CASES = FIXTURES / "models" / "line_cases.py"


def _scan(name: str):
    return scan(f"{CASES}:{name}", input_shapes=["8,16"])


def _line(text: str) -> int:
    return locate(text, CASES)[1]


# -- a break inside a library helper: the caller's line, and the switch -------------------------

def test_a_check_inside_transformers_helper_is_reported_at_the_line_that_calls_it():
    pytest.importorskip("transformers")
    result = _scan("CheckThroughHelper")
    (brk,) = result.breaks
    call = 'torch_compilable_check(h.abs() >= 0, "activations must be non-negative after abs")'
    assert (brk.file, brk.line, brk.code) == (str(CASES), _line(call), call)
    assert (brk.owner, brk.category, brk.gb_id, brk.user_frame) == ("user", "item", "GB0124",
                                                                    None)
    inner = brk.call_chain[-1]  # Dynamo broke inside the helper: the chain still says so
    assert (inner.function, inner.code) == ("torch_compilable_check",
                                            "torch._check_tensor_all(cond)")
    assert inner.file.endswith("transformers/utils/import_utils.py")
    assert "Set `TRANSFORMERS_DISABLE_TORCH_CHECK=1` in the environment" in brk.suggestion
    assert "Keep the value as a 0-d tensor" not in brk.suggestion
    assert brk.resume_functions and brk.fires_per_call == 1.0  # run-time counts still join


def test_the_switch_the_advice_names_removes_the_break(monkeypatch):
    pytest.importorskip("transformers")
    monkeypatch.setenv("TRANSFORMERS_DISABLE_TORCH_CHECK", "1")
    result = _scan("CheckThroughHelper")
    assert (result.summary.graph_count, result.breaks) == (1, [])


# -- sizes from iterating a tensor: the `for` line ----------------------------------------------

def test_sizes_from_iterating_a_tensor_are_one_root_at_the_for_line():
    result = _scan("GridBuiltInForward")
    (brk,) = result.breaks
    loop = "for t, hh, w in grid_thw:"
    view = "out.append(h[: t * hh * w].view(t, hh // self.merge, self.merge, w, -1).sum(2))"
    assert (brk.line, brk.code, brk.category, brk.gb_id) == (_line(loop), loop, "item",
                                                             "GB0124")
    assert [(s.line, s.code) for s in brk.sites] == [(_line(view), view)]
    # Dynamo's record (the view) and explain's step at the loop are the same break
    assert (brk.records, brk.explain_reasons, result.summary.graph_break_count) == (1, 1, 1)
    assert brk.call_chain[-1].line == _line(loop) and brk.fires_per_call == 1.0
    assert "loop over `grid_thw.tolist()`" in brk.suggestion
    assert "pass them in as Python ints (no break)" in brk.suggestion
    assert "Keep the value as a 0-d tensor" not in brk.suggestion


def test_a_loop_variable_used_for_its_own_data_stays_at_its_line():
    (brk,) = _scan("RowsNotSizes").breaks
    code = "total = total + row.sum().item()"
    assert (brk.line, brk.code, brk.sites) == (_line(code), code, [])
    assert "Keep the value as a 0-d tensor" in brk.suggestion


# -- a NumPy function Dynamo cannot trace: its own line ------------------------------------------

def test_np_interp_is_reported_at_its_own_line_when_dynamo_names_the_next():
    result = _scan("InterpAfterResume")
    item, interp = result.breaks
    code = "sigmas = np.interp(steps, np.arange(0, 10), np.linspace(0.1, 1.0, 10))"
    after = "scale = torch.from_numpy(sigmas).float().mean()"
    assert (interp.line, interp.code, interp.gb_id) == (_line(code), code, "GB0294")
    assert [f.line for f in interp.call_chain] == [_line(code)]
    # Dynamo's own numbering names the next statement: its resume function after the call
    assert interp.resume_functions == [f"torch_dynamo_resume_in_forward_at_{_line(after)}"]
    assert interp.fires_per_call == 1.0 and interp.records == interp.explain_reasons == 1
    assert "torch._numpy, which has no `interp`" in interp.suggestion
    assert item.code == "last = int(h.detach().abs().sum().item() > 0) + 9"
    assert result.summary.graph_break_count == 2


# -- constants made through a helper or a lambda ------------------------------------------------

@pytest.mark.parametrize("name, pad, stride", [
    ("ConstantsInOneAssignment", "self.pad, self.stride = mk(pad), mk(stride)",
     "self.pad, self.stride = mk(pad), mk(stride)"),
    ("ConstantsRegisteredByLambda", 'keep("pad", pad)', 'keep("stride", stride)'),
    ("ConstantsRegisteredInALoop", 'for name, value in (("pad", pad),', '("stride", stride)):'),
    ("ConstantsOverridden", 'self._keep("pad", pad)', 'self._keep("stride", stride)'),
    ("ConstantsFromKeywords", "self.pad = mk(pad)", "self.stride = mk(stride)"),
])
def test_constants_made_through_a_helper_are_linked_to_the_line_that_makes_them(name, pad,
                                                                              stride):
    model = load_target(f"{CASES}:{name}", input_shapes=["8,16"]).model
    found = {c.attr: (c.file, c.line, c.code, c.value) for c in module_constants(model)}
    assert found == {"pad": (str(CASES), _line(pad), pad, 2),
                     "stride": (str(CASES), _line(stride), stride, 2)}


def test_constants_registered_in_a_loop_are_one_root_at_the_loop():
    (brk,) = _scan("ConstantsRegisteredInALoop").breaks
    loop = 'for name, value in (("pad", pad),'
    assert (brk.category, brk.line, brk.code) == ("tensor_constant", _line(loop), loop)
    assert [c.attr for c in brk.constants] == ["pad", "stride"]
    assert [s.line for s in brk.sites] == [_line("if self.pad > 0:"),
                                           _line("return h[..., :: self.stride]")]



def test_the_panel_of_an_iteration_root_says_where_the_sizes_are_used():
    import io

    from breakscan.report.terminal import console, render

    sample = FIXTURES.parent.parent / "sample_models" / "grid_sizes.py"
    result = scan(f"{sample}:GridSizes", input_shapes=["8,16"])
    out = console(file=io.StringIO(), width=200)
    render(result, out)
    line = result.breaks[0].sites[0].line
    assert f"the sizes taken here are used as values at line {line}" in out.file.getvalue()
    assert "tested by the branch" not in out.file.getvalue()
