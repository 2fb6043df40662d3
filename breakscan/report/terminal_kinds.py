"""The terminal report's part that differs by kind of result (:attr:`ScanResult.kind`): a
model's inputs line, a program's run and compiled-regions table (``breakscan run``), a trace's
per-rank table (``breakscan trace``)."""

from __future__ import annotations

import os

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..frames import display_path
from ..model.result import ProgramReport, ScanResult
from ..model.result import whole as count
from .literal import LiteralTable
from .locations import libraries
from .wording import plural


def program_line(program: ProgramReport) -> str:
    """'exit 0 · 2 compiled regions · ran 4.10 s' (and how it ended when it did not)."""
    ended = "did not finish" if program.exit_code is None else f"exit {program.exit_code}"
    regions = plural(len(program.regions), "compiled region")
    backend = " · --capture-only (eager backend)" if program.capture_only else ""
    return f"program: {ended} · {regions} · ran {program.seconds:.2f} s{backend}"


def regions_table(program: ProgramReport) -> Table:
    """One row per compiled region: what the program called and what that ran."""
    table = LiteralTable(title="Compiled regions (counted over the whole run; per call in "
                         "brackets)", title_justify="left", expand=False)
    table.add_column("region", no_wrap=True)
    table.add_column("compiled at", no_wrap=True)
    kernels = any(r.kernels_per_call is not None for r in program.regions)  # --kernels
    for name in ("calls", "graph calls", "returns to Python", "frames run eagerly") + \
            (("kernels",) if kernels else ()):
        table.add_column(name, justify="right")
    for r in program.regions:
        def both(total: int, per: float | None) -> str:
            return f"{total}" + (f" ({count(per)})" if per is not None and r.calls else "")

        where = f"{display_path(r.compiled_at.file)}:{r.compiled_at.line}" \
            if r.compiled_at else "-"
        table.add_row(r.name + ("()" if r.kind == "function" else ""), where, str(r.calls),
                      both(r.graph_calls, r.graph_calls_per_call),
                      both(r.eager_gaps, r.eager_gaps_per_call),
                      both(r.frames_run_eagerly, r.frames_run_eagerly_per_call),
                      *([both(round(r.kernels_per_call * r.calls), r.kernels_per_call)
                         if r.kernels_per_call is not None else "-"] if kernels else []))
    return table


def ranks_table(result: ScanResult) -> Table:
    """``breakscan trace``: one row per rank."""
    table = LiteralTable(title="Ranks", title_justify="left", expand=False)
    for name in ("rank", "graphs", "breaks", "recompiles", "frames skipped", "compile s",
                 "records"):
        table.add_column(name, justify="right")
    for r in result.ranks:
        cut = f" ({r.truncated} cut short)" if r.truncated else ""
        table.add_row(str(r.rank) if r.rank is not None else os.path.basename(r.file),
                      str(r.graphs), str(r.breaks), str(r.recompiles),
                      str(r.frames_skipped), f"{r.compile_s:.2f}", f"{r.records}{cut}")
    return table


def print_what_ran(result: ScanResult, console: Console) -> None:
    """The line under the summary: the model and its inputs, the trace's ranks, or the
    program's run and regions."""
    if result.kind == "model":
        inputs = ", ".join(f"{i.name}: {i.dtype}{i.shape}" if i.kind == "tensor" else
                           f"{i.name}: {i.kind}" for i in result.inputs)
        mode = "train" if result.training else "eval, no_grad"  # the breaks can differ by mode
        libs = libraries(result)  # its paths are shown from each package's top module
        console.print(Text(f"torch {result.torch_version}{' · ' + libs if libs else ''} · "
                           f"{result.device} · {mode} · {result.method}({inputs}) · capture "
                           f"{result.capture_seconds:.2f}s", style="dim"))
    elif result.kind == "trace":
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
