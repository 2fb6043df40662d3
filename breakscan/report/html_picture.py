"""The HTML report's picture of one call, and its first screen.

One call of the compiled model drawn left to right as an inline SVG (no script, no network,
printable, scaled to the page's width): a block per compiled-graph call, a gap per return to
Python labelled with its root cause's rank, the frames run eagerly as a hatched band, the
recompiles as a mark. The counts are measured (run time, per call); the widths are time where
``--time`` measured it (the graphs share the time inside compiled graphs, each gap its root
cause's cost per firing, the rest of the time outside graphs a last segment), else one unit per
block, and the order of graphs and returns within the call is drawn evenly: breakscan counts
them, it does not record their sequence. A verified fix gets its before and after side by side,
their lengths in proportion to the two compiled latencies of its same-process timing. Colours:
the Okabe-Ito palette, told apart without colour too (the gaps are labelled, the band hatched).
"""

from __future__ import annotations

import hashlib
from html import escape
from typing import Any

from markupsafe import Markup

from ..model.result import whole as count
from .wording import ms

GRAPH, GAP, REST, RECOMPILE = "#0072B2", "#E69F00", "#999999", "#CC79A7"
WIDTH, STRIP, TOP = 1000, 34, 22  # the viewBox's width, a strip's height, its top margin


