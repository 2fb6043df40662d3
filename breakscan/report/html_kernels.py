"""The HTML report's view of ``--kernels``: each graph's kernels as coloured groups, the same
colour on the source view's lines, on the graph's kernel table and on its IR.

A kernel's colour is its place in its graph (``k0``..``k5``, cycling); a fallback is also marked
``fallback``, an extern call ``extern``. Every chip links to its kernel's row; every IR line to its
line in the source view. Text is escaped by the template (jinja autoescape), like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..frames import display_path, split_location
from ..model.records import GraphKernels, Kernel
from ..model.result import ScanResult

KERNEL_COLOURS = 6  # CSS classes k0..k5 cycle over a graph's kernels


@dataclass
class KernelChip:
    """A kernel (or a kernel rule's finding) named on a line."""

    text: str
    css: str
    href: str  # an anchor in this page, without the '#'
    title: str


@dataclass
class KernelRow:
    """One kernel in its graph's kernel table."""

    kernel: Kernel
    anchor: str
    css: str


@dataclass
class IRRow:
    """One line of a graph's IR view, coloured by the (first) kernel it went into."""

    text: str
    css: str
    where: str  # file:line, short
    href: str | None  # the line in the source view, when the page shows it
    kernels: list[KernelChip] = field(default_factory=list)


def _anchor(section: str, graph: int, name: str) -> str:
    return f"{section}-g{graph}-k-{name}"


def _css(graph: GraphKernels) -> dict[str, str]:
    return {k.name: f"k{i % KERNEL_COLOURS} {k.kind}" for i, k in enumerate(graph.kernels)}


def _chip(section: str, graph: int, kernel: Kernel, css: str) -> KernelChip:
    op = f" ({kernel.op})" if kernel.op else ""
    return KernelChip(kernel.name, f"kchip {css}", _anchor(section, graph, kernel.name),
                      f"graph {graph} · {kernel.kind} kernel {kernel.name}{op}: "
                      f"{', '.join(kernel.aten_ops)}")


def source_chips(result: ScanResult, section: str) -> dict[tuple[str, int], list[KernelChip]]:
    """(file, line) -> the kernels made from that line, then the kernel rules found at it."""
    chips: dict[tuple[str, int], list[KernelChip]] = {}
    for info in result.graphs:
        if info.inductor is None:
            continue
        css = _css(info.inductor)
        for kernel in info.inductor.kernels:
            for loc in kernel.lines:
                parsed = split_location(loc)
                if parsed is not None:
                    chips.setdefault(parsed, []).append(
                        _chip(section, info.index, kernel, css[kernel.name]))
    for i, finding in enumerate(result.kernel_findings):
        if finding.file and finding.line:
            chips.setdefault((finding.file, finding.line), []).append(KernelChip(
                finding.rule, "kchip finding", finding_anchor(section, i), finding.message))
    return chips


def finding_anchor(section: str, index: int) -> str:
    """The anchor of a kernel rule's finding in the list under the graphs."""
    return f"{section}-kf-{index}"


def kernel_rows(result: ScanResult, section: str) -> dict[int, list[KernelRow]]:
    """Per graph index: its kernels with their anchors and colours."""
    rows: dict[int, list[KernelRow]] = {}
    for info in result.graphs:
        if info.inductor is not None:
            css = _css(info.inductor)
            rows[info.index] = [KernelRow(k, _anchor(section, info.index, k.name), css[k.name])
                                for k in info.inductor.kernels]
    return rows


def ir_rows(result: ScanResult, section: str,
            line_anchor: Callable[[str, int], str | None]) -> dict[int, list[IRRow]]:
    """Per graph index: its IR view, each line coloured by its kernel and linked to its source
    line (``line_anchor(file, line)``: None when the page does not show that line)."""
    views: dict[int, list[IRRow]] = {}
    for info in result.graphs:
        found = info.inductor
        if found is None:
            continue
        css = _css(found)
        by_name = {k.name: k for k in found.kernels}
        rows = []
        for node in found.nodes:
            kernels = [by_name[n] for n in node.kernels if n in by_name]
            where = f"{display_path(node.file)}:{node.line}" if node.file and node.line else ""
            rows.append(IRRow(
                node.text, css[kernels[0].name] if kernels else "", where,
                line_anchor(node.file, node.line) if node.file and node.line else None,
                [_chip(section, info.index, k, css[k.name]) for k in kernels]))
        views[info.index] = rows
    return views
