"""Terminal report (rich): summary line, ranked action list, one panel per root-cause break.

Renders a :class:`ScanResult`; never runs a model. Colour is rich's decision (off when stdout is
not a TTY or ``NO_COLOR`` is set); width follows the terminal and stays readable at 100 columns.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Callable

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..frames import display_path, provenance_frame, source_lines
from ..analysis.categories import REGISTRY_URL
from ..result import (Comparison, Fix, ModelRun, ProgramReport, RootBreak, ScanResult,
                      StaticFinding)
from ..result import whole as count
from ..rules import Rule, finding_status

CONTEXT_LINES = 2


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


class _Table(Table):
    """A table whose text cells are literal (a cell such as ``pos = h[h > 0]`` is not markup)."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*(Text(printable(r)) if isinstance(r, str) else r
                          for r in renderables), **kwargs)
CALLS_TEXT = {
    "first_only": "first call only: a later call of the same model does not break here (a "
                  "one-time Python path: lazy init, a hook or warning issued once)",
    "later_only": "later calls only: the first call does not break here, a later call does "
                  "(not counted by the gate, which judges the first call)",
}
KEPT_SPLIT_TEXT = ("first call only, but its split stays: later calls do not take this path, "
                   "yet the code Dynamo compiled around it on the first call is reused, so "
                   "every call still returns to Python here ({fires} per call). Call the model "
                   "once before torch.compile (or move the one-time work to __init__) and the "
                   "compiled code has no split")


def calls_text(brk: RootBreak) -> str | None:
    """Which calls hit a break, when not every call (None)."""
    if brk.calls == "first_only" and brk.fires_per_call:
        return KEPT_SPLIT_TEXT.format(fires=count(brk.fires_per_call))
    return CALLS_TEXT.get(brk.calls)


def summary_line(result: ScanResult) -> Text:
    """The target, the counts (what --quiet prints and CI logs grep), then what runs per call."""
    s = result.summary
    text = Text()
    text.append(f"{result.target}\n", style="bold")
    error = result.compile_error
    if error is not None:
        text.append(f"torch.compile fails: {error.exception}: {error.message} at "
                    f"{display_path(error.file) if error.file else '(torch only)'}"
                    f"{':' + str(error.line) if error.line else ''}\n", style="bold red")
    text.append(f"graphs {s.graph_count}", style="cyan")
    text.append(" · ")
    text.append(f"root-cause breaks {s.graph_break_count}",
                style="bold red" if s.graph_break_count else "bold green")
    text.append(f" · break records {s.break_records} · ops {s.op_count} · ")
    text.append(f"frames skipped {s.frames_skipped}", style="bold red" if s.frames_skipped else "")
    if result.recompiles is not None:
        text.append(f" · recompiles {s.recompile_count}",
                    style="bold red" if s.recompile_count else "")
    t = result.timings
    if t is not None and t.speedup is not None:
        text.append(f" · speedup {t.speedup:.2f}x")
    if t is not None and t.correctness is not None and not t.correctness.match:
        text.append(" · OUTPUTS DIFFER", style="bold red")
    if result.program is not None:
        text.append("\n" + program_line(result.program))
    if s.runtime_calls:
        worst = " (the busiest region)" if result.program and len(result.program.regions) > 1 \
            else ""
        text.append(f"\nper call{worst}: graph calls {count(s.graph_calls_per_call)} · returns to "
                    f"Python {count(s.eager_gaps_per_call)}",
                    style="bold red" if s.eager_gaps_per_call else "")
        if s.frames_run_eagerly_per_call:
            text.append(f" · frames run eagerly {count(s.frames_run_eagerly_per_call)}",
                        style="bold red")
    return text


def program_line(program: ProgramReport) -> str:
    """'exit 0 · 2 compiled regions · ran 4.10 s' (and how it ended when it did not)."""
    ended = "did not finish" if program.exit_code is None else f"exit {program.exit_code}"
    regions = f"{len(program.regions)} compiled region{'' if len(program.regions) == 1 else 's'}"
    backend = " · --capture-only (eager backend)" if program.capture_only else ""
    return f"program: {ended} · {regions} · ran {program.seconds:.2f} s{backend}"


