"""The HTML report: real scans rendered to one self-contained page, parsed and opened in a browser.

The page is checked with the stdlib HTML parser (counts, break marks, graph shading, escaping of
hostile text, nothing fetched) and, where chromium is installed, rendered headless: the DOM it
builds and two screenshots (1280 px and 420 px wide) saved to $BREAKSCAN_ARTIFACTS.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from breakscan import scan
from breakscan.rules.categories import REGISTRY_URL
from breakscan.report import render_file_format
from breakscan.report.html import to_html
from breakscan.model.result import Comparison, ModelRun
from breakscan.model.verdicts import Check, Correctness, Fix, FixMetrics, GateResult

from conftest import ROOT

TARGETS = [("sample_models/nested_break.py:NestedBreak", "8,16"),
           ("sample_models/tensor_branch.py:TensorIf", "8,16"),
           ("tests/fixtures/models/misbehaving.py:Hostile", "2,3")]
HOSTILE_REASON = '</pre><script>alert("reason")</script> [red]x[/red]'
# Would change the DOM if the page ever let it run: the browser test looks for its traces.
PAYLOAD = ('<script>document.body.appendChild(document.createElement("pwned-script"))</script>'
           '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')">')
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: "Node | None"):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def find(self, tag: str | None = None, **attrs: str) -> list["Node"]:
        return [n for n in self.iter() if (tag is None or n.tag == tag)
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]


class TreeBuilder(HTMLParser):
    """A small DOM from html.parser (it does not build trees itself)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.tags.append((tag, node.attrs))
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.tags.append((tag, node.attrs))
        self.current.children.append(node)

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(page: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    return builder


@pytest.fixture(scope="module")
def runs() -> list[ModelRun]:
    # The page is the subject, not isolation: the scans run in this process.
    done = [ModelRun(target=target, result=scan(target, input_shapes=[shape]))
            for target, shape in TARGETS]
    for run in done:
        assert run.error is None and run.result is not None, (run.target, run.error, run.detail)
    hostile = done[2].result
    brk = hostile.breaks[0]
    # A verified fix for the hostile break (its diff carries the payload) and a refused setting
    # whose reason does: model-derived text in every place the page shows it.
    hostile.fixes = [
        Fix(rule="BS007", fix_id="remove_break", kind="source", title="drop the graph_break",
            category=brk.category, file=brk.file, line=brk.line, verified=True,
            diff=f"--- a/m.py\n+++ b/m.py\n@@ -68 +68 @@\n-{brk.code}\n+pass  # {PAYLOAD}\n",
            before=FixMetrics(2, 1, None, 2e-5, 1.0), after=FixMetrics(1, 0, None, 1e-5, 2.0),
            outputs_match=True),
        Fix(rule="BS001", fix_id="capture_scalar_outputs", kind="setting", title="capture scalars",
            category="item", setting="torch._dynamo.config.capture_scalar_outputs = True",
            reason=f"refused: {PAYLOAD}"),
    ]
    hostile.notes.append(PAYLOAD)
    return done


@pytest.fixture(scope="module")
def page(runs) -> str:
    failed = ModelRun(target=f"bad.py:{PAYLOAD}", result=None, error=f"load failed: {PAYLOAD}",
                      exit_code=3, stage="load")
    return to_html(runs + [failed], title="breakscan <report> \"test\"")


def section(doc: TreeBuilder, k: int) -> Node:
    found = doc.root.find("section", id=f"model-{k}")
    assert len(found) == 1
    return found[0]


def test_summary_counts_match_the_results(runs, page):
    doc = parse(page)
    for k, run in enumerate(runs, 1):
        sec = section(doc, k)
        summary = run.result.summary
        for key in ("graph_count", "graph_break_count", "break_records", "op_count",
                    "recompile_count", "frames_skipped"):
            rows = sec.find("tr", data_key=key)
            assert len(rows) == 1, key
            value = getattr(summary, key)
            if key == "recompile_count" and run.result.recompiles is None:
                value = "-"  # never called with other inputs: not measured (JSON null)
            assert rows[0].find("td")[0].text().strip() == str(value), key
        assert sec.find("tr", data_key="target")[0].find("td")[0].text() == run.result.target
    # The overview links every model to its section, the failed one included.
    links = [a.attrs["href"] for a in doc.root.find("table", id="overview-table")[0].find("a")]
    assert links == [f"#model-{k}" for k in range(1, len(runs) + 2)]
    assert "error (exit 3)" in doc.root.find("table", id="overview-table")[0].text()
    assert "load failed" in section(doc, len(runs) + 1).text()


def test_each_break_line_is_marked_in_its_file(runs, page):
    doc = parse(page)
    for k, run in enumerate(runs, 1):
        sec = section(doc, k)
        assert run.result.breaks
        for i, brk in enumerate(run.result.breaks, 1):
            tables = sec.find("table", data_file=brk.file)
            assert len(tables) == 1, brk.file
            marked = [tr for tr in tables[0].find("tr")
                      if "brk" in tr.classes() and re.fullmatch(rf"model-{k}-f\d+-L{brk.line}",
                                                               tr.attrs.get("id", ""))]
            assert len(marked) == 1, (brk.file, brk.line)
            label = marked[0].find("a")
            assert label and label[0].attrs["href"] == f"#model-{k}-break-{i}"
            assert label[0].text() == brk.category
            details = sec.find(id=f"model-{k}-break-{i}")
            assert details and brk.gb_type in details[0].text()
            assert brk.suggestion in details[0].text()
            if brk.doc_url:
                assert details[0].find("a", href=brk.doc_url)
    # NestedBreak's break is in the helper file, not the model's.
    nested = runs[0].result.breaks[0]
    assert nested.file.endswith("nested_helpers.py")


def test_graph_lines_are_shaded_per_graph(runs, page):
    doc = parse(page)
    for k, run in enumerate(runs, 1):
        sec = section(doc, k)
        for graph in run.result.graphs:
            for loc in graph.source_lines:
                file, _, line = loc.rpartition(":")
                table = sec.find("table", data_file=file)
                assert table, loc
                rows = [tr for tr in table[0].find("tr")
                        if tr.attrs.get("id", "").endswith(f"-L{line}")]
                assert len(rows) == 1
                assert "graph" in rows[0].classes()
                assert any(re.fullmatch(r"g\d", c) for c in rows[0].classes())
                assert f"graph {graph.index}" in rows[0].attrs["title"]
    # NestedBreak: 6 graphs over two files, so several colours are in use.
    colours = {c for tr in section(doc, 1).iter() for c in tr.classes() if re.fullmatch(r"g\d", c)
               and tr.tag == "tr"}
    assert len(colours) >= 3


def test_hostile_text_is_escaped_and_nothing_is_fetched(runs, page):
    doc = parse(page)
    tags = [tag for tag, _ in doc.tags]
    for bad in ("script", "img", "iframe", "object", "embed", "link", "base", "form"):
        assert bad not in tags, bad
    for tag, attrs in doc.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name != "src", tag
            if name == "href":
                assert value.startswith("#") or value.startswith(
                    REGISTRY_URL.split("{")[0]), value
                assert tag == "a"
    styles = "".join(n.text() for n in doc.root.find("style"))
    assert "@import" not in styles and "url(" not in styles
    assert "http" not in styles
    text = doc.root.text()
    assert HOSTILE_REASON in text  # the break reason, as text
    assert '<script>alert("docstring")</script>' in text  # the source view
    assert "<img src=x onerror=alert(1)> [link=http://evil]click[/link]" in text
    assert PAYLOAD in text  # notes, fix reason, failed run's error
    assert f"+pass  # {PAYLOAD}" in text  # the diff
    assert "\\x1b[31m" in text and "\x1b" not in page  # control characters shown, not sent
    assert doc.root.find("title")[0].text() == 'breakscan <report> "test"'


def test_fixes_and_timings_render(runs):
    run = runs[1]
    result = dataclasses.replace(run.result)
    brk = result.breaks[0]
    from breakscan.model.verdicts import ABTiming, Interval, Timing, TimingReport

    result.timings = TimingReport(device="cpu", threads=1, backend="inductor", mode=None,
                                  eager=Timing(3e-5, 4e-6, 100, 1),
                                  compiled=Timing(5e-5, 6e-6, 100, 1),
                                  fullgraph=Timing(2e-3, 1e-4, 10, 1), speedup=0.6)
    result.fixes = [Fix(rule="BS002", fix_id="torch_where", kind="source", title="torch.where",
                        category=brk.category, file=brk.file, line=brk.line, verified=True,
                        diff="-if h.sum() > 0:\n+h = torch.where(...)\n",
                        before=FixMetrics(2, 1, None, 5e-5, 0.6),
                        after=FixMetrics(1, 0, None, 2.5e-5, None),
                        ab=ABTiming(original=Interval(5e-5, 4.9e-5, 5.1e-5),
                                    fixed=Interval(2.5e-5, 2.4e-5, 2.6e-5),
                                    speedup=Interval(2.0, 1.9, 2.1), verdict="faster",
                                    blocks=20, calls_per_block=400, threads=1,
                                    backend="inductor")),
                    Fix(rule="BS003", fix_id="capture_scalar_outputs", kind="setting",
                        title="set capture_scalar_outputs", category="item", verified=True,
                        before=FixMetrics(2, 1, None, 5e-5, 0.6),
                        after=FixMetrics(1, 0, None, 5.1e-5, None),
                        ab=ABTiming(original=Interval(5e-5, 4.8e-5, 5.2e-5),
                                    fixed=Interval(5.1e-5, 4.9e-5, 5.3e-5),
                                    speedup=Interval(0.98, 0.94, 1.03),
                                    verdict="no measurable difference", blocks=20,
                                    calls_per_block=400, threads=1, backend="inductor"))]
    result.gate = GateResult(False, [Check("max_breaks", 0, 1, False, "tensor_branch.py:24")])
    doc = parse(to_html([dataclasses.replace(run, result=result)]))
    text = doc.root.text()
    assert "FAIL" in text and "max_breaks: 1 > 0" in text
    card = doc.root.find(id="model-1-break-1")[0]
    assert "VERIFIED" in card.text() and "graphs 2 → 1 · breaks 1 → 0" in card.text()
    assert card.find("pre", **{"class": "hl diff"})
    charts = [c for c in doc.root.find("svg")  # the bar charts (not the pictures of a call)
              if not c.attrs.get("aria-label", "").startswith("one call")]
    (timing_chart,) = [c for c in charts if c.attrs["aria-label"] == "median latency per variant"]
    bars = [t.text() for t in timing_chart.find("text")]
    assert {"eager", "torch.compile", "fullgraph=True"} <= set(bars)
    assert not any(b.startswith("fixed") for b in bars)  # another measurement: its own chart
    assert "30.0 µs ± 4.0 µs" in bars and "2.00 ms ± 100.0 µs" in bars
    assert len(timing_chart.find("line")) == 9  # 3 whiskers of 3 lines each
    # each verified fix: original and fixed from the same process, 95 % intervals
    (ab_chart,) = card.find("svg")
    labels = [t.text() for t in ab_chart.find("text")]
    assert labels == ["original (compiled)", "50.0 µs [49.0 µs–51.0 µs]", "fixed: torch_where",
                      "25.0 µs [24.0 µs–26.0 µs]"]
    assert "2.00× faster (95 % CI 1.90–2.10×)" in card.text()
    assert "no measurable difference (0.98×, 95 % CI 0.94–1.03× includes 1)" in text
    for chart in charts:  # labels fit: the bars start right of the longest label
        rect_x = float(chart.find("rect")[0].attrs["x"])
        longest = max(len(t.text()) for t in chart.find("text")[::2])
        assert rect_x >= 7 * longest, (rect_x, longest)
    assert "speedup" in text and "0.60x" in text
    # Single run: no overview table.
    assert not doc.root.find("table", id="overview-table")


def test_partial_failed_and_comparison(runs):
    a, b = runs[0], runs[1]
    partial = dataclasses.replace(b, error="timed out <b>", stage="recompiles",
                                  result=dataclasses.replace(b.result, partial=True,
                                                             stopped_at="recompiles",
                                                             error="timed out <b>"))
    comparison = Comparison(a=a, b=partial, weights_shared=False,
                            outputs=Correctness(False, 1.0, 1.0, "shapes <differ>"))
    doc = parse(to_html([], comparison=comparison))
    text = doc.root.text()
    banner = [n for n in doc.root.iter() if "partial" in n.classes()]
    assert banner and "recompiles" in banner[0].text() and "timed out <b>" in banner[0].text()
    table = doc.root.find("table", id="comparison-table")[0]
    rows = {tr.find("th")[0].text(): [td.text() for td in tr.find("td")]
            for tr in table.find("tbody")[0].find("tr")}
    assert rows["graphs"] == [str(a.result.summary.graph_count), str(b.result.summary.graph_count)]
    assert rows["root-cause breaks"] == ["1", "1"]
    assert "outputs: B DIFFERS from A: shapes <differ>" in text
    assert doc.root.find(id="model-1") and doc.root.find(id="model-2")


def test_html_format_dispatch_and_no_torch_import(runs):
    assert render_file_format(runs[:1], "html", single=True).startswith("<!DOCTYPE html>")
    code = ("import sys; from breakscan.report.html import to_html; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_chromium_renders_the_page(page, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium not installed (.ci/run installs it)")
    out = Path(os.environ.get("BREAKSCAN_ARTIFACTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    html_path = out / "report.html"
    html_path.write_text(page, encoding="utf-8")
    url = html_path.resolve().as_uri()
    base = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    doc = parse(dom)
    tags = {tag for tag, _ in doc.tags}
    assert "script" not in tags and "img" not in tags and "pwned-script" not in tags
    assert "data-pwned" not in doc.root.find("body")[0].attrs
    marked = [n for n in doc.root.iter() if n.tag == "tr" and "brk" in n.classes()]
    assert len(marked) == 3  # one break in each model
    assert HOSTILE_REASON in doc.root.text() and PAYLOAD in doc.root.text()
    shots = []
    for width in (1280, 420):
        shot = out / f"report-{width}.png"
        subprocess.run(base + [f"--screenshot={shot}", f"--window-size={width},2000", url],
                       capture_output=True, timeout=60, check=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000, shot
        shots.append(shot)
    print("\nHTML report screenshots:", *shots, sep="\n  ")


def test_every_sample_model_renders_in_chromium_with_the_json_facts(tmp_path):
    """One page for all sample models (as `breakscan check --html` makes), read back from the
    DOM Chromium builds: each model's counts and marked break lines equal its JSON document."""
    import json

    from conftest import sample_expectations

    from breakscan.pipeline.scan import scan
    from breakscan.report.json import to_json

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium not installed (.ci/run installs it)")
    samples = sample_expectations()
    runs = [ModelRun(target=str(e), result=scan(e.target, input_shapes=["8,16"]))
            for e in samples]
    path = tmp_path / "samples.html"
    path.write_text(to_html(runs), encoding="utf-8")
    dom = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          path.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    doc = parse(dom)
    for k, run in enumerate(runs, 1):
        facts = json.loads(to_json(run.result))
        sec = section(doc, k)
        for key, value in facts["summary"].items():
            (row,) = sec.find("tr", data_key=key)
            shown = "-" if value is None else str(int(value)) \
                if isinstance(value, float) and value.is_integer() \
                else str(value)  # a per-call average that is a whole number reads as one; none counted reads "-"
            assert row.find("td")[0].text().strip() == shown, (run.target, key)
        user_lines = {(b["file"], b["line"]) for b in facts["breaks"] if b["owner"] == "user"}
        marked = [n for n in sec.iter() if n.tag == "tr" and "brk" in n.classes()]
        assert len(marked) == len(user_lines), run.target


def test_the_first_screen_says_what_to_do_and_pictures_one_call(tmp_path):
    """Issue 48 §3-4: PerLayerBranch timed and fixed: the top of its section is the verdict, the
    root cause with its cost, one-line fix and fix status, then the picture of one call: one
    block per compiled-graph call (48), one gap per return to Python (24), labelled #1, the
    eagerly run loop hatched; the verified fix drawn before and after. In Chromium at 1,280 px
    the page does not scroll sideways (screenshot kept with the CI artifacts)."""
    from breakscan import Limits, ScanOptions, TimingOptions
    from breakscan.fixes.verify import verify_fixes

    from conftest import chromium_renders

    target = f"{ROOT}/sample_models/per_layer_branch.py:PerLayerBranch"
    options = ScanOptions(input_shapes=("8,16",),
                          timing=TimingOptions(backend="eager", max_run_time=0.1))
    result = scan(target, options)
    result.fixes = verify_fixes(target, options, result, Limits(), isolate=False)
    page = to_html([ModelRun(target=target, result=result)])
    todo = page[page.index('<div class="todo">'):page.index("<h3>Summary</h3>")]
    assert "1 root cause(s):" in todo and "#1 frame_skipped</a>" in todo
    assert "Move the breaking call out of the loop" in todo
    assert re.search(r'fix-status">fix torch_where: (verified|slower)<', todo), todo[:2000]
    svg = todo[todo.index("<svg"):todo.index("</svg>")]
    assert svg.count('class="graph-call"') == 48 and 'data-graph-calls="48"' in svg
    assert svg.count('class="return"') == 24 and ">#1 ↓<" in svg and 'class="eager"' in svg
    assert "<script" not in page and page.count('class="strip-label">') == 2  # fix: before/after
    shown = chromium_renders(page, "per-layer-branch", tmp_path)
    assert shown["scroll_width"] <= shown["client_width"] <= 1280, shown
    doc = parse(shown["dom"])
    assert len([n for n in doc.root.iter() if n.tag == "rect" and "graph-call" in n.classes()
                ]) == 48 + 48 + 1  # the call, and the fix's before (48) and after (1)
