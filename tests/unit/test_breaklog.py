"""The graph-break message parser, on messages Dynamo 2.13 really printed (tests/fixtures).

The fixtures were recorded from breakscan's own capture of the sample models;
tests/scan/test_capture.py checks the same facts on live Dynamo output, so a torch whose format
changes fails there too.
An explain reason's id looked up in torch's registry: tests/scan/test_breaklog_scan.py.
"""

from __future__ import annotations

from breakscan.analysis.breaklog import parse_break_message
from breakscan.messages import split_reason

from conftest import FIXTURES


def load(name: str):
    record = parse_break_message((FIXTURES / name).read_text())
    assert record is not None
    return record


def test_data_dependent_branch_message():
    r = load("data_branch_0.txt")
    assert (r.gb_id, r.gb_type) == ("GB0170", "Data-dependent branching")
    assert r.header_file.endswith("tensor_branch.py") and r.header_line == 24
    assert r.explanation.startswith("Detected data-dependent branching")
    # the explanation's own "# File ..." line is not mistaken for a traceback frame
    assert "line 24, in forward, code: if h.sum() > 0:" in r.explanation
    assert len(r.hints) == 3 and r.hints[2] == "Use `torch.cond` to express dynamic control flow."
    assert r.user_stack[-1].function == "forward" and r.user_stack[-1].code == "if h.sum() > 0:"
    assert not r.frame_skipped and not r.duplicate


def test_loop_skip_keeps_inner_cause_and_wrapper():
    r = load("loop_skip_0.txt")
    assert r.gb_id == "GB0059"  # the print is the root cause ...
    assert r.wrapper_gb_id == "GB7000"  # ... wrapped by "graph break in loop"
    assert r.wrapper_gb_type == "graph break in loop"
    assert r.frame_skipped
    assert r.user_stack[-1].code == 'print("layer", i)'
    # the "Stack variable source attribution" frame is not part of the user stack
    assert all(f.function for f in r.user_stack)


def test_duplicate_short_form_has_header_but_no_stack():
    r = load("nested_1.txt")
    assert r.duplicate and r.user_stack == []
    assert r.gb_id == "GB0124" and r.header_line == 7


def test_multi_line_hint_is_joined():
    r = load("nested_0.txt")
    assert r.hints == ["Set `torch._dynamo.config.capture_scalar_outputs = True` or `export "
                       "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in "
                       "the captured graph."]
    # the log record of a break inside a submodule omits the outer forward frames (explain
    # has them; analyse merges both)
    assert [f.function for f in r.user_stack][-2:] == ["forward", "normalise_and_log"]


def test_skip_frame_and_try_block_are_frame_skips():
    skip = load("skip_frame_0.txt")
    assert skip.gb_id == "GB4297" and skip.frame_skipped and skip.wrapper_gb_id is None
    tried = load("try_block_0.txt")
    assert tried.gb_id == "GB0025" and tried.frame_skipped


def test_non_break_messages_are_ignored():
    assert parse_break_message("") is None
    assert parse_break_message("Recompiling function forward in x.py:3") is None


# -- the recompile message parser ----------------------------------------------------------------

def test_a_guard_failure_is_listed_once():
    from breakscan.analysis.recompiles import parse_recompile_message

    text = ("Recompiling function forward in /m.py:12\n    triggered by the following guard "
            "failure(s):\n    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4\n"
            "    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4\n")
    rec = parse_recompile_message(text)
    assert rec is not None and rec.reasons == [
        "tensor 'x' size mismatch at index 0. expected 8, actual 4"]


def test_split_reason_of_an_explain_reason():
    parts = split_reason("Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
                         "  Explanation: Dynamo does not support tracing `Tensor.item()`.\n"
                         "  Hint: Set it.\n\n  Developer debug context: x\n")
    assert parts["gb_type"].startswith("Unsupported Tensor.item()")
    assert parts["gb_id"] == "GB0124"  # from the registry torch ships (read, torch not imported)
    assert parts["hints"] == ["Set it."]
    assert split_reason("generic_jump TensorVariable()")["gb_type"] == "generic_jump TensorVariable()"