def regions_table(program: ProgramReport) -> Table:
    """One row per compiled region: what the program called and what that ran."""
    table = _Table(title="Compiled regions (counted over the whole run; per call in brackets)",
                  title_justify="left", expand=False)
    table.add_column("region", no_wrap=True)
    table.add_column("compiled at", no_wrap=True)
    for name in ("calls", "graph calls", "returns to Python", "frames run eagerly"):
        table.add_column(name, justify="right")
    for r in program.regions:
        def both(total: int, per: float | None) -> str:
            return f"{total}" + (f" ({count(per)})" if per is not None and r.calls else "")

        where = f"{display_path(r.compiled_at.file)}:{r.compiled_at.line}" \
            if r.compiled_at else "-"
        table.add_row(r.name + ("()" if r.kind == "function" else ""), where, str(r.calls),
                      both(r.graph_calls, r.graph_calls_per_call),
                      both(r.eager_gaps, r.eager_gaps_per_call),
                      both(r.frames_run_eagerly, r.frames_run_eagerly_per_call))
    return table


def ranks_table(result: ScanResult) -> Table:
    """``breakscan trace``: one row per rank."""
    table = _Table(title="Ranks", title_justify="left", expand=False)
    for name in ("rank", "graphs", "breaks", "recompiles", "frames skipped", "compile s",
                 "records"):
        table.add_column(name, justify="right")
    for r in result.ranks:
        cut = f" ({r.truncated} cut short)" if r.truncated else ""
        table.add_row(str(r.rank) if r.rank is not None else os.path.basename(r.file),
                      str(r.graphs), str(r.breaks), str(r.recompiles),
                      str(r.frames_skipped), f"{r.compile_s:.2f}", f"{r.records}{cut}")
    return table


def settings_text(result: ScanResult) -> str:
    """The torch.compile settings the scan ran with, in the words users write them."""
    c = result.compile_settings or {}
    dynamic = {True: "True", False: "False"}.get(c.get("dynamic"), "None (torch's default)")
    text = f"torch.compile settings: dynamic={dynamic} for the capture, run-time counts, " \
        "recompiles"
    if c.get("backend"):
        extra = "".join(f", {k}={c[k]!r}" for k in ("mode",) if c.get(k))
        options = f", options={c['options']!r}" if c.get("options") else ""
        text += f" and timings; timings: backend={c['backend']!r}{extra}{options}"
    return text


def runtime_line(result: ScanResult) -> str:
    """What ran per model call, and why it differs from the unique counts."""
    s = result.summary
    eager = f", {_n(s.frames_run_eagerly_per_call, 'frame')} run eagerly" \
        if s.frames_run_eagerly_per_call else ""
    return (f"at run time, per call ({s.runtime_calls} calls after warm-up, eager backend): "
            f"{_n(s.graph_calls_per_call, 'graph call')}, "
            f"{_n(s.eager_gaps_per_call, 'return')} to Python at a break{eager}. "
            "The counts above (and explain's) count each graph and break once; here each "
            "counts every time it runs.")


def _n(value: float | None, noun: str) -> str:
    return f"{count(value)} {noun}{'' if value == 1 else 's'}"


def fires_text(brk: RootBreak, result: ScanResult) -> str:
    """'fires 24× per call' / 'costs 41.0 µs of 96.0 µs per call, 24×' (with --time) /
    'fired 20 times over the run, 4× per call of its region' (breakscan run)."""
    fires = f"{count(brk.fires_per_call)}×" if brk.fires_per_call is not None else "?×"
    if result.program is not None and brk.fires is not None:
        return (f"fired {brk.fires} time{'' if brk.fires == 1 else 's'} over the run, {fires} "
                "per call of its region")
    if result.ranks:
        return f"on rank(s) {', '.join(map(str, brk.ranks))}"
    t = result.timings
    if brk.cost_s_per_call is not None and t is not None and t.outside_s_per_call:
        call = f" of a {_ms(t.compiled.median_s)} call" if t.compiled else ""
        text = (f"costs {_ms(brk.cost_s_per_call)} of the {_ms(t.outside_s_per_call)} per call "
                f"spent outside compiled graphs{call}, {fires}")
        if brk.compile_cost_s:
            text += f"; its extra frames took {_ms(brk.compile_cost_s)} to compile"
        return text
    return f"fires {fires} per call"


def calls_line(result: ScanResult) -> str:
    """Which call the counts describe, and how a later call of the same model differs."""
    later = result.later_call
    text = (f"captured: the {result.captured_call}; a later call: graphs {later.graph_count}, "
            f"root-cause breaks {later.graph_break_count}")
    if later.first_only:
        text += f"; {later.first_only} break(s) on the first call only"
    if later.kept_splits:
        text += (f" ({later.kept_splits} still split the compiled code: it was compiled "
                 "around them on the first call and is reused)")
    if later.later_only:
        text += f"; {later.later_only} break(s) on later calls only (reported, not gated)"
    return text


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")  # and lone surrogates


