"""The README's sample output is what the tool prints (issue 45 §4): its quickstart scan is run
and every line of the printed block that holds no measurement must be a line of the real
output (the block is abridged, so the real output may hold more)."""

from __future__ import annotations

import re
import shlex

from conftest import ROOT, run_cli

README = ROOT / "README.md"
# A measurement varies run to run (a time, a ratio, a share, a count of timed runs), and a
# table's borders are as wide as its widest measured cell: those lines are not compared.
MEASURED = re.compile(r"\d(\.\d+)? ?(µs|ms|s)\b|\d\.\d+x\b|×|%|capture \d|[┏┃┡└]|latency +spread")


def _quickstart() -> tuple[list[str], list[str]]:
    text = README.read_text(encoding="utf-8")
    command = next(line for line in text.splitlines()
                   if line.startswith("pip install") and "breakscan sample_models/" in line)
    scan = shlex.split(command.split("&& breakscan ", 1)[1])
    block = text.split("The scan prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return scan, block.splitlines()


def test_the_readmes_sample_output_is_what_the_quickstart_prints():
    scan, shown = _quickstart()
    # a shorter timing budget: it changes only the measured lines, which are not compared
    proc = run_cli(*scan, "--max-run-time", "0.2", env={"COLUMNS": "100"}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    printed = {line.rstrip() for line in proc.stdout.splitlines()}
    compared = [line.rstrip() for line in shown if line.strip() not in ("", "…")
                and not MEASURED.search(line)]
    assert len(compared) > 15  # the check compares most of the block
    assert [line for line in compared if line not in printed] == []
