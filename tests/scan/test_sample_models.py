"""Every sample model's real scan matches the facts its docstring states."""

from __future__ import annotations

import json

import pytest

from breakscan import Limits, ScanOptions, TimingOptions, scan
from breakscan.fixes.plan import plan_fixes
from breakscan.fixes.verify import verify_fixes

from conftest import GAINED, QUICK, locate, run_cli, sample_expectations, split_fix

EXPECTATIONS = sample_expectations()
# `fix: <fix_id> <status>`: what `--fix` makes of the root break. Every sample's status is
# checked here with each fix's job run in this process (`verify_fixes(isolate=False)`, ~3 s a
# sample); through the CLI, each fix in fresh processes (~10 s a sample), one sample per status
# in the slow suite. `fix: none`: nothing planned to try.
FIXABLE = [e for e in EXPECTATIONS if e.facts.get("fix", "none") != "none"]
ONE_PER_STATUS = list({split_fix(e.facts["fix"])[1]: e for e in sorted(
    FIXABLE, key=lambda e: not e.file.name.startswith("family_"), reverse=True)}.values())


@pytest.mark.parametrize("expect", EXPECTATIONS, ids=str)
def test_scan_matches_docstring(expect):
    result = scan(expect.target, input_shapes=["8,16"])
    facts = expect.facts
    if "compile_error" in facts:  # torch.compile fails: not a break, no graph
        error = result.compile_error
        file, line = locate(facts["compile_error"], expect.file)
        assert (error.file, error.line, error.code) == (str(file), line, facts["compile_error"])
        assert error.exception == facts["exception"]
        assert (result.summary.graph_count, result.summary.graph_break_count) == (0, 0)
        assert result.breaks == [] and result.summary.frames_skipped == 0
        return
    assert result.compile_error is None
    assert result.summary.graph_count == int(facts["graphs"])
    assert result.summary.graph_break_count == int(facts["breaks"])
    assert result.summary.break_records == int(facts["records"])
    if "frames_skipped" in facts:
        assert result.summary.frames_skipped == int(facts["frames_skipped"])
    if "ops" in facts:
        assert result.summary.op_count == int(facts["ops"])
    if "explain_breaks" in facts:
        assert result.explain.graph_break_count == int(facts["explain_breaks"])
    for name in ("graph_calls_per_call", "eager_gaps_per_call", "frames_run_eagerly_per_call"):
        if name in facts:  # at run time, per model call
            assert getattr(result.summary, name) == float(facts[name]), name
    # explain's graphs are the graphs breakscan recorded in the same pass
    assert result.explain.graph_count == result.summary.graph_count
    assert result.captured_call == "first call of a freshly built model"
    later = int(facts.get("later_breaks", "0"))
    assert result.later_call.later_only == later
    if facts["breaks"] == "0" and not later:
        assert result.breaks == []
        return
    _assert_root_break(result, facts, expect)


def _assert_root_break(result, facts, expect):
    """The one root-cause break (and its stated consequences) against the docstring."""
    consequences = int(facts.get("consequences", "0"))
    assert len(result.breaks) == 1 + consequences
    brk = result.breaks[0]
    assert brk.calls == facts.get("calls", "every")
    assert brk.owner == "user"
    assert brk.gb_id and brk.gb_id.startswith("GB")
    if "gb_id" in facts:  # Dynamo's registry id of the root break (torch 2.13)
        assert brk.gb_id == facts["gb_id"]
    assert brk.suggestion and brk.explanation
    if "advice_contains" in facts:
        assert facts["advice_contains"] in brk.suggestion, brk.suggestion
    if "fix" in facts:  # the fix planned at the root (its status: the slow test below)
        planned = [p.fix.fix_id for p in plan_fixes(expect.target, result)
                   if p.fix.line == brk.line and not (p.fix.reason or "").startswith("refused")]
        fix_id = split_fix(facts["fix"])[0]
        assert (planned == []) if fix_id == "none" else (fix_id in planned), planned
    assert brk.category == facts["category"]
    if "fires_per_call" in facts:
        assert brk.fires_per_call == float(facts["fires_per_call"])
    if "cause" in facts:
        assert brk.cause_category == facts["cause"]
    file, line = locate(facts["break_at"], expect.file)
    assert (brk.file, brk.line) == (str(file), line)
    for later in result.breaks[1:]:  # ranked after the root, and saying so
        assert f"{file.name}:{line}" in later.suggestion
        assert "fix that one first" in later.suggestion
    assert brk.code == file.read_text().splitlines()[line - 1].strip()
    if "sites" in facts:
        assert len(brk.sites) == int(facts["sites"])
    if "follow_on" in facts:
        (follow,) = brk.follow_on
        assert (follow.file, follow.line) == (str(file), locate(facts["follow_on"], file)[1])
    if brk.category == "tensor_constant":  # the root is where the constant is created
        assert [c.attr for c in brk.constants] and all(s.file == str(file) for s in brk.sites)
        return
    # the chain ends at the break (or goes on into torch, e.g. register_forward_hook's setattr)
    assert [f.line for f in brk.call_chain if f.file == str(file)][-1] == line
    assert brk.call_chain[0].function == "forward"


@pytest.mark.parametrize("expect", FIXABLE, ids=str)
def test_fix_status_matches_docstring(expect):
    """`fix: <fix_id> <status>`: what --fix makes of the fix at the root, judged as --fix
    judges it (the same options, planning, job and judgement; the job in this process)."""
    fix_id, status = split_fix(expect.facts["fix"])
    options = ScanOptions(input_shapes=("8,16",),  # what `--fix` QUICK scans with
                          timing=TimingOptions(backend="eager", max_run_time=0.1))
    result = scan(expect.target, options)
    line = result.breaks[0].line
    (plan,) = [p for p in plan_fixes(expect.target, result)
               if p.fix.line == line and p.fix.fix_id == fix_id]
    (fix,) = verify_fixes(expect.target, options, result, Limits(), plans=[plan],
                          isolate=False)
    _assert_status(fix, status)


@pytest.mark.slow
@pytest.mark.parametrize("expect", ONE_PER_STATUS, ids=str)
def test_fix_status_through_the_cli(expect):
    """The same through `breakscan --fix`: each fix verified in its own child process."""
    fix_id, status = split_fix(expect.facts["fix"])
    proc = run_cli(expect.target, "-s", "8,16", "--fix", *QUICK, "-f", "json")
    assert proc.returncode in (0, 1), proc.stderr
    line = locate(expect.facts["break_at"], expect.file)[1]
    at_root = [f for f in json.loads(proc.stdout)["fixes"] if f["line"] == line]
    (fix,) = [f for f in at_root if f["fix_id"] == fix_id]
    _assert_status(fix, status)


def _assert_status(fix, status):
    fix = fix if isinstance(fix, dict) else {"status": fix.status, "reason": fix.reason,
                                             "outputs_match": fix.outputs_match}
    # "verified" may read "slower": the gain is proven, the same-process timing says slower
    assert fix["status"] in (GAINED if status == "verified" else (status,)), fix["reason"]
    if fix["status"] in GAINED:
        assert fix["outputs_match"]