def printable(text: str) -> str:
    """Control characters (a terminal escape in a reason or a source line) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _scrubbed(value: Any) -> Any:
    """A copy of a result with every string made printable: reporters show model-made text."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _scrubbed(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    return value


def _excerpt(brk: RootBreak, roots: list[str] | None = None) -> Syntax | Text:
    lines = source_lines(brk.file, roots)
    if not lines:
        return Text(f"{brk.line}: {brk.code}")
    start = max(1, brk.line - CONTEXT_LINES)
    end = min(len(lines), brk.line + CONTEXT_LINES)
    code = printable("".join(lines[start - 1:end]))
    return Syntax(code, "python", line_numbers=True, start_line=start,
                  highlight_lines={brk.line}, theme="ansi_dark", word_wrap=True)


def _break_panel(rank: int, brk: RootBreak, result: ScanResult) -> Panel:
    title = Text()
    title.append(f"#{rank} ", style="bold")
    title.append(brk.category, style="bold magenta")
    title.append(f"  {brk.gb_id or '-'}  {display_path(brk.file)}:{brk.line}")
    title.append(f"  in {brk.function}()" if brk.function else "")
    body: list = []
    meta = Text()
    meta.append("owner ", style="dim")
    meta.append(brk.owner, style="yellow" if brk.owner != "user" else "green")
    meta.append("  Dynamo: ", style="dim")
    meta.append(brk.gb_type)
    if brk.skip_cause:
        meta.append(f"\n{brk.skip_cause}", style="bold red")
    if brk.sites:
        meta.append(("\nused at (each use breaks) " if brk.constants else
                     "\nthe value computed here is tested by the branch(es) at ") + ", ".join(
            f"line {f.line}" if f.file == brk.file else f"{display_path(f.file)}:{f.line}"
            for f in brk.sites), style="bold")
    if brk.follow_on:
        meta.append("\nalso behind " + ", ".join(
            f"the {f.function} at {display_path(f.file)}:{f.line}" for f in brk.follow_on)
            + ": Dynamo compiled it alone because this break made it skip the enclosing "
              "function, and it broke there; it goes when this break is fixed", style="bold")
    if brk.fires_per_call is not None or brk.ranks:
        meta.append(f"\n{fires_text(brk, result)}", style="bold")
    explained = f", {brk.explain_reasons} explain reason(s)" if result.explain.available else ""
    meta.append(f"\nsplits {brk.graph_splits} frame(s); {brk.records} log record(s)"
                f"{explained}", style="dim")
    body.append(meta)
    body.append(_excerpt(brk, result.source_roots))
    if len(brk.call_chain) > 1:
        chain = " → ".join(f"{f.function}() {os.path.basename(f.file)}:{f.line}"
                           for f in brk.call_chain)
        body.append(Text("call chain: ", style="dim") + Text(chain))
    said = calls_text(brk)
    if said:
        body.append(Text(said, style="bold yellow"))
    if brk.explanation:
        # The whole explanation, never cut: its later lines carry the provenance of the value a
        # branch tests, shown as one `file:line in fn: code` line per step.
        prose, steps = _explanation(brk.explanation)
        body.append(Text("why: ", style="dim") + Text(prose))
        for step in steps:
            body.append(Text(f"  ↳ {step}", style="cyan"))
    for hint in brk.hints:
        body.append(Text("hint: ", style="dim") + Text(hint))
    if brk.user_frame is not None:
        f = brk.user_frame
        body.append(Text("your line: ", style="bold yellow") + Text(
            f"{display_path(f.file)}:{f.line} in {f.function}() `{f.code}` calls into the "
            f"{brk.owner.replace('_', '-')} code that breaks: act there"))
    body.append(Text("fix: ", style="bold green") + Text(brk.suggestion))
    if brk.doc_url:
        body.append(Text(f"docs: {brk.doc_url}", style="dim"))
    return Panel(Group(*body), title=title, title_align="left", expand=True)


COMPILE_ERROR_ADVICE = (
    "The eager model runs; the compiled one raises on every call, so nothing of it runs "
    "compiled (this is not a graph break: no frame falls back to eager). Change this line so "
    "Dynamo can trace it (the explanation says what it could not do), or keep the function "
    "that holds it out of the compiled region with `torch.compiler.disable`. Reproduce with "
    "`torch.compile(model, backend=\"eager\")(...)`.")


