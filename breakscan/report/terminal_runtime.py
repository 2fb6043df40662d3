"""The terminal report's run-time sections: the recompiles (which guard failed, where it was
set, what dynamic=True changes) and the timings (eager vs compiled vs fullgraph, the share spent
outside compiled graphs, whether the outputs match)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..frames import display_path
from ..model.result import ScanResult
from ..model.stats import ratio
from .literal import LiteralTable
from .wording import ms, noise_note, random_note


def print_recompiles(result: ScanResult, console: Console) -> None:
    report = result.recompiles
    sets = " | ".join(" ".join("x".join(map(str, shape)) for shape in shapes)
                      for shapes in report.input_sets)
    over = "during the run" if result.kind != "model" else \
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
        if rec.reasons:  # newest compiled version first; each earlier one failed too
            console.print(Text(f"    guard failed: {rec.reasons[0].split('  #')[0].strip()}"))
        if len(rec.reasons) > 1:
            console.print(Text(f"    (and the guards of the {len(rec.reasons) - 1} earlier "
                               "compiled version(s))", style="dim"))
        for loc in rec.guard_lines:
            console.print(Text(f"    guard set by {display_path(loc)}", style="dim"))
    if report.dynamic_recompile_count is not None:
        over = (f" (over the {report.dynamic_replayed} sets without a size 0/1)"
                if report.dynamic_replayed else "")
        console.print(Text(f"  with dynamic=True{over}: {report.dynamic_recompile_count} "
                           f"recompile(s), {report.dynamic_graph_count} graph(s)", style="dim"))
    if report.limit_hits:
        console.print(Text(f"  recompile limit hit: {', '.join(report.limit_hits)} fell back "
                           "to eager", style="bold red"))
    if report.suggestion:
        console.print(Text("  fix: ", style="bold green") + Text(report.suggestion))


def print_timings(result: ScanResult, console: Console) -> None:
    t = result.timings
    mode = f", mode={t.mode}" if t.mode else ""
    console.print(Text(f"Timings on {t.device} ({t.threads} thread(s), backend={t.backend}{mode};"
                       " median ± IQR)", style="bold"))
    console.print(_timings_table(result))
    if t.noisy:
        console.print(Text(f"  {noise_note(t)}", style="yellow"))
    if t.compile_error:
        console.print(Text(f"  torch.compile failed: {t.compile_error}", style="bold red"))
    if t.fullgraph_error:
        console.print(Text(f"  fullgraph=True failed: {t.fullgraph_error}",
                           style="yellow"))
    if t.outside_share is not None:
        console.print(Text(f"  {t.outside_share:.0%} of each compiled call is spent outside "
                           f"compiled graphs: {ms(t.outside_s_per_call)} of "
                           f"{ms(t.compiled.median_s)}, {ms(t.graph_s_per_call)} inside "
                           "(profiled share; the profiler's overhead counts as outside, so read it "
                           "as an upper bound)"))
    c = t.correctness
    if c is not None:
        if c.match:
            extra = f"; {c.message}" if c.message else ""
            scaled = f"largest difference {c.scaled_error:.2e} of their magnitude, " \
                if c.scaled_error is not None else ""
            console.print(Text(f"  outputs match eager ({scaled}max abs error "
                               f"{c.max_abs_error:.2e}{extra})", style="green"))
        else:
            console.print(Text(f"  OUTPUTS DIFFER FROM EAGER: {c.message}", style="bold red"))
    if t.random_comparable:
        console.print(Text(f"  {random_note(t)}", style="dim"))
    for note in t.notes:
        console.print(Text(f"  note: {note}", style="dim"))


def _timings_table(result: ScanResult) -> LiteralTable:
    """Eager, torch.compile and fullgraph=True: latency, spread, runs, compile time, speedup."""
    t = result.timings
    table = LiteralTable(expand=False, show_edge=False, box=None, padding=(0, 2, 0, 2))
    for column in ("", "latency", "spread", "runs", "compile", "speedup"):
        table.add_column(column, justify="right" if column else "left")
    rows = [("eager", t.eager, None, 1.0), ("torch.compile", t.compiled, t.compile_s, t.speedup),
            ("fullgraph=True", t.fullgraph, t.fullgraph_compile_s,
             ratio(t.eager, t.fullgraph, "fullgraph=True")[0])]
    for name, timing, compile_s, speedup in rows:
        if timing is None:
            continue
        spread = f"± {ms(timing.iqr_s)}" + (" noisy" if timing.noisy else "")
        table.add_row(name, ms(timing.median_s), spread, str(timing.runs),
                      ms(compile_s) if compile_s is not None else "-",
                      f"{speedup:.2f}x" if speedup is not None else "not measured")
    return table
