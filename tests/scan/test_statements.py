"""Statements a report once got wrong (issue 33, items 4, 5 and 9), each checked against what the
real model does: a hook registered on every call is no first-call-only break; a resume function
Dynamo skips is the rest of a function, not the whole of it; a break inside a `torch.cond`
branch is named at the branch's line with its GB id. Models:
tests/fixtures/models/statement_cases.py."""

from __future__ import annotations

import torch

from breakscan import ProgramOptions, run_program, scan
from breakscan.frames import display_path
from breakscan.options import ScanOptions
from breakscan.pipeline.load import load_target
from breakscan.report.wording import calls_text
from breakscan.runs.runner import run_model

from conftest import FIXTURES, locate

CASES = FIXTURES / "models" / "statement_cases.py"


def _line(text: str) -> int:
    return locate(text, CASES)[1]


# -- item 4: a break on every call is not "first call only" --------------------------------------

def test_a_hook_registered_in_every_forward_breaks_on_every_call():
    """The hook's line runs in no forward (it runs in backward), yet each call registers the
    hook again: the break is on every call, and its split with it."""
    result = scan(f"{CASES}:HookEveryCall", input_shapes=["8,16"], train=True)
    (brk,) = result.breaks
    assert (brk.line, brk.function) == (_line("self.log.append(grad.norm())"), "_record")
    assert (brk.calls, brk.fires_per_call) == ("every", 1.0)
    later = result.later_call
    assert (later.graph_break_count, later.first_only, later.kept_splits) == (1, 0, 0)
    assert calls_text(brk) is None  # nothing said about first calls

    # What is true of the model: its compiled calls run the hook each time.
    loaded = load_target(f"{CASES}:HookEveryCall", input_shapes=["8,16"], train=True)
    compiled = torch.compile(loaded.model, backend="eager")
    for _ in range(4):
        compiled(torch.randn(8, 16)).backward()
    assert len(loaded.model.log) == 4


# -- item 5: a skipped resume function is the rest of the function -------------------------------

WHILE_CAUSE = (
    "the break is inside a for/while loop, where Dynamo cannot resume: it skipped the rest of "
    "forward() from statement_cases.py:{line} (Dynamo's resume function "
    "torch_dynamo_resume_in_forward_at_{line}; the code before that line ran compiled), which "
    "ran eagerly")


def _check_while(result) -> None:
    loop = _line("while x.sum() > 0:")
    (skipped,) = [b for b in result.breaks if b.frame_skipped]
    assert skipped.line == _line("if x.mean() > 100:")
    assert skipped.skip_cause == WHILE_CAUSE.format(line=loop)
    (resumed,) = [b for b in result.breaks if not b.frame_skipped]
    assert resumed.line == loop
    # The first graph (the layer) runs on every call; the resume function runs eagerly on
    # every call: both breaks fire once per call.
    s = result.summary
    assert (s.graph_calls_per_call, s.frames_run_eagerly_per_call) == (1.0, 1.0)
    assert (skipped.fires_per_call, resumed.fires_per_call) == (1.0, 1.0)


def test_scan_says_dynamo_skipped_the_rest_of_forward_not_the_whole_function():
    _check_while(scan(f"{CASES}:WhileAfterLayer", input_shapes=["8,16"]))


def test_run_says_dynamo_skipped_the_rest_of_forward_not_the_whole_function():
    program = FIXTURES / "programs" / "statement_while.py"
    _check_while(run_program(ProgramOptions(script=str(program), capture_only=True,
                                            quiet=True)))


# -- item 9: a break inside a torch.cond branch -------------------------------------------------

def test_a_break_in_a_cond_branch_is_named_at_the_branch_line_with_its_gb_id():
    """`.item()` in the branch: the eager model runs, the compiled one raises."""
    result = scan(f"{CASES}:BreakInCond", input_shapes=["8,16"])
    error = result.compile_error
    assert (error.file, error.line, error.code) == (str(CASES), _line("scale = t.sum().item()"),
                                                    "scale = t.sum().item()")
    assert error.message == (
        "This higher order operator doesn't work unless it is captured completely with "
        "torch.compile. Got graph break/error: Unsupported Tensor.item() call with "
        "capture_scalar_outputs=False")


def test_a_model_failing_in_a_cond_branch_names_the_branch_line_and_gb_id():
    """`print` in the branch: eager `torch.cond` compiles its branches, so the model itself
    fails (exit 3); the one-line error names the `print` line and Dynamo's GB id."""
    run = run_model(f"{CASES}:PrintInCond", ScanOptions(input_shapes=["8,16"]), None,
                    isolated=False)
    assert run.exit_code == 3
    assert "Got graph break/error: Failed to trace builtin operator [GB0059]: " in run.error
    print_line = _line('print("positive")')
    assert run.error.endswith(f" at {display_path(str(CASES))}:{print_line}")  # relative
