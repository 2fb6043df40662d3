"""The terminal report's ``--kernels`` section: per graph, ops → kernels (fused, extern,
fallback), a short table of the kernels with the user's lines, where fusion stopped, and the
kernel rules (BS2xx) found, each with its advice."""

from __future__ import annotations

import os

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from ..analysis.kernels import actionable_stops
from ..frames import display_path
from ..records import GraphInfo, GraphKernels
from ..result import ScanResult
from ..rules import rule_for
from .literal import LiteralTable
from .wording import kernels_line, plural

MAX_LINES = 3  # user lines shown per kernel


def _lines(locations: list[str]) -> str:
    """``model.py:44, 46, 47``: the line numbers are what a narrow table must keep, so each file
    is named once by its file name (its path where two files share a name; the findings below
    and the JSON give full paths)."""
    by_file: dict[str, list[str]] = {}
    for loc in locations[:MAX_LINES]:
        file, _, line = loc.rpartition(":")
        if file and line.isdigit():
            by_file.setdefault(file, []).append(line)
        else:
            by_file.setdefault(loc, [])
    names = [os.path.basename(f) for f in by_file]
    shown = [f"{os.path.basename(f) if names.count(os.path.basename(f)) == 1 else display_path(f)}"
             + (f":{', '.join(lines)}" if lines else "") for f, lines in by_file.items()]
    more = len(locations) - MAX_LINES
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def _short(op: str) -> str:
    """``aten.sort.stable`` -> ``sort``, ``extern_kernels.addmm`` -> ``addmm``."""
    parts = op.split(".")
    if parts[0] in ("aten", "prims") and len(parts) > 1:
        return parts[1]
    return parts[-1]


def _table(graph: GraphKernels) -> LiteralTable:
    table = LiteralTable("kernel", "kind", "ops", "your lines", box=None, padding=(0, 1))
    for kernel in graph.kernels:
        kind = kernel.kind if kernel.op is None else \
            f"{kernel.kind} {_short(kernel.op)}"
        ops = ", ".join(dict.fromkeys(_short(op) for op in kernel.aten_ops))
        table.add_row(kernel.name, kind, ops, _lines(kernel.lines))
    return table


def _graph(info: GraphInfo, console: Console) -> None:
    found = info.inductor
    assert found is not None
    console.print(Text(f"  graph {info.index + 1}: {kernels_line(info)}"))
    if found.error is not None:
        console.print(Text(f"    Inductor failed on this graph: {found.error}", style="red"))
        return
    console.print(Padding(_table(found), (0, 0, 0, 4)))
    for stop in actionable_stops(found):
        console.print(Text(f"    fusion stopped at a {stop.kind}: {_lines(stop.first_lines)} ↛ "
                           f"{_lines(stop.second_lines)} ({stop.reason})", style="yellow"))


def print_kernels(result: ScanResult, console: Console) -> None:
    """What Inductor made of each graph, then the kernel rules found in them."""
    inspected = [g for g in result.graphs if g.inductor is not None]
    if not inspected:
        return
    per_call = result.summary.kernels_per_call
    launched = f", {plural(per_call, 'kernel')} launched per call" if per_call is not None else ""
    console.print(Text(f"Kernels (Inductor, compiled once per graph{launched})", style="bold"))
    for info in inspected:
        _graph(info, console)
    for finding in result.kernel_findings:
        rule = rule_for(finding.category)
        where = f"{display_path(finding.file)}:{finding.line}" if finding.file else "(no line)"
        console.print(Text(f"  {finding.rule} {rule.name} · graph {finding.graph + 1} · "
                           f"{where}", style="magenta"))
        console.print(Text(f"    {finding.message}"))
        console.print(Text(f"    fix: {rule.suggestion}", style="green"))
    console.print(Text("  each graph's IR, line by line with its kernels: --format json "
                       "(graphs[].ir)", style="dim"))