def _compile_error_panel(error: Any) -> Panel:
    title = Text("torch.compile fails", style="bold red")
    if error.file:
        title.append(f"  {display_path(error.file)}:{error.line}")
    body: list = [Text(f"{error.exception}: {error.message}", style="bold")]
    if error.file and error.line:
        body.append(_excerpt(RootBreak(
            owner=error.owner, category="", gb_id=None, gb_type="", file=error.file,
            line=error.line, code=error.code, function="", call_chain=[], explanation="",
            hints=[], suggestion="", doc_url=None, records=0, explain_reasons=0,
            resume_functions=[])))
    if len(error.call_chain) > 1:
        body.append(Text("call chain: ", style="dim") + Text(" → ".join(
            f"{f.function}() {os.path.basename(f.file)}:{f.line}" for f in error.call_chain)))
    if error.explanation:
        body.append(Text("why: ", style="dim") + Text(error.explanation))
    body.append(Text("fix: ", style="bold green") + Text(COMPILE_ERROR_ADVICE))
    return Panel(Group(*body), title=title, title_align="left", expand=True)


def _explanation(text: str) -> tuple[str, list[str]]:
    """Dynamo's explanation as prose plus the provenance steps (``file:line in fn: code``)."""
    prose: list[str] = []
    steps: list[str] = []
    after_step = False
    for line in text.splitlines():
        frame = provenance_frame(line)
        if frame:
            step = f"{os.path.basename(frame.file)}:{frame.line} in {frame.function}: {frame.code}"
            if not steps or steps[-1] != step:
                steps.append(step)
            after_step = True
        elif after_step:
            continue  # the FX node Dynamo printed under a step (e.g. `x = wrapped_lcm(4, 4)`)
        else:
            prose.append(line.strip())
    return " ".join(p for p in prose if p), steps


def _action_table(result: ScanResult) -> Table:
    table = _Table(title="Fix these first", title_justify="left", expand=True, show_lines=False)
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("category", no_wrap=True)
    table.add_column("where", overflow="fold", min_width=12)
    table.add_column("ranks" if result.ranks else "fires", justify="right",
                     no_wrap=True)  # per model call, at run time (trace: where it appears)
    timed = any(b.cost_s_per_call is not None for b in result.breaks)
    if timed:  # what ranks them now; the splits stay in each break's panel
        table.add_column("cost", justify="right", no_wrap=True)
    else:
        table.add_column("splits", justify="right", no_wrap=True)
    table.add_column("source", overflow="ellipsis", no_wrap=True, ratio=1, min_width=12)
    for rank, brk in enumerate(result.breaks, 1):
        mark = {"first_only": " (1st call)", "later_only": " (later)"}.get(brk.calls, "")
        fires = f"{count(brk.fires_per_call)}×" if brk.fires_per_call is not None else "-"
        if brk.fires is not None and result.program is not None:
            fires = f"{brk.fires} ({fires})"
        elif brk.ranks:
            fires = ",".join(map(str, brk.ranks))
        last = (_ms(brk.cost_s_per_call) if brk.cost_s_per_call is not None else "-") \
            if timed else str(brk.graph_splits)
        table.add_row(str(rank), brk.category + mark, f"{display_path(brk.file)}:{brk.line}",
                      fires, last, brk.code)
    return table


def _render_recompiles(result: ScanResult, console: Console) -> None:
    report = result.recompiles
    sets = " | ".join(" ".join("x".join(map(str, shape)) for shape in shapes)
                      for shapes in report.input_sets)
    over = "during the run" if result.program is not None or result.ranks else \
        f"over {len(report.input_sets)} input sets ({sets})"
    console.print(Text(f"Recompiles {over}: {len(report.recompiles)} recompile(s), "
                       f"{report.graph_count} graph(s)", style="bold"))
    for rec in report.recompiles:
        which = f" (input set {rec.input_set})" if rec.input_set is not None else \
            (f" (rank {rec.rank})" if rec.rank is not None else "")
        console.print(Text(f"  {rec.function}() {display_path(rec.file)}:{rec.line}{which}",
                           style="magenta"))
        if rec.called_from:
            chain = " → ".join(f"{display_path(f.file)}:{f.line} in {f.function}"
                               for f in rec.called_from)
            console.print(Text(f"    called from {chain}", style="dim"))
        for reason in rec.reasons:
            console.print(Text(f"    guard failed: {reason.split('  #')[0]}"))
        for loc in rec.guard_lines:
            console.print(Text(f"    guard set by {display_path(loc)}", style="dim"))
    if report.dynamic_recompile_count is not None:
        over = (f" (over the {report.dynamic_replayed} sets without a size 0/1)"
                if report.dynamic_replayed else "")
        console.print(Text(f"  with dynamic=True{over}: {report.dynamic_recompile_count} recompile(s), "
                           f"{report.dynamic_graph_count} graph(s)", style="dim"))
    if report.limit_hits:
        console.print(Text(f"  recompile limit hit: {', '.join(report.limit_hits)} fell back "
                           "to eager", style="bold red"))
    if report.suggestion:
        console.print(Text("  fix: ", style="bold green") + Text(report.suggestion))


