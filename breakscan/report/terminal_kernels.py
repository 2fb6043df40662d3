"""The terminal report's ``--kernels`` section: per graph, ops → kernels (fused, extern,
fallback), a short table of the kernels with the user's lines, where fusion stopped, and the
kernel rules (BS2xx) found, each with its advice."""

from __future__ import annotations

import os

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from ..analysis.kernels import actionable_stops
from ..frames import display_path, split_location
from ..model.records import GraphInfo, GraphKernels
from ..model.result import ScanResult
from ..rules.catalogue import rule_for
from .literal import LiteralTable
from .wording import kernels_line, plural

MAX_LINES = 3  # user lines shown per kernel


def _tails(files: list[str]) -> dict[str, str]:
    """Each file by the shortest end of its path no other file here ends with: ``model.py``, or
    ``…/a/model.py`` beside ``…/b/model.py`` (a narrow column keeps the name, cut from the
    left; the findings below and the JSON give full paths)."""
    parts = {f: display_path(f).split(os.sep) for f in dict.fromkeys(files)}
    tails = {}
    for file, mine in parts.items():
        for k in range(1, len(mine) + 1):
            if not any(other[-k:] == mine[-k:] for f, other in parts.items() if f != file):
                break
        tails[file] = os.sep.join(mine[-k:]) if k == 1 or k == len(mine) else \
            "…" + os.sep + os.sep.join(mine[-k:])
    return tails


def _grouped(locations: list[str]) -> dict[str, list[str]]:
    """``file:line`` strings as {file: [lines]}, in order (a location without a line: no
    lines)."""
    by_file: dict[str, list[str]] = {}
    for loc in locations:
        split = split_location(loc)
        if split is None:
            by_file.setdefault(loc, [])
        else:
            by_file.setdefault(split[0], []).append(str(split[1]))
    return by_file


def _lines(locations: list[str], tails: dict[str, str] | None = None, sep: str = ", ") -> str:
    """``model.py:44, 46, 47 (+2)``: each file named once, by its :func:`_tails` (``tails``:
    computed over a whole table, so one name means one file everywhere in it); ``sep`` between
    the files."""
    by_file = _grouped(locations[:MAX_LINES])
    tails = tails or _tails(list(by_file))
    shown = [tails.get(f, f) + (f":{', '.join(lines)}" if lines else "")
             for f, lines in by_file.items()]
    more = len(locations) - MAX_LINES
    return sep.join(shown) + (f" (+{more})" if more > 0 else "")


def _short(op: str) -> str:
    """``aten.sort.stable`` -> ``sort``, ``extern_kernels.addmm`` -> ``addmm``."""
    parts = op.split(".")
    if parts[0] in ("aten", "prims") and len(parts) > 1:
        return parts[1]
    return parts[-1]


def _table(graph: GraphKernels, tails: dict[str, str], width: int) -> LiteralTable:
    """The kernels, with the user's lines: the column a narrow terminal must not cut. It is
    never narrower than its widest ``name.py:line,`` (a file a line, wrapped between line
    numbers; at most a third of ``width`` beyond that): the kernel names and ops give way."""
    cells = [_lines(kernel.lines, tails, sep="\n") for kernel in graph.kernels]
    words = max((len(word) for cell in cells for word in cell.split()), default=0)
    lines = max((len(line) for cell in cells for line in cell.splitlines()), default=0)
    table = LiteralTable("kernel", "kind", "ops", box=None, padding=(0, 1))
    table.add_column("your lines", width=max(len("your lines"), min(lines, max(words, width // 3))))
    for kernel, cell in zip(graph.kernels, cells):
        kind = kernel.kind if kernel.op is None else \
            f"{kernel.kind} {_short(kernel.op)}"
        ops = ", ".join(dict.fromkeys(_short(op) for op in kernel.aten_ops))
        table.add_row(kernel.name, kind, ops, cell)
    return table


def _graph(info: GraphInfo, console: Console) -> None:
    found = info.inductor
    assert found is not None
    console.print(Text(f"  graph {info.index + 1}: {kernels_line(info)}"))
    if found.error is not None:
        console.print(Text(f"    Inductor failed on this graph: {found.error}", style="red"))
        return
    stops = actionable_stops(found)
    tails = _tails(list(_grouped([*(line for k in found.kernels for line in k.lines),
                                  *(line for s in stops for line in s.first_lines),
                                  *(line for s in stops for line in s.second_lines)])))
    console.print(Padding(_table(found, tails, console.width), (0, 0, 0, 4)))
    for stop in stops:
        console.print(Text(f"    fusion stopped at a {stop.kind}: "
                           f"{_lines(stop.first_lines, tails)} ↛ "
                           f"{_lines(stop.second_lines, tails)} ({stop.reason})",
                           style="yellow"))


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
