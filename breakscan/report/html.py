"""HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched).

Renders finished :class:`ModelRun` results with the jinja2 template in ``templates/``; never
runs a model and never imports torch. All model-derived text (targets, source lines, reasons,
diffs) reaches the page through jinja2's autoescaping or pygments' own escaping; control
characters are shown as ``\\xNN`` first, as the terminal report does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from pygments import highlight, lex
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer
from pygments.token import STANDARD_TYPES

from ..frames import display_path, is_user_file, split_location
from ..model.excerpts import shown_lines
from ..model.result import Comparison, ModelRun, ScanResult
from ..model.result import whole as count
from ..model.stats import ratio
from ..model.verdicts import Fix
from ..rules.catalogue import finding_status, rule_for
from ..rules.categories import REGISTRY_URL
from .html_kernels import KernelChip, finding_anchor, ir_rows, kernel_rows, source_chips
from .html_picture import call_picture, first_screen, fix_picture
from .literal import output_tail, printable, scrubbed
from .locations import libraries, line_ranges
from .terminal_compile import cache_text, frame_label
from .wording import (calls_line, calls_text, chain_step, compared_speedup, compared_timing,
                      compared_total, compile_error_advice, fires_text, fix_numbers, fixes_baseline,
                      gate_status, hint_classes_text, median_iqr, ms, noise_note, outputs_verdict,
                      own_hints, random_note, runtime_line, settings_text, speed_line)

TEMPLATE_DIR = Path(__file__).parent / "templates"
GRAPH_COLOURS = 6  # CSS classes g0..g5 cycle over the graphs
MAX_FULL_FILE_LINES = 600  # longer files show only windows around the marked lines
ZOO_PAGE_RUNS = 20  # a page of more models shows every file as windows (500 whole files: MBs)
WINDOW = 12  # lines of context either side of a marked line in a long file
_PYGMENTS_STYLE = "default"
_REGISTRY_PREFIX = REGISTRY_URL.split("{", 1)[0]


@dataclass
class SourceLine:
    number: int
    code: Markup  # the line's tokens as spans, each text escaped (:func:`_code_lines`)
    classes: list[str] = field(default_factory=list)
    labels: list[tuple[str, str]] = field(default_factory=list)  # (text, href)
    kernels: list[KernelChip] = field(default_factory=list)  # --kernels: made from this line
    title: str = ""
    gap_before: bool = False  # lines were left out above this one (long files)

    def row(self, anchor: str) -> Markup:
        """The line's ``<tr>``, built here rather than in the template: a zoo's page has ~10^4
        of them, and the template's per-attribute work was most of its time."""
        classes = " ".join(self.classes) + (" gap" if self.gap_before else "")
        marks = "".join([f'<a class="tag brk-label" href="{escape(href)}">{escape(text)}</a>'
                         for text, href in self.labels] +
                        [f'<a class="{escape(c.css)}" href="#{escape(c.href)}" '
                         f'title="{escape(c.title)}">{escape(c.text)}</a>' for c in self.kernels])
        return Markup(f'<tr id="{escape(anchor)}-L{self.number}"'
                      + (f' class="{escape(classes)}"' if classes else "")
                      + (f' title="{escape(self.title)}"' if self.title else "")
                      + f'>\n<td class="ln">{self.number}</td><td class="marks">{marks}</td>'
                      f'<td class="code">{self.code}</td>\n</tr>')


def where(location: str) -> Markup:
    """``<code title="/abs/path.py:12">package/path.py:12</code>``."""
    return Markup(f'<code title="{escape(location)}">{escape(display_path(location))}</code>')