def _ms(seconds: float | None) -> str:
    """A duration in the unit that reads best: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def noise_note(t: Any) -> str:
    """Why a noisy timing is flagged, and what makes it steadier (terminal and HTML)."""
    load = f"; load average {t.load_average:g} on {os.cpu_count()} CPU(s)" \
        if t.load_average is not None else ""
    return (f"noisy: {', '.join(t.noisy)}: the spread stayed above 10 % of the median for the "
            f"whole time budget{load}; these numbers may move between runs. For steadier ones: "
            "a quiet machine, --threads 1, a longer --max-run-time.")


def _render_timings(result: ScanResult, console: Console) -> None:
    t = result.timings
    mode = f", mode={t.mode}" if t.mode else ""
    console.print(Text(f"Timings on {t.device} ({t.threads} thread(s), backend={t.backend}{mode};"
                       " median ± IQR)", style="bold"))
    table = _Table(expand=False, show_edge=False, box=None, padding=(0, 2, 0, 2))
    for column in ("", "latency", "spread", "runs", "compile", "speedup"):
        table.add_column(column, justify="right" if column else "left")
    rows = [("eager", t.eager, None, 1.0), ("torch.compile", t.compiled, t.compile_s, t.speedup),
            ("fullgraph=True", t.fullgraph, t.fullgraph_compile_s,
             t.eager.median_s / t.fullgraph.median_s if t.eager and t.fullgraph else None)]
    for name, timing, compile_s, speedup in rows:
        if timing is None:
            continue
        spread = f"± {_ms(timing.iqr_s)}" + (" noisy" if timing.noisy else "")
        table.add_row(name, _ms(timing.median_s), spread, str(timing.runs),
                      _ms(compile_s) if compile_s is not None else "-",
                      f"{speedup:.2f}x" if speedup else "-")
    console.print(table)
    if t.noisy:
        console.print(Text(f"  {noise_note(t)}", style="yellow"))
    if t.compile_error:
        console.print(Text(f"  torch.compile failed: {t.compile_error}", style="bold red"))
    if t.fullgraph_error:
        console.print(Text(f"  fullgraph=True did not compile: {t.fullgraph_error}",
                           style="yellow"))
    if t.outside_share is not None:
        console.print(Text(f"  {t.outside_share:.0%} of each compiled call is spent outside "
                           f"compiled graphs: {_ms(t.outside_s_per_call)} of "
                           f"{_ms(t.compiled.median_s)}, {_ms(t.graph_s_per_call)} inside "
                           "(profiled share; the profiler's overhead counts as outside, so read it "
                           "as an upper bound)"))
    c = t.correctness
    if c is not None:
        if c.match:
            extra = f"; {c.message}" if c.message else ""
            console.print(Text(f"  outputs match eager (max abs error {c.max_abs_error:.2e}, "
                               f"max rel error {c.max_rel_error:.2e}{extra})", style="green"))
        else:
            console.print(Text(f"  OUTPUTS DIFFER FROM EAGER: {c.message}", style="bold red"))
    for note in t.notes:
        console.print(Text(f"  note: {note}", style="dim"))


def _arrow(before: Any, after: Any, fmt: Callable[[Any], str] = str) -> str:
    show = lambda v: "-" if v is None else fmt(v)  # noqa: E731
    return f"{show(before)} → {show(after)}"


def fix_numbers(fix: Fix) -> str:
    """'graphs 2 → 1 · graph calls per call 48 → 1 · breaks 1 → 0 · recompiles …'."""
    b, a = fix.before, fix.after
    if b is None or a is None:
        return ""
    parts = [f"graphs {_arrow(b.graph_count, a.graph_count)}"]
    if b.graph_calls_per_call is not None or a.graph_calls_per_call is not None:
        parts.append(f"graph calls per call "
                     f"{_arrow(b.graph_calls_per_call, a.graph_calls_per_call, count)}")
    parts.append(f"breaks {_arrow(b.breaks, a.breaks)}")
    if b.recompiles is not None or a.recompiles is not None:
        parts.append(f"recompiles {_arrow(b.recompiles, a.recompiles)}")
    return " · ".join(parts)


def _ratio(value: float) -> str:
    return f"{value:.2f}×"


def bound(value: float) -> str:
    """An interval bound with the digits it needs to show which side of 1 it is on: 1.003, not
    1.00 (which would read as an interval that includes 1 under a 'faster' verdict)."""
    for digits in (2, 3, 4):
        text = f"{value:.{digits}f}"
        if float(text) != 1.0 or value == 1.0:
            return text
    return f"{value:.5f}"


def speed_line(fix: Fix) -> str:
    """A verified fix's same-process timing (see :func:`ab_line`)."""
    return ab_line(fix.ab) if fix.ab is not None else ""


