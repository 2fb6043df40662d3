"""The terminal report's fixes (``--fix``): each proposed fix with its verdict, its before/after
numbers, its same-process timing and its diff, then the breaks no fix was proposed for."""

from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

from ..frames import display_path
from ..model.result import ScanResult
from ..model.verdicts import CANDIDATE, Fix
from .wording import fix_numbers, fixes_baseline, speed_line

FIX_STYLE = {"verified": "bold green", "verified: changes semantics": "bold yellow", "breaks compilation": "bold red",
             "makes it worse": "bold red", "changes outputs": "bold red", "not tried": "dim"}
AB_STYLE = {"faster": "green", "slower": "bold yellow"}  # a same-process timing's verdict


def print_fixes(result: ScanResult, console: Console) -> None:
    if result.fixes and all(fix.reason == CANDIDATE for fix in result.fixes):  # no --fix
        console.print(Text("Switches on the breaks' paths (not tried: --fix verifies each in a "
                           "fresh process)", style="bold"))
        for fix in result.fixes:
            where = f"  {display_path(fix.file)}:{fix.line}" if fix.file else ""
            console.print(Text(f"  {fix.rule} {fix.fix_id}{where}: {fix.title}"))
            if fix.setting:
                console.print(Padding(Text(fix.setting, style="cyan"), (0, 0, 0, 4)))
        return
    console.print(Text("Fixes (each verified in a fresh process: same weights and inputs, "
                       "rescanned, run eager and compiled; a verified fix is timed against the "
                       "original in that process, interleaved)", style="bold"))
    backend = result.timings.backend if result.timings else None
    sets = result.recompiles.input_sets if result.recompiles else None
    for line in fixes_baseline(result.fixes, backend, sets):
        console.print(Text(f"  {line}", style="dim"))
    for fix in result.fixes:
        _print_fix(fix, console)
    for line in result.unfixed:
        console.print(Text(f"  {line}", style="yellow"))


def _print_fix(fix: Fix, console: Console) -> None:
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
    if fix.removes and fix.status.startswith("verified"):  # one setting or switch, credited to every break it removes
        console.print(Text("    removes root causes " + ", ".join(f"#{r}" for r in fix.removes),
                           style="green"))
    speed = speed_line(fix)
    if speed:
        console.print(Text(f"    {speed}", style=AB_STYLE.get(fix.ab.verdict, "")))
    if fix.reason:
        console.print(Text(f"    {fix.reason}", style="yellow"))
    if fix.setting and fix.kind in ("setting", "switch", "constants", "source"):
        console.print(Padding(Text(fix.setting, style="cyan"), (0, 0, 0, 4)))
    if fix.diff:
        console.print(Padding(Syntax(fix.diff.rstrip("\n"), "diff", theme="ansi_dark",
                                     word_wrap=True), (0, 0, 0, 4)))
    if fix.written:
        console.print(Text(f"    written to {display_path(fix.file)} (backup "
                           f"{display_path(fix.backup)})", style="bold green"))
