"""Terminal report (rich): what the CLI prints, and the console it prints to.

One result (:func:`render`: summary line, ranked action list, one panel per root-cause break,
then recompiles, timings and fixes), several runs with their gate lines (:func:`render_runs`),
A vs B (:func:`render_comparison`), lint findings and the rule catalogue. Renders finished
results; never runs a model. Colour is rich's decision (off when stdout is not a TTY or
``NO_COLOR`` is set); width follows the terminal and stays readable at 100 columns. The sections
live in ``terminal_*`` modules, the wording the other reporters share in :mod:`.wording`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

from ..frames import display_path
from ..model.records import StaticFinding
from ..model.result import Comparison, ModelRun, ScanResult
from ..model.result import whole as count
from ..rules.catalogue import Rule, finding_status
from ..rules.categories import REGISTRY_URL
from .catalogue import rule_fixes
from .literal import LiteralTable, output_tail, printable, scrubbed
from .terminal_breaks import print_breaks
from .terminal_fixes import AB_STYLE, print_fixes
from .terminal_kernels import print_kernels
from .terminal_kinds import print_what_ran
from .terminal_compile import print_compile_time
from .terminal_runtime import print_recompiles, print_timings
from .terminal_summary import print_context, summary_line
from .wording import (ab_line, check_text, compared_speedup, compared_timing, compared_total,
                      gate_status, outputs_verdict)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """``breakscan … | head -3``: the reader left. Exit as a Unix tool killed by SIGPIPE
        does (141), quietly; rich's own choice, exit 1, would read as a failed gate."""
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        except OSError:
            pass
        raise SystemExit(128 + 13)


def console(**kwargs: Any) -> Console:
    """A console that prints every string literally: source lines, reasons, file names and a
    model's output may hold ``[bold]``, ``[h > 0]`` or ``:smile:``, never markup or emoji."""
    return _Console(markup=False, emoji=False, highlight=False, **kwargs)


def render(result: ScanResult, console: Console, *, quiet: bool = False,
           verbose: bool = False) -> None:
    """One result: the summary lines (all that ``quiet`` prints), what ran and how it was
    counted, the breaks worst first, then everything else the scan found."""
    if quiet:  # only what the summary line shows is made printable (a zoo prints 500 of them)
        result = dataclasses.replace(result, **{name: scrubbed(getattr(result, name))
                                                for name in _SUMMARY_FIELDS})
    else:
        result = scrubbed(result)
    if result.partial:
        console.print(Text(f"PARTIAL REPORT: the scan stopped during {result.stopped_at}; only "
                           "the stages before it are shown", style="bold red"))
    # soft-wrapped: the terminal folds a long line, and a CI log keeps each line whole to grep
    console.print(summary_line(result), soft_wrap=quiet)
    if quiet:
        return
    print_what_ran(result, console)
    print_context(result, console, verbose=verbose)
    print_breaks(result, console)
    _print_after_breaks(result, console)
    if verbose:
        _print_output_and_logs(result, console)


_SUMMARY_FIELDS = ("target", "compile_error", "program", "stopped_at")  # the text summary_line
# and the PARTIAL line print; the rest of a quiet summary is numbers


def _print_after_breaks(result: ScanResult, console: Console) -> None:
    """The static lint's other findings, recompiles, timings, fixes, where explain disagrees,
    and the notes."""
    others = [f for f in result.static if f.status != "break"]
    if others:
        console.print(Text("Also in the source (static lint of the scanned class)", style="bold"))
        render_static(others, console)
    print_kernels(result, console)
    if result.recompiles is not None:
        print_recompiles(result, console)
    if result.timings is not None:
        print_timings(result, console)
    if result.compile_time is not None:
        print_compile_time(result, console)
    if result.fixes or result.unfixed:
        print_fixes(result, console)
    if result.discrepancies:
        console.print(Text("Where explain and breakscan differ", style="bold"))
        for gap in result.discrepancies:
            console.print(Padding(Text(f"{gap.topic}: explain {gap.explain}, breakscan "
                                       f"{gap.breakscan} — {gap.reason}"), (0, 0, 0, 2)))
    for note in result.notes:
        console.print(Text(f"note: {note}", style="yellow"))


def _print_output_and_logs(result: ScanResult, console: Console) -> None:
    """--verbose: what the model (or program) printed, then Dynamo's own warnings."""
    if result.model_output:
        console.print(Text("the program's output:" if result.kind == "program" else
                           "model output during the scan:", style="dim"))
        console.print(Text(output_tail(result.model_output)))
    for line in result.dynamo_log:
        console.print(Text(line, style="dim"))