def ab_line(ab: Any) -> str:
    """A same-process A/B as one line whose verdict matches its numbers.

    'compiled 812.3 µs [801.0–820.1] → 120.4 µs [118.9–121.7] · 6.75× faster (95 % CI
    6.60–6.90×) · 20 interleaved block pairs, 1 thread'.
    """

    def latency(iv: Any) -> str:
        return f"{_ms(iv.value)} [{_ms(iv.low)}–{_ms(iv.high)}]"

    s = ab.speedup
    if ab.verdict == "faster":
        verdict = f"{_ratio(s.value)} faster (95 % CI {bound(s.low)}–{bound(s.high)}×)"
    elif ab.verdict == "slower":  # the same interval, read as a slowdown
        verdict = (f"{_ratio(1 / s.value)} SLOWER (95 % CI {bound(1 / s.high)}–"
                   f"{bound(1 / s.low)}×)")
    else:
        verdict = (f"no measurable difference ({_ratio(s.value)}, 95 % CI "
                   f"{bound(s.low)}–{bound(s.high)}× includes 1)")
    noisy = " · noisy: the block times spread over 10 % of their median" if ab.noisy else ""
    return (f"compiled {latency(ab.original)} → {latency(ab.fixed)} · {verdict} · "
            f"{ab.blocks} interleaved block pairs of {ab.calls_per_block} call(s), "
            f"{ab.threads} thread(s), same process{noisy}")


FIX_STYLE = {"verified": "bold green", "breaks compilation": "bold red",
             "makes it worse": "bold red", "changes outputs": "bold red", "not tried": "dim"}


def _render_fixes(result: ScanResult, console: Console) -> None:
    console.print(Text("Fixes (each verified in a fresh process: same weights and inputs, "
                       "rescanned, run eager and compiled; a verified fix is timed against the "
                       "original in that process, interleaved)", style="bold"))
    for fix in result.fixes:
        where = f"  {display_path(fix.file)}:{fix.line}" if fix.file else ""
        head = Text(f"  {fix.status.upper()}", style=FIX_STYLE.get(fix.status, "bold yellow"))
        title = "" if fix.title == fix.fix_id else f": {fix.title}"  # never the id twice
        head.append(f"  {fix.rule} {fix.fix_id}{where}{title}")
        console.print(head)
        numbers = fix_numbers(fix)
        if numbers:
            match = "" if fix.outputs_match is None else (
                " · outputs match" if fix.outputs_match else " · OUTPUTS DIFFER")
            console.print(Text(f"    {numbers}{match}", style="green" if fix.verified else ""))
        speed = speed_line(fix)
        if speed:
            style = {"faster": "green", "slower": "bold yellow"}.get(fix.ab.verdict, "")
            console.print(Text(f"    {speed}", style=style))
        if fix.reason:
            console.print(Text(f"    {fix.reason}", style="yellow"))
        if fix.setting and fix.kind in ("setting", "switch", "constants"):
            console.print(Padding(Text(fix.setting, style="cyan"), (0, 0, 0, 4)))
        if fix.diff:
            console.print(Padding(Syntax(fix.diff.rstrip("\n"), "diff", theme="ansi_dark",
                                         word_wrap=True), (0, 0, 0, 4)))
        if fix.written:
            console.print(Text(f"    written to {display_path(fix.file)} (backup "
                               f"{display_path(fix.backup)})", style="bold green"))
    for line in result.unfixed:
        console.print(Text(f"  {line}", style="yellow"))


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


def stages_line(result: ScanResult) -> str:
    """Where the scan's time went, stage by stage (--verbose)."""
    total = sum(result.stages.values())
    parts = " · ".join(f"{name} {seconds:.2f}s" for name, seconds in result.stages.items())
    return f"scan time {total:.2f}s: {parts}"