@dataclass
class SourceView:
    anchor: str
    path: str
    label: str
    lines: list[SourceLine]


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)),
                      autoescape=select_autoescape(["html", "j2", "html.j2"],
                                                   default_for_string=True, default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["ms"] = lambda s: "-" if s is None else ms(s)
    env.filters["short"] = lambda p: display_path(p) if p else ""
    env.filters["where"] = where  # the path shown, the absolute one in its tooltip
    env.filters["line_ranges"] = line_ranges
    env.filters["libraries"] = libraries
    env.filters["fix_picture"] = fix_picture
    env.filters["finding_status"] = lambda f: finding_status(f.status, f.category)
    env.filters["noise_note"] = noise_note
    env.filters["random_note"] = random_note
    env.filters["count"] = count
    env.filters["output_tail"] = output_tail
    return env


def _css_class(ttype: Any) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


@functools.lru_cache(maxsize=32)
def _code_lines(text: str) -> tuple[Markup, ...]:
    """Each line of Python source as HTML: a ``<span class>`` per token (pygments' own short
    class names) around its escaped text, built once per text (a zoo's page shows one file for
    many models; a page of 500 models spent most of its time on per-token template work)."""
    lines = _tokens_by_line(text)
    if lines and not lines[-1]:
        lines.pop()
    return tuple(Markup("").join(Markup('<span class="{}">{}</span>').format(cls, part)
                                 if cls else escape(part) for cls, part in line)
                 for line in lines)


def _tokens_by_line(text: str) -> list[list[tuple[str, str]]]:
    """Python source lexed once, split into lines; a token spanning lines is cut at each one."""
    lines: list[list[tuple[str, str]]] = [[]]
    for ttype, value in lex(text, PythonLexer(stripnl=False, ensurenl=False)):
        cls = _css_class(ttype)
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k:
                lines.append([])
            if part:
                lines[-1].append((cls, part))
    return lines


def _highlight_diff(diff: str) -> Markup:
    # pygments escapes &, <, >, " and ' in its output: the only Markup built from model text.
    return Markup(highlight(printable(diff.rstrip("\n")), DiffLexer(),
                            HtmlFormatter(nowrap=True)))


def _read(path: str, result: ScanResult) -> str | None:
    """The file's text as the report may show it (``excerpts``), or None."""
    lines = shown_lines(result, path)
    return "".join(lines) if lines else None


def _source_views(result: ScanResult, section: str,
                  chips: dict[tuple[str, int], list[KernelChip]], *, whole: int = MAX_FULL_FILE_LINES
                  ) -> tuple[list[SourceView], dict[int, str], dict[tuple[str, int], str]]:
    """One view per user file the breaks, graphs and kernels touch; also each break's line
    anchor and the anchor of every line shown."""
    files: list[str] = []
    for brk in result.breaks:
        if brk.owner == "user" and brk.file not in files:
            files.append(brk.file)
    files += [f for f in dict.fromkeys(f for f, _ in chips) if f not in files and is_user_file(f)]
    graph_lines: dict[str, dict[int, list[int]]] = {}
    for graph in result.graphs:
        for loc in graph.source_lines:
            parsed = split_location(loc)
            if parsed is None or not is_user_file(parsed[0]):
                continue
            graph_lines.setdefault(parsed[0], {}).setdefault(parsed[1], []).append(graph.index)
            if parsed[0] not in files:
                files.append(parsed[0])
    views: list[SourceView] = []
    break_anchor: dict[int, str] = {}
    shown: dict[tuple[str, int], str] = {}
    for k, path in enumerate(files):
        text = _read(path, result)
        if text is None:
            continue
        anchor = f"{section}-f{k}"
        code = _code_lines(printable(text.replace("\r\n", "\n")))
        lines = [SourceLine(n, html) for n, html in enumerate(code, 1)]
        marked: set[int] = set()
        for n, graphs in graph_lines.get(path, {}).items():
            if 1 <= n <= len(lines):
                line = lines[n - 1]
                line.classes += ["graph", f"g{graphs[0] % GRAPH_COLOURS}"]
                line.title = ", ".join(f"graph {g}" for g in graphs)
                marked.add(n)
        for i, brk in enumerate(result.breaks, 1):
            if brk.file != path or not 1 <= brk.line <= len(lines):
                continue
            line = lines[brk.line - 1]
            if "brk" not in line.classes:
                line.classes.append("brk")
            line.labels.append((brk.category, f"#{section}-break-{i}"))
            break_anchor[i] = f"{anchor}-L{brk.line}"
            marked.add(brk.line)
        for (file, n), found in chips.items():
            if file == path and 1 <= n <= len(lines):
                lines[n - 1].kernels = found
                lines[n - 1].classes += found[0].css.split()[1:]  # its first kernel's colour
                marked.add(n)
        if len(lines) > whole:
            lines = _windows(lines, marked)
        views.append(SourceView(anchor, path, display_path(path), lines))
        shown.update({(path, line.number): f"{anchor}-L{line.number}" for line in lines})
    return views, break_anchor, shown


def _windows(lines: list[SourceLine], marked: set[int]) -> list[SourceLine]:
    """A long file's lines around the marked ones (a gap marked where lines were left out)."""
    keep = {n for m in marked for n in range(m - WINDOW, m + WINDOW + 1)}
    kept, previous = [], 0
    for line in lines:
        if line.number in keep:
            line.gap_before = line.number != previous + 1
            kept.append(line)
            previous = line.number
    return kept


def _fix_view(fix: Fix) -> dict[str, Any]:
    return {"fix": fix, "numbers": fix_numbers(fix), "speed": speed_line(fix),
            "chart": _ab_chart(fix), "diff": _highlight_diff(fix.diff) if fix.diff else None}


# One bar: (label, median seconds, whisker low, whisker high, what it shows, css kind).
Bar = tuple[str, float, "float | None", "float | None", str, str]
_CHAR_W = 7.2  # px per character of the 12 px label font, generously: labels must never clip


def _bar_chart(bars: list[Bar]) -> dict[str, Any] | None:
    """An SVG-ready bar chart: the label column is as wide as the longest label."""
    if not bars:
        return None
    label_w = 16 + _CHAR_W * max(len(b[0]) for b in bars)
    value_w = 16 + _CHAR_W * max(len(b[4]) for b in bars)
    plot_w, row_h = 380, 30
    top = max(max(b[1], b[3] or 0.0) for b in bars) or 1.0
    rows = []
    for k, (name, median, low, high, value, kind) in enumerate(bars):
        y = 10 + k * row_h
        row = {"name": name, "kind": kind, "y": y, "mid": y + 10, "x": round(label_w, 1),
               "w": round(max(1.0, median / top * plot_w), 1),
               "text_x": round(label_w + plot_w + 8, 1), "value": value, "whisker": None}
        if low is not None and high is not None and high > low:
            row["whisker"] = {"x1": round(low / top * plot_w + label_w, 1),
                              "x2": round(high / top * plot_w + label_w, 1)}
        rows.append(row)
    return {"width": round(label_w + plot_w + value_w + 8), "height": 10 + len(bars) * row_h,
            "rows": rows}


def _timing_chart(result: ScanResult) -> dict[str, Any] | None:
    """Bars (median) with an IQR whisker for eager, compiled and fullgraph (one measurement)."""
    t = result.timings
    if t is None:
        return None
    bars: list[Bar] = []
    for name, timing, kind in (("eager", t.eager, "eager"), ("torch.compile", t.compiled, "compiled"),
                               ("fullgraph=True", t.fullgraph, "fullgraph")):
        if timing is not None:
            m, q = timing.median_s, timing.iqr_s
            bars.append((name, m, max(0.0, m - q / 2) if q else None, m + q / 2 if q else None,
                         median_iqr(timing), kind))
    return _bar_chart(bars)


def _compile_chart(result: ScanResult) -> dict[str, Any] | None:
    """--compile-time: a bar per cold frame compile, the costliest first."""
    found = result.compile_time
    if found is None:
        return None
    return _bar_chart([(frame_label(f) + (f" [break #{f.break_index + 1}]"
                                          if f.break_index is not None else ""),
                        f.total_s, None, None, ms(f.total_s),
                        "eager" if f.break_index is not None else "compiled")
                       for f in found.top_frames(len(found.cold.frames))])


def _ab_chart(fix: Fix) -> dict[str, Any] | None:
    """A verified fix's same-process timing: original and fixed, 95 % intervals as whiskers."""
    ab = fix.ab
    if ab is None:
        return None
    return _bar_chart([(label, iv.value, iv.low, iv.high,
                        f"{ms(iv.value)} [{ms(iv.low)}–{ms(iv.high)}]", kind)
                       for label, iv, kind in (("original (compiled)", ab.original, "compiled"),
                                               (f"fixed: {fix.fix_id}", ab.fixed, "fixed"))])


def _break_views(result: ScanResult, section: str,
                 anchors: dict[int, str]) -> tuple[list[dict[str, Any]], list[Fix]]:
    views, used = [], set()
    for i, brk in enumerate(result.breaks, 1):
        fixes = [f for f in result.fixes if f.file == brk.file and f.line == brk.line]
        used.update(id(f) for f in fixes)
        url = brk.doc_url if brk.doc_url and brk.doc_url.startswith(_REGISTRY_PREFIX) else None
        views.append({"i": i, "anchor": f"{section}-break-{i}", "brk": brk,
                      "rule": rule_for(brk.category), "url": url,
                      "source_anchor": anchors.get(i),
                      "fires": fires_text(brk, result) if brk.fires_per_call is not None
                      else None,
                      "calls": calls_text(brk),
                      "chain": [chain_step(f) for f in brk.call_chain],
                      "hints": own_hints(brk), "classes": hint_classes_text(brk),
                      "fixes": [_fix_view(f) for f in fixes]})
    return views, [f for f in result.fixes if id(f) not in used]


def _section(run: ModelRun, k: int, zoo: bool = False) -> dict[str, Any]:
    anchor = f"model-{k}"
    view: dict[str, Any] = {"anchor": anchor, "run": run, "target": printable(run.target),
                            "error": printable(run.error) if run.error else None,
                            "detail": printable(run.detail) if run.detail else ""}
    if run.result is None:
        return view
    result: ScanResult = scrubbed(run.result)
    sources, anchors, shown = _source_views(result, anchor, source_chips(result, anchor),
                                            whole=0 if zoo else MAX_FULL_FILE_LINES)
    breaks, other_fixes = _break_views(result, anchor, anchors)
    t = result.timings
    view.update({
        "result": result, "sources": sources, "breaks": breaks,
        "kernel_rows": kernel_rows(result, anchor),
        "ir": ir_rows(result, anchor, lambda file, line: shown.get((file, line))),
        "finding_anchors": [finding_anchor(anchor, i) for i in range(len(result.kernel_findings))],
        "other_fixes": [_fix_view(f) for f in other_fixes],
        "fixes_baseline": fixes_baseline(
            result.fixes, result.timings.backend if result.timings else None,
            result.recompiles.input_sets if result.recompiles else None),
        "static": [f for f in result.static if f.status != "break"],
        "chart": _timing_chart(result), "picture": call_picture(result),
        "todo": first_screen(result),
        "compile_chart": _compile_chart(result),
        "compile_caches": {run.kind: cache_text(run) for run in (
            result.compile_time.cold, result.compile_time.warm) if run is not None}
        if result.compile_time else {},
        "runtime": runtime_line(result) if result.summary.runtime_calls else None,
        "later": calls_line(result) if result.later_call is not None else None,
        "settings": settings_text(result) if result.compile_settings else None,
        "partial": result.partial or run.partial,
        "compile_error_advice": compile_error_advice(result.compile_error)
        if result.compile_error else None,
        "stopped_at": result.stopped_at or run.stage,
        "stop_error": result.error or view["error"],
        "fullgraph_speedup": ratio(t.eager, t.fullgraph, "fullgraph=True")[0] if t else None,
    })
    return view


def _status(run: ModelRun) -> str:
    if run.result is None:
        return f"error (exit {run.exit_code})"
    if run.error is not None:
        return "partial"
    return gate_status(run.result.gate) + (" (cached)" if run.cached else "")


def _comparison_rows(comparison: Comparison) -> list[tuple[str, str, str]]:
    a, b = comparison.a.result, comparison.b.result
    totals = [("graphs", "graph_count"), ("root-cause breaks", "graph_break_count"),
              ("break records", "break_records"), ("frames skipped", "frames_skipped")]
    if (a and a.recompiles) or (b and b.recompiles):
        totals.append(("recompiles", "recompile_count"))
    rows = [(label, compared_total(a, name), compared_total(b, name)) for label, name in totals]
    rows += [("eager", compared_timing(a, "eager"), compared_timing(b, "eager")),
             ("compiled", compared_timing(a, "compiled"), compared_timing(b, "compiled")),
             ("speedup", compared_speedup(a), compared_speedup(b))]
    return rows


def _comparison_view(comparison: Comparison) -> dict[str, Any]:
    out = comparison.outputs
    verdict, cls = outputs_verdict(comparison)
    return {"a": printable(comparison.a.target), "b": printable(comparison.b.target),
            "a_name": printable(comparison.a.target.rpartition(":")[2]),
            "b_name": printable(comparison.b.target.rpartition(":")[2]),
            "rows": _comparison_rows(comparison), "verdict": printable(verdict), "cls": cls,
            "note": printable(comparison.note) if comparison.note and out is not None else None,
            "errors": [(printable(r.target), printable(r.error))
                       for r in (comparison.a, comparison.b) if r.error]}


def to_html(runs: list[ModelRun], *, title: str = "breakscan report",
            comparison: Comparison | None = None) -> str:
    """One self-contained HTML page for these runs (and, with ``comparison``, A vs B)."""
    if not runs and comparison is not None:
        runs = [comparison.a, comparison.b]
    zoo = len(runs) > ZOO_PAGE_RUNS
    sections = [_section(run, k, zoo) for k, run in enumerate(runs, 1)]
    overview = [{"anchor": s["anchor"], "target": s["target"], "status": _status(s["run"]),
                 "summary": s["result"].summary if "result" in s else None,
                 "varied": "result" in s and s["result"].recompiles is not None}
                for s in sections]
    template = _environment().get_template("report.html.j2")
    return template.render(
        title=printable(title), sections=sections, overview=overview,
        comparison=_comparison_view(comparison) if comparison is not None else None,
        pygments_css=Markup(HtmlFormatter(style=_PYGMENTS_STYLE).get_style_defs(".hl")),
        graph_colours=GRAPH_COLOURS)