def gate_line(result: ScanResult) -> Text | None:
    """The closing PASS/FAIL line, naming every failed check."""
    gate = result.gate
    if gate is None:
        return None
    if gate.passed:
        text = Text("PASS", style="bold green")
        text.append(f": {len(gate.checks)} check(s) passed", style="green")
    else:
        text = Text("FAIL", style="bold red")
        text.append(": " + "; ".join("torch.compile fails" if c.name == "compiles" else
                                      check_text(c) for c in gate.failed()), style="red")
    for improvement in gate.improvements:
        text.append(f"\n  improved: {improvement}", style="green")
    return text


def render_runs(runs: list[ModelRun], console: Console, *, quiet: bool = False,
                verbose: bool = False) -> None:
    """One or many models; with several, a closing table lists each, and each model's report is
    written at once (rich's buffer), not one write per line (a zoo: thousands of writes)."""
    many = len(runs) > 1
    for run in runs:
        with console if many else contextlib.nullcontext():
            _render_run(run, console, quiet=quiet, verbose=verbose, many=many)
    if len(runs) > 1:
        console.print(_runs_table(runs))


def _render_run(run: ModelRun, console: Console, *, quiet: bool, verbose: bool,
                many: bool) -> None:
    """One model's report and its gate line."""
    if run.error is not None:
        run = dataclasses.replace(run, error=printable(run.error))
    if run.result is None:
        console.print(Text(f"{run.target}\nERROR (exit {run.exit_code}): {run.error}",
                           style="bold red"))
        return
    render(run.result, console, quiet=quiet, verbose=verbose)
    if run.cached:
        console.print(Text("cached: no file, input or setting it depends on changed since "
                           "this result was stored (--no-cache scans again)", style="dim"))
    if run.error is not None:
        if many:
            console.print(Text(f"ERROR (exit {run.exit_code}): {run.error}", style="bold red"))
        return
    line = gate_line(run.result)
    if line is not None:
        for failed in run.result.gate.failed():
            if failed.detail and not quiet:
                console.print(Text(f"  {failed.name}: {failed.detail}", style="red"))
        console.print(line)


_GATE_STYLE = {"PASS": "green", "FAIL": "bold red"}


def _runs_table(runs: list[ModelRun]) -> LiteralTable:
    """``breakscan check``: one row per model with its gate verdict and counts (and its status
    against the zoo's expected counts, when gated by them)."""
    table = LiteralTable(title="breakscan check", title_justify="left")
    expected = any(run.expected is not None for run in runs)
    for column in ("model", "result", "graphs", "breaks", "recompiles") + \
            (("expected",) if expected else ()):
        table.add_column(column, overflow="fold")
    for run in runs:
        extra = [_expected_cell(run)] if expected else []
        if run.result is None or run.error is not None:
            status = Text(f"error (exit {run.exit_code})", style="bold red")
            if run.flaky:
                status.append(" (flaky)", style="dim")
            table.add_row(run.target, status, "", "", "", *extra)
            continue
        s = run.result.summary
        status = gate_status(run.result.gate)
        status = Text(status, style=_GATE_STYLE.get(status, ""))
        if run.cached:
            status.append(" (cached)", style="dim")
        if run.flaky:
            status.append(" (flaky)", style="dim")
        varied = run.result.recompiles is not None  # "-": never called with other inputs
        table.add_row(run.target, status, str(s.graph_count), str(s.graph_break_count),
                      str(s.recompile_count) if varied else "-", *extra)
    return table


def _expected_cell(run: ModelRun) -> Text:
    check = run.expected
    if check is None:
        return Text("")
    style = "green" if check.status == "PASS" else ("yellow" if not check.fails_gate
                                                    else "bold red")
    return Text(check.status, style=style)


_VERDICT_STYLE = {"ok": "green", "bad": "bold yellow", "warn": "yellow"}


def render_comparison(comparison: Comparison, console: Console) -> None:
    """A and B side by side: counts, recompiles, latency, speedup; then the outputs verdict."""
    console.print(Text(f"A = {printable(comparison.a.target)}\nB = {printable(comparison.b.target)}"))
    console.print(_comparison_table(comparison))
    a = comparison.a.result
    t = a.timings if a else None
    if t:
        console.print(Text(f"timings: {t.device}, {t.threads} thread(s), backend={t.backend}; "
                           "median ± IQR per call, each column in its own process", style="dim"))
    if comparison.ab is not None:
        console.print(Text(f"A → B, compiled, in one process: {ab_line(comparison.ab)}",
                           style=AB_STYLE.get(comparison.ab.verdict, "")))
    verdict, kind = outputs_verdict(comparison)
    console.print(Text(printable(verdict), style=_VERDICT_STYLE[kind]))
    if comparison.note and comparison.outputs is not None:
        console.print(Text(printable(comparison.note), style="dim"))
    for run in (comparison.a, comparison.b):
        if run.error:
            console.print(Text(f"{printable(run.target)}: {printable(run.error)}",
                               style="bold red"))