def render(result: ScanResult, console: Console, *, quiet: bool = False,
           verbose: bool = False) -> None:
    result = _scrubbed(result)
    if result.partial:
        console.print(Text(f"PARTIAL REPORT: the scan stopped during {result.stopped_at}; only "
                           "the stages before it are shown", style="bold red"))
    console.print(summary_line(result))
    if quiet:
        return
    inputs = ", ".join(f"{i.name}: {i.dtype}{i.shape}" if i.kind == "tensor" else
                       f"{i.name}: {i.kind}" for i in result.inputs)
    if result.program is None and not result.ranks:
        console.print(Text(f"torch {result.torch_version} · {result.device} · {result.method}"
                           f"({inputs}) · capture {result.capture_seconds:.2f}s", style="dim"))
    elif result.ranks:
        console.print(Text(f"torch {result.torch_version} · read from the job's TORCH_TRACE "
                           "files", style="dim"))
        for line in result.rank_differences:
            console.print(Text(f"differs between ranks: {line}", style="bold red"))
        console.print(ranks_table(result))
    else:
        console.print(Text(f"torch {result.torch_version} · every compile and compiled call "
                           "of the run", style="dim"))
        if result.program.error:
            console.print(Text(f"the program raised {result.program.error}", style="bold red"))
        if result.program.regions:
            console.print(regions_table(result.program))
    if result.compile_settings:
        console.print(Text(settings_text(result), style="dim"))
    if verbose and result.stages:
        console.print(Text(stages_line(result), style="dim"))
    if result.explain.available:
        e = result.explain
        console.print(Text(f"torch._dynamo.explain: graphs {e.graph_count}, graph_break_count "
                           f"{e.graph_break_count}, op_count {e.op_count}", style="dim"))
    if result.later_call is not None:
        console.print(Text(calls_line(result), style="dim"))
    if result.summary.runtime_calls and result.program is None:
        console.print(Text(runtime_line(result), style="dim"))
    if result.compile_error is not None:
        console.print(_compile_error_panel(result.compile_error))
    if not result.breaks:
        if result.compile_error is None:
            console.print(Text("No graph breaks: Dynamo captured every frame it saw.",
                               style="bold green"))
    else:
        console.print(_action_table(result))
        for rank, brk in enumerate(result.breaks, 1):
            console.print(_break_panel(rank, brk, result))
    others = [f for f in result.static if f.status != "break"]
    if others:
        console.print(Text("Also in the source (static lint of the scanned class)", style="bold"))
        render_static(others, console)
    if result.recompiles is not None:
        _render_recompiles(result, console)
    if result.timings is not None:
        _render_timings(result, console)
    if result.fixes or result.unfixed:
        _render_fixes(result, console)
    if result.discrepancies:
        console.print(Text("Where explain and breakscan differ", style="bold"))
        for gap in result.discrepancies:
            console.print(Padding(Text(f"{gap.topic}: explain {gap.explain}, breakscan "
                                       f"{gap.breakscan} — {gap.reason}"), (0, 0, 0, 2)))
    for note in result.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    if verbose:
        if result.model_output:
            console.print(Text("the program's output:" if result.program else
                               "model output during the scan:", style="dim"))
            console.print(Text(result.model_output.rstrip()))
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
                                      f"{c.name} {c.actual} > limit {c.limit}"
                                      for c in gate.failed()), style="red")
    for improvement in gate.improvements:
        text.append(f"\n  improved: {improvement}", style="green")
    return text


def render_runs(runs: list[ModelRun], console: Console, *, quiet: bool = False,
                verbose: bool = False) -> None:
    """One or many models; with several, a closing table lists each."""
    for run in runs:
        if run.error is not None:
            run = dataclasses.replace(run, error=printable(run.error))
        if run.result is None:
            console.print(Text(f"{run.target}\nERROR (exit {run.exit_code}): {run.error}",
                               style="bold red"))
            continue
        render(run.result, console, quiet=quiet, verbose=verbose)
        if run.cached:
            console.print(Text("cached: no file, input or setting it depends on changed since "
                               "this result was stored (--no-cache scans again)", style="dim"))
        if run.error is not None:
            if len(runs) > 1:
                console.print(Text(f"ERROR (exit {run.exit_code}): {run.error}", style="bold red"))
            continue
        line = gate_line(run.result)
        if line is not None:
            for failed in run.result.gate.failed():
                if failed.detail and not quiet:
                    console.print(Text(f"  {failed.name}: {failed.detail}", style="red"))
            console.print(line)
    if len(runs) > 1:
        table = _Table(title="breakscan check", title_justify="left")
        for column in ("model", "result", "graphs", "breaks", "recompiles"):
            table.add_column(column, overflow="fold")
        for run in runs:
            if run.result is None or run.error is not None:
                table.add_row(run.target, Text(f"error (exit {run.exit_code})", style="bold red"),
                              "", "", "")
                continue
            s, gate = run.result.summary, run.result.gate
            status = Text("no gate") if gate is None else (
                Text("PASS", style="green") if gate.passed else Text("FAIL", style="bold red"))
            if run.cached:
                status.append(" (cached)", style="dim")
            varied = run.result.recompiles is not None  # "-": never called with other inputs
            table.add_row(run.target, status, str(s.graph_count), str(s.graph_break_count),
                          str(s.recompile_count) if varied else "-")
        console.print(table)