def _sequence(graphs: int, gaps: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """``graphs`` graph calls (width -1: set by the caller) with the ``gaps`` (label, width)
    spread evenly between them."""
    if not graphs:
        return list(gaps)
    after: dict[int, list[tuple[str, float]]] = {}
    for k, gap in enumerate(gaps):
        after.setdefault(max(0, min(graphs - 1, (k + 1) * graphs // (len(gaps) + 1) - 1)),
                         []).append(gap)
    out: list[tuple[str, float]] = []
    for i in range(graphs):
        out.append(("", -1.0))
        out.extend(after.get(i, []))
    return out


def _strip(y: float, graphs: int, graph_width: float, gaps: list[tuple[str, float]],
           rest: float, length: float, eager: bool) -> tuple[list[str], int]:
    """The SVG elements of one strip from ``y``, ``length`` wide; and the graph blocks drawn."""
    parts: list[str] = []
    if eager:
        parts.append(f'<rect class="eager" x="0" y="{y - 4:.1f}" width="{length:.1f}" '
                     f'height="{STRIP + 8}" fill="url(#hatch)"><title>a frame Dynamo skipped '
                     f'runs eagerly on every call</title></rect>')
    total = graphs * graph_width + sum(w for _, w in gaps) + rest
    scale = length / total if total > 0 else 0.0
    x, blocks, labelled = 0.0, 0, set()
    for label, width in _sequence(graphs, gaps):
        w = (graph_width if width < 0 else width) * scale
        if width < 0:
            blocks += 1
            parts.append(f'<rect class="graph-call" x="{x:.2f}" y="{y}" width="{max(w, 0.6):.2f}"'
                         f' height="{STRIP}" fill="{GRAPH}" stroke="#fff" stroke-width="0.5">'
                         f'<title>a compiled-graph call</title></rect>')
        else:
            parts.append(f'<rect class="return" x="{x:.2f}" y="{y + STRIP / 3:.1f}" '
                         f'width="{max(w, 1.5):.2f}" height="{STRIP / 3:.1f}" fill="{GAP}">'
                         f'<title>{escape(label)}</title></rect>')
            short = label.split(" ", 1)[0]  # "#2": its root cause, named once, at its first
            if short.startswith("#") and short not in labelled and len(labelled) < 6:
                labelled.add(short)
                parts.append(f'<text class="gap-label" x="{x:.2f}" y="{y - 6:.1f}" '
                             f'font-size="12">{escape(short)} ↓</text>')
        x += w
    if rest > 0:
        parts.append(f'<rect class="rest" x="{x:.2f}" y="{y + STRIP / 3:.1f}" '
                     f'width="{rest * scale:.2f}" height="{STRIP / 3:.1f}" fill="{REST}">'
                     '<title>the rest of the time outside compiled graphs</title></rect>')
    return parts, blocks


def call_picture(result: Any) -> Markup | None:
    """The picture of one call of a model's compiled call (None when nothing was counted)."""
    s = result.summary
    if not s.runtime_calls or s.graph_calls_per_call is None or result.kind == "program":
        return None
    graphs = int(round(s.graph_calls_per_call))
    t = result.timings
    timed = t is not None and t.graph_s_per_call is not None and t.outside_s_per_call is not None
    gaps: list[tuple[str, float]] = []
    for rank, brk in enumerate(result.breaks, 1):
        fires = int(round(brk.fires_per_call or 0))
        each = (brk.cost_s_per_call / fires) if timed and fires and brk.cost_s_per_call else 0.0
        cost = f", {ms(brk.cost_s_per_call)} per call" if timed and brk.cost_s_per_call else ""
        gaps += [(f"#{rank} {brk.category}: back to Python ({fires}× per call{cost})",
                  each if timed else 0.5)] * fires
    untimed_gaps = int(round(s.eager_gaps_per_call or 0)) - len(gaps)
    gaps += [("a return to Python", 0.5 if not timed else 0.0)] * max(untimed_gaps, 0)
    graph_width = (t.graph_s_per_call / graphs if graphs else 0.0) if timed else 1.0
    rest = max(t.outside_s_per_call - sum(w for _, w in gaps), 0.0) if timed else 0.0
    if timed and not any(w for _, w in gaps) and gaps:
        gaps = [(label, rest / len(gaps)) for label, _ in gaps]  # no cost per break: shared
        rest = 0.0
    parts, blocks = _strip(TOP, graphs, graph_width, gaps, rest, WIDTH,
                           bool(s.frames_run_eagerly_per_call))
    scale = (f"{ms(t.graph_s_per_call + t.outside_s_per_call)} per call: widths are time"
             if timed else "not timed (--time draws time): one unit per block")
    caption = (f"one call: {count(s.graph_calls_per_call)} compiled-graph call(s), "
               f"{count(s.eager_gaps_per_call or 0)} return(s) to Python"
               + (f", {count(s.frames_run_eagerly_per_call)} frame(s) run eagerly"
                  if s.frames_run_eagerly_per_call else "") + f" · {scale}")
    marks = ""
    if result.recompiles is not None and s.recompile_count:
        marks = (f'<text x="{WIDTH}" y="14" text-anchor="end" fill="{RECOMPILE}" '
                 f'class="recompiles">↻ {s.recompile_count} recompile(s) over the input '
                 'sets</text>')
    legend = ("blue: a compiled-graph call · orange: a return to Python, #N its root cause "
              "(hover for the cost) · grey: the rest of the time outside graphs · hatched: a "
              "frame run eagerly")
    return _svg(parts, f"{caption}. {legend}", marks, TOP + STRIP + 10, blocks,
                "one call of the compiled model")


def fix_picture(fix: Any) -> Markup | None:
    """A verified fix's call before and after, lengths in proportion to its A/B latencies."""
    b, a, ab = fix.before, fix.after, fix.ab
    if b is None or a is None or b.graph_calls_per_call is None or \
            a.graph_calls_per_call is None:
        return None
    before_s = ab.original.value if ab is not None else None
    after_s = ab.fixed.value if ab is not None else None
    longest = max(before_s or 1.0, after_s or 1.0)
    parts: list[str] = []
    for i, (label, m, seconds) in enumerate((("before", b, before_s), ("after", a, after_s))):
        y = TOP + i * (STRIP + 26)
        gaps = [("a return to Python", 0.5)] * int(round(m.eager_gaps_per_call or 0))
        drawn, _ = _strip(y, int(round(m.graph_calls_per_call)), 1.0, gaps, 0.0,
                          WIDTH * (seconds or 1.0) / longest,
                          bool(m.frames_run_eagerly_per_call))
        parts += drawn
        said = f" · {ms(seconds)} compiled" if seconds else ""
        parts.append(f'<text x="0" y="{y - 6}" class="strip-label">{label}: '
                     f'{count(m.graph_calls_per_call)} graph call(s), '
                     f'{count(m.eager_gaps_per_call or 0)} return(s) to Python{said}</text>')
    return _svg(parts, "before and after the fix, one call each (one unit per block; lengths: "
                "the same-process latencies)" if ab else "before and after the fix, one call "
                "each (one unit per block)", "", TOP + 2 * STRIP + 40, None,
                "one call before and after the fix")


def _svg(parts: list[str], caption: str, marks: str, height: float,
         blocks: int | None, label: str) -> Markup:
    data = f' data-graph-calls="{blocks}"' if blocks is not None else ""
    # one pattern id per picture (several pictures share a page), the same on every run
    hatch = "hatch-" + hashlib.sha256((label + caption + str(len(parts))).encode()).hexdigest()[:10]
    return Markup(
        f'<figure class="call-picture"><svg role="img" aria-label="{escape(label)}" '
        f'viewBox="0 -4 {WIDTH} {height:.0f}" '
        f'width="100%" preserveAspectRatio="xMinYMin meet"{data} '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(caption)}</title>'
        f'<defs><pattern id="{hatch}" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6f0e0"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#c9b27c" stroke-width="2"/></pattern></defs>'
        + marks + "".join(parts).replace("url(#hatch)", f"url(#{hatch})")
        + f'</svg><figcaption>{escape(caption)}</figcaption></figure>')


def first_screen(result: Any) -> list[dict[str, Any]]:
    """The top root causes, worst first (the report's order), each with its one-line fix and,
    with --fix, the status of the best fix tried for it."""
    rows = []
    for rank, brk in enumerate(result.breaks[:3], 1):
        tried = [f for f in result.fixes if (f.removes and rank in f.removes) or
                 (f.file == brk.file and f.line == brk.line)]
        best = next((f for f in tried if f.verified), tried[0] if tried else None)
        cost = (f"{ms(brk.cost_s_per_call)} per call" if brk.cost_s_per_call is not None else
                f"{count(brk.fires_per_call)}× per call" if brk.fires_per_call is not None
                else "")
        rows.append({"rank": str(rank), "category": brk.category, "cost": cost,
                     "fix": brk.suggestion.split(". ")[0].rstrip(".") + ".",
                     "status": f"fix {best.fix_id}: {best.status}" if best else "",
                     "verified": "ok" if best is not None and best.verified else "warn"})
    return rows