def _comparison_table(comparison: Comparison) -> LiteralTable:
    table = LiteralTable(title="breakscan compare", title_justify="left")
    table.add_column("", no_wrap=True)
    for label, run in (("A", comparison.a), ("B", comparison.b)):
        name = run.target.rpartition(":")[2]
        table.add_column(f"{label}: {printable(name)}", overflow="fold", justify="right")
    a, b = comparison.a.result, comparison.b.result
    totals = [("graphs", "graph_count"), ("root-cause breaks", "graph_break_count"),
              ("break records", "break_records"), ("frames skipped", "frames_skipped")]
    if (a and a.recompiles) or (b and b.recompiles):
        totals.append(("recompiles", "recompile_count"))
    for label, name in totals:
        table.add_row(label, compared_total(a, name), compared_total(b, name))
    if a and b and a.summary.runtime_calls and b.summary.runtime_calls:
        table.add_row("graph calls per call", count(a.summary.graph_calls_per_call),
                      count(b.summary.graph_calls_per_call))
        table.add_row("returns to Python per call", count(a.summary.eager_gaps_per_call),
                      count(b.summary.eager_gaps_per_call))
    if (a and a.summary.kernels_per_call is not None) or (
            b and b.summary.kernels_per_call is not None):  # --kernels
        table.add_row("kernels per call", count(a.summary.kernels_per_call) if a else "-",
                      count(b.summary.kernels_per_call) if b else "-")
    table.add_row("eager", compared_timing(a, "eager"), compared_timing(b, "eager"))
    table.add_row("compiled", compared_timing(a, "compiled"), compared_timing(b, "compiled"))
    table.add_row("speedup vs its eager", compared_speedup(a), compared_speedup(b))
    return table


_STATUS_STYLE = {"break": "red", "ran": "dim", "not exercised": "bold yellow",
                 "not traced": "yellow"}


def render_static(findings: list[StaticFinding], console: Console, *,
                  files: int | None = None) -> None:
    """`breakscan lint`, or a scan's static section (findings with their run status)."""
    if files is not None:
        console.print(Text(f"breakscan lint: {len(findings)} finding(s) in {files} file(s)",
                           style="bold"))
    for f in findings:
        text = Text(f"  {f.rule} {f.category}", style="magenta")
        text.append(f"  {display_path(f.file)}:{f.line}  in {f.function}()")
        text.append(f"\n      {printable(f.code)}", style="cyan")
        status = finding_status(f.status, f.category)
        if status:
            text.append(f"\n      {status}", style=_STATUS_STYLE.get(f.status, ""))
        text.append(f"\n      {printable(f.message)}", style="dim")
        console.print(text)


def render_rule_list(rules: tuple[Rule, ...], console: Console) -> None:
    table = LiteralTable(title="breakscan rules (breakscan rules ID explains one)",
                         title_justify="left")
    for column in ("id", "name", "title", "Dynamo ids", "fixes"):
        # Ids, names and fix ids are never cut (`capture_scalar_outp|uts`): one fix per line;
        # the title and the registry ids wrap at spaces in what is left.
        table.add_column(column, no_wrap=column in ("id", "name", "fixes"),
                         ratio=1 if column in ("title", "Dynamo ids") else None)
    for rule in rules:
        ids = rule.gb_ids
        shown = ", ".join(ids[:3]) + (f", … ({len(ids)} ids)" if len(ids) > 3 else "")
        table.add_row(rule.id, rule.name, rule.title, shown or "-",
                      "\n".join(rule_fixes(rule)) or "-")
    console.print(table)


def render_rule(rule: Rule, console: Console) -> None:
    console.print(Text(f"{rule.id} {rule.name}: {rule.title}", style="bold"))
    console.print(Text(f"category: {rule.category} ({rule.kind})", style="dim"))
    if rule.gb_ids:
        console.print(Text("Dynamo registry ids: " + ", ".join(rule.gb_ids), style="dim"))
    console.print(Text("why it hurts: ", style="bold") + Text(rule.why))
    console.print(Text("fix: ", style="bold green") + Text(rule.suggestion))
    if rule.before:
        console.print(Text("before:", style="bold"))
        console.print(Padding(Syntax(rule.before, "python", theme="ansi_dark"), (0, 0, 0, 2)))
        console.print(Text("after:", style="bold"))
        console.print(Padding(Syntax(rule.after, "python", theme="ansi_dark"), (0, 0, 0, 2)))
    for gb_id, text in rule.advice_by_id:
        console.print(Text(f"fix for {gb_id}: ", style="bold green") + Text(text))
    if rule_fixes(rule):
        console.print(Text("fixes --fix tries and verifies: " + ", ".join(rule_fixes(rule)),
                           style="cyan"))
    if rule.gb_ids:
        console.print(Text("registry: " + REGISTRY_URL.format(id=rule.gb_ids[0].lower()),
                           style="dim"))
