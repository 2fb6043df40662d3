"""The top of the terminal report: the summary lines (what ``--quiet`` prints and CI logs grep)
and the context lines under them (settings, scan time, explain's counts, later calls, run-time
counts)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..frames import display_path
from ..model.result import ScanResult
from ..model.result import whole as count
from .terminal_kinds import program_line
from .wording import calls_line, runtime_line, settings_text


def summary_line(result: ScanResult) -> Text:
    """The target, the counts (what --quiet prints and CI logs grep), then what runs per call."""
    s = result.summary
    text = Text()
    text.append(f"{result.target}\n", style="bold")
    error = result.compile_error
    if error is not None:
        with_backend = f" (backend={error.backend})" if error.backend else ""
        text.append(f"torch.compile{with_backend} fails: {error.exception}: {error.message} at "
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
        if s.kernels_per_call is not None:
            text.append(f" · kernels {count(s.kernels_per_call)}")
    return text


def stages_line(result: ScanResult) -> str:
    """Where the scan's time went, stage by stage (--verbose)."""
    total = sum(result.stages.values())
    parts = " · ".join(f"{name} {seconds:.2f}s" for name, seconds in result.stages.items())
    return f"scan time {total:.2f}s: {parts}"


def print_context(result: ScanResult, console: Console, *, verbose: bool) -> None:
    """The dim lines that say how the counts were taken and what they count."""
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
    if result.summary.runtime_calls and result.kind != "program":
        console.print(Text(runtime_line(result), style="dim"))
