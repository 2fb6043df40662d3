"""The terminal report's breaks: the ranked "Fix these first" table, one panel per root-cause
break (where, why, the source around it, the fix), and the panel of a compile that fails."""

from __future__ import annotations

import functools
import os
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..frames import display_path, provenance_frame
from ..model.excerpts import shown_lines
from ..model.records import RootBreak
from ..model.result import ScanResult
from ..model.result import whole as count
from ..rules.catalogue import rule_for
from .literal import LiteralTable, printable
from .wording import (calls_text, chain_step, compile_error_advice, fires_text, hint_classes_text,
                      ms, own_hints)

CONTEXT_LINES = 2


def print_breaks(result: ScanResult, console: Console) -> None:
    """A failing compile's panel, then the breaks worst first (or that there are none)."""
    # A log without colour (a pipe, a CI job, NO_COLOR) shows the same characters unhighlighted:
    # pygments' Python lexer was a sixth of a 500-target zoo's terminal report.
    lexer = _lexer("python" if console.color_system and not console.no_color else "text")
    if result.compile_error is not None:
        console.print(_compile_error_panel(result.compile_error, result, lexer))
    if not result.breaks:
        if result.compile_error is None:
            console.print(Text("No graph breaks: Dynamo captured every frame it saw.",
                               style="bold green"))
        return
    console.print(_action_table(result))
    for rank, brk in enumerate(result.breaks, 1):
        console.print(_break_panel(rank, brk, result, lexer))


@functools.cache
def _lexer(name: str) -> Lexer:
    """One lexer per language for the whole report (pygments looks a name up anew each time),
    made as rich makes it: a leading blank line is kept (pygments' default strips it, and each
    line would be shown under the number of the one before)."""
    return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)


def _excerpt(brk: RootBreak, result: ScanResult, lexer: Lexer) -> Syntax | Text:
    lines = shown_lines(result, brk.file)
    if not lines:
        return Text(f"{brk.line}: {brk.code}")
    start = max(1, brk.line - CONTEXT_LINES)
    end = min(len(lines), brk.line + CONTEXT_LINES)
    # without its last newline: rich shows a code ending in one as one more, blank, line (line
    # 30 of a file shown empty when it holds code)
    code = printable("".join(lines[start - 1:end])).removesuffix("\n")
    return Syntax(code, lexer, line_numbers=True, start_line=start,
                  highlight_lines={brk.line}, theme="ansi_dark", word_wrap=True)


def _break_panel(rank: int, brk: RootBreak, result: ScanResult, lexer: Lexer) -> Panel:
    title = Text()
    title.append(f"#{rank} ", style="bold")
    title.append(brk.category, style="bold magenta")
    title.append(f"  {brk.gb_id or '-'}  {display_path(brk.file)}:{brk.line}")
    title.append(f"  in {brk.function}()" if brk.function else "")
    body: list = [_break_facts(brk, result), _excerpt(brk, result, lexer)]
    if len(brk.call_chain) > 1:
        body.append(Text("call chain: ", style="dim") + Text(
            " → ".join(chain_step(f) for f in brk.call_chain)))
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
    for hint in own_hints(brk):
        body.append(Text("hint: ", style="dim") + Text(hint))
    if brk.hint_classes:
        body.append(Text("Dynamo's class: ", style="dim") + Text(hint_classes_text(brk)))
    if brk.user_frame is not None:
        f = brk.user_frame
        body.append(Text("your line: ", style="bold yellow") + Text(
            f"{display_path(f.file)}:{f.line} in {f.function}() `{f.code}` calls into the "
            f"{brk.owner.replace('_', '-')} code that breaks: act there"))
    body.append(Text("fix: ", style="bold green") + Text(brk.suggestion))
    rule = rule_for(brk.root_category)
    if rule.before:
        body.append(Text(f"example: breakscan rules {rule.id} ({rule.name})", style="dim"))
    if brk.doc_url:
        body.append(Text(f"docs: {brk.doc_url}", style="dim"))
    return Panel(Group(*body), title=title, title_align="left", expand=True)


