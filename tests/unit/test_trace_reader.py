"""The TORCH_TRACE reader: recorded trace files read into records, exactly (the `breakscan
trace` command: tests/cli/test_trace_cli.py; hostile traces, whose analysis can load torch:
tests/scan/test_trace_scan.py).

A recorded trace fixture (tests/fixtures/traces/step, from tests/fixtures/programs/trace_step.py)
checks the parser: exact record counts and a record kind it does not know.
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from breakscan.errors import UsageError
from breakscan.trace.reader import read_rank, records

from conftest import FIXTURES

STEP = FIXTURES / "traces" / "step"
STEP_FILE = STEP / "dedicated_log_torch_trace_rank_0_recorded.log"


def test_the_recorded_trace_is_read_exactly():
    trace = read_rank(STEP_FILE)
    assert (trace.rank, trace.records, trace.truncated) == (0, 64, 0)
    assert trace.torch_version == "2.13.0+cpu"
    assert len(trace.graph_break_logs) == 2 and len(trace.metrics) == 4
    assert [g.ops for g in trace.graphs] == [["torch.sin"], [], ["torch.sin"], []]
    assert trace.recompiles == [
        ("0/1", ["0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4"]),
        ("1/1", ["1/0: tensor 'y' size mismatch at index 0. expected 8, actual 4"])]
    assert trace.graph_break_logs[0].startswith("Graph break in user code at ")
    assert "Traceback (most recent call last)" not in trace.graph_break_logs[0]


def test_an_unknown_record_kind_is_counted_not_fatal(tmp_path):
    copy = tmp_path / STEP_FILE.name
    text = STEP_FILE.read_text()
    future = ('V1121 19:54:00.000000 4242 torch/_dynamo/new.py:1] {"future_event": {"x": 1}, '
              '"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "00"}\n'
              '\tsome payload\n\tmore payload\n')
    copy.write_text(text + future)
    trace = read_rank(copy)
    assert trace.other["future_event"] == 1 and trace.records == 65
    assert len(trace.graphs) == 4  # everything else read as before


def test_records_are_streamed():
    """A generator: the file is read line by line (a 100 MB trace is never held whole)."""
    stream = records(STEP_FILE)
    first = next(stream)
    assert first.kind in ("str", "artifact:torch_version", "dynamo_start")
    stream.close()


def test_reading_a_trace_imports_no_torch():
    """`breakscan trace` parses and analyses in the CLI's own process: torch is never loaded."""
    code = ("import sys; from breakscan.trace.ranks import trace_report; "
            f"r = trace_report({str(STEP)!r}); print(len(r.breaks), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["1", "False"], out.stderr


# --- hostile traces through the analysis: read or refused, never a traceback, never torch ---

RECORDED = next((FIXTURES / "traces").glob("*/*.log"))


def _mutations():
    lines = RECORDED.read_text().splitlines(keepends=True)
    return st.lists(st.tuples(st.integers(0, len(lines) - 1), st.sampled_from([
        "drop", "cut", "not-object", "huge-int", "wrong-types", "garbage", "deep"])),
        min_size=1, max_size=6).map(lambda edits: (lines, edits))


@settings(max_examples=80, deadline=None)
@given(case=_mutations())
def test_a_mutated_real_trace_is_read_or_refused_never_a_traceback(case, tmp_path_factory):
    from breakscan.trace.ranks import trace_report

    lines, edits = case
    lines = list(lines)
    prefix = "V1121 19:55:07.077000 2823 torch/_dynamo/convert_frame.py:1] "
    for at, how in edits:
        if how == "drop":
            lines[at] = ""
        elif how == "cut":
            lines[at] = lines[at][: len(lines[at]) // 2]
        elif how == "not-object":
            lines[at] = prefix + '[1, 2, "compilation_metrics"]\n'
        elif how == "huge-int":
            lines[at] = prefix + '{"frame_id": ' + "9" * 5000 + "}\n"
        elif how == "wrong-types":
            lines[at] = prefix + ('{"compilation_metrics": {"co_firstlineno": "x", '
                                  '"co_name": 5, "fail_user_frame_lineno": [1]}, "frame_id": '
                                  '"a", "frame_compile_id": null}\n')
        elif how == "garbage":
            lines[at] = "\x00\x1b[31m\udcff\n".encode("utf-8", "surrogateescape").decode(
                "utf-8", "replace")
        else:
            lines[at] = prefix + "[" * 50_000 + "\n"
    folder = tmp_path_factory.mktemp("trace")
    (folder / "rank_0.log").write_text("".join(lines), encoding="utf-8", errors="replace")
    try:
        result = trace_report(folder)
    except UsageError:
        return
    assert result.summary.graph_count >= 0