def render_comparison(comparison: Comparison, console: Console) -> None:
    """A and B side by side: counts, recompiles, latency, speedup; then the outputs verdict."""
    console.print(Text(f"A = {printable(comparison.a.target)}\nB = {printable(comparison.b.target)}"))
    table = _Table(title="breakscan compare", title_justify="left")
    table.add_column("", no_wrap=True)
    for label, run in (("A", comparison.a), ("B", comparison.b)):
        name = run.target.rpartition(":")[2]
        table.add_column(f"{label}: {printable(name)}", overflow="fold", justify="right")
    a, b = comparison.a.result, comparison.b.result

    def timing(result: ScanResult | None, name: str) -> str:
        t = result.timings if result else None
        value = getattr(t, name, None) if t else None
        return f"{_ms(value.median_s)} ± {_ms(value.iqr_s)}" if value else "-"

    def total(result: ScanResult | None, name: str) -> str:
        return str(getattr(result.summary, name)) if result else "error"

    table.add_row("graphs", total(a, "graph_count"), total(b, "graph_count"))
    table.add_row("root-cause breaks", total(a, "graph_break_count"),
                  total(b, "graph_break_count"))
    table.add_row("break records", total(a, "break_records"), total(b, "break_records"))
    table.add_row("frames skipped", total(a, "frames_skipped"), total(b, "frames_skipped"))
    if (a and a.recompiles) or (b and b.recompiles):
        table.add_row("recompiles", total(a, "recompile_count"), total(b, "recompile_count"))
    if a and b and a.summary.runtime_calls and b.summary.runtime_calls:
        table.add_row("graph calls per call", count(a.summary.graph_calls_per_call),
                      count(b.summary.graph_calls_per_call))
        table.add_row("returns to Python per call", count(a.summary.eager_gaps_per_call),
                      count(b.summary.eager_gaps_per_call))
    table.add_row("eager", timing(a, "eager"), timing(b, "eager"))
    table.add_row("compiled", timing(a, "compiled"), timing(b, "compiled"))
    speed = [f"{r.timings.speedup:.2f}x" if r and r.timings and r.timings.speedup else "-"
             for r in (a, b)]
    table.add_row("speedup vs its eager", *speed)
    console.print(table)
    t = a.timings if a else None
    if t:
        console.print(Text(f"timings: {t.device}, {t.threads} thread(s), backend={t.backend}; "
                           "median ± IQR per call, each column in its own process", style="dim"))
    if comparison.ab is not None:
        style = {"faster": "green", "slower": "bold yellow"}.get(comparison.ab.verdict, "")
        console.print(Text(f"A → B, compiled, in one process: {ab_line(comparison.ab)}",
                           style=style))
    out = comparison.outputs
    if out is None:
        console.print(Text(printable(comparison.note or "outputs not compared"), style="yellow"))
    elif out.match:
        console.print(Text(f"outputs: B matches A (max abs error {out.max_abs_error:.2e}"
                           f"{', same weights' if comparison.weights_shared else ''})",
                           style="green"))
    else:
        console.print(Text(f"outputs: B DIFFERS from A: {printable(out.message or '')}",
                           style="bold yellow"))
    if comparison.note and out is not None:
        console.print(Text(printable(comparison.note), style="dim"))
    for run in (comparison.a, comparison.b):
        if run.error:
            console.print(Text(f"{printable(run.target)}: {printable(run.error)}",
                               style="bold red"))


def render_rule_list(rules: tuple[Rule, ...], console: Console) -> None:
    table = _Table(title="breakscan rules (breakscan rules ID explains one)",
                  title_justify="left")
    for column in ("id", "name", "title", "Dynamo ids", "fixes"):
        # Ids, names and fix ids are never cut (`capture_scalar_outp|uts`): one fix per line;
        # the title and the registry ids wrap at spaces in what is left.
        table.add_column(column, no_wrap=column in ("id", "name", "fixes"),
                         ratio=1 if column in ("title", "Dynamo ids") else None)
    for rule in rules:
        table.add_row(rule.id, rule.name, rule.title, ", ".join(rule.gb_ids) or "-",
                      "\n".join(rule.fixes) or "-")
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
    if rule.fixes:
        console.print(Text("verified fixes (--fix): " + ", ".join(rule.fixes), style="cyan"))
    if rule.gb_ids:
        console.print(Text("registry: " + REGISTRY_URL.format(id=rule.gb_ids[0].lower()),
                           style="dim"))