def _break_facts(brk: RootBreak, result: ScanResult) -> Text:
    """The panel's first lines: whose code, Dynamo's reason, where the value is used, what else
    it causes, how often it fires and how much it splits."""
    meta = Text()
    meta.append("owner ", style="dim")
    meta.append(brk.owner, style="yellow" if brk.owner != "user" else "green")
    meta.append("  Dynamo: ", style="dim")
    meta.append(brk.gb_type)
    if brk.skip_cause:
        meta.append(f"\n{brk.skip_cause}", style="bold red")
    if brk.sites:
        iterated = (brk.code or "").lstrip().startswith("for ")  # sizes from a tensor's rows
        meta.append(("\nused at (each use breaks) " if brk.constants else
                     "\nthe sizes taken here are used as values at " if iterated else
                     "\nthe value computed here is tested by the branch(es) at ") + ", ".join(
            f"line {f.line}" if f.file == brk.file else f"{display_path(f.file)}:{f.line}"
            for f in brk.sites), style="bold")
    if brk.follow_on:
        meta.append("\nalso behind " + ", ".join(
            f"the {f.function} at {display_path(f.file)}:{f.line}" for f in brk.follow_on)
            + ": Dynamo compiled it alone because this break made it skip the enclosing "
              "function, and it broke there; it goes when this break is fixed", style="bold")
    if brk.follow_on_records:
        meta.append("\nalso Dynamo's " + ", ".join(f"'{r}'" for r in brk.follow_on_records)
                    + " at this construct: Dynamo says it follows from an earlier break; it "
                      "goes when this break is fixed", style="bold")
    if brk.fires_per_call is not None or brk.ranks:
        meta.append(f"\n{fires_text(brk, result)}", style="bold")
    explained = f", {brk.explain_reasons} explain reason(s)" if result.explain.available else ""
    meta.append(f"\nsplits {brk.graph_splits} frame(s); {brk.records} log record(s)"
                f"{explained}", style="dim")
    return meta


def _compile_error_panel(error: Any, result: ScanResult, lexer: Lexer) -> Panel:
    with_backend = f" (backend={error.backend})" if error.backend else ""
    title = Text(f"torch.compile{with_backend} fails", style="bold red")
    if error.file:
        title.append(f"  {display_path(error.file)}:{error.line}")
    body: list = [Text(f"{error.exception}: {error.message}", style="bold")]
    if error.file and error.line:
        body.append(_excerpt(RootBreak(
            owner=error.owner, category="", gb_id=None, gb_type="", file=error.file,
            line=error.line, code=error.code, function="", call_chain=[], explanation="",
            hints=[], suggestion="", doc_url=None, records=0, explain_reasons=0,
            resume_functions=[]), result, lexer))
    if len(error.call_chain) > 1:
        body.append(Text("call chain: ", style="dim") + Text(" → ".join(
            chain_step(f) for f in error.call_chain)))
    if error.explanation:
        body.append(Text("why: ", style="dim") + Text(error.explanation))
    body.append(Text("fix: ", style="bold green") + Text(compile_error_advice(error)))
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
    table = LiteralTable(title="Fix these first", title_justify="left", expand=True,
                         show_lines=False)
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("category", no_wrap=True)
    table.add_column("where", overflow="fold", min_width=12)
    table.add_column("ranks" if result.kind == "trace" else "fires", justify="right",
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
        if brk.fires is not None and result.kind == "program":
            fires = f"{brk.fires} ({fires})"
        elif brk.ranks:
            fires = ",".join(map(str, brk.ranks))
        last = (ms(brk.cost_s_per_call) if brk.cost_s_per_call is not None else "-") \
            if timed else str(brk.graph_splits)
        table.add_row(str(rank), brk.category + mark, f"{display_path(brk.file)}:{brk.line}",
                      fires, last, brk.code)
    return table
