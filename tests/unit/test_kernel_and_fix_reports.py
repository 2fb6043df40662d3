"""Reports of ``--kernels`` and ``--fix`` on recorded real results (tests/fixtures/results):
kernels.json is ``SortForMax`` and ``MaxNoSort`` scanned with ``--kernels --max-kernels 2
--fail-on fallback``; fix.json is ``PerLayerBranch --fix``. Torch-free: nothing is scanned here.
"""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from breakscan.runs.gate import evaluate
from breakscan.options import GateOptions
from breakscan.report.terminal import render_runs
from conftest import SAMPLES, locate, recorded_runs

KERNELS = SAMPLES / "kernels.py"


def _terminal(runs) -> str:
    console = Console(record=True, width=100, file=io.StringIO())
    render_runs(runs, console)
    return " ".join(console.export_text().split())


def test_the_kernel_gate_counts_kernels_per_call_and_fails_on_the_fallback():
    sort, no_sort = recorded_runs("kernels")
    _, sort_line = locate("v, _ = torch.sort(h, dim=-1)", KERNELS)
    (graph,) = sort.result.graphs
    assert [k.kind for k in graph.inductor.kernels] == ["fused", "fallback", "fused"]
    assert sort.result.summary.kernels_per_call == 3.0
    checks = {c.name: (c.actual, c.passed) for c in sort.result.gate.checks}
    assert checks == {"max_kernels": (3, False), "fail_on:fallback": (1, False)}
    assert sort.exit_code == 1
    assert no_sort.exit_code == 0 and no_sort.result.kernel_findings == []
    assert [(f.rule, f.line) for f in sort.result.kernel_findings] == [("BS201", sort_line)]


def test_a_kernel_gate_without_kernels_measured_fails_and_says_why():
    (sort, _) = recorded_runs("kernels")
    for graph in sort.result.graphs:
        graph.inductor = None
    sort.result.summary.kernels_per_call = None
    gate = evaluate(sort.result, GateOptions(max_kernels=10, fail_on=("fallback",)))
    assert not gate.passed
    assert all("not measured (run with --kernels)" in c.detail for c in gate.checks)


def test_json_has_the_kernel_fields_on_each_graph():
    sort, _ = recorded_runs("kernels")
    doc = json.loads(json.dumps(sort.result.to_dict(), default=str))
    graph = doc["graphs"][0]
    for key in ("ir", "ir_nodes", "kernel_count", "kernels", "fallbacks", "fusion_stops",
                "inductor_compile_s", "inductor_error"):
        assert key in graph
    assert "inductor" not in graph
    assert graph["fallbacks"][0]["op"] == "aten.sort.stable"
    assert doc["kernel_findings"][0]["rule"] == "BS201"
    assert doc["summary"]["kernels_per_call"] == 3.0


def test_terminal_shows_the_kernels_table_the_rule_and_its_advice():
    text = _terminal(recorded_runs("kernels")[:1])
    _, sort_line = locate("v, _ = torch.sort(h, dim=-1)", KERNELS)
    assert "Kernels (Inductor, compiled once per graph, 3 kernels launched per call)" in text
    assert "graph 1: 6 ops → 3 kernels (2 fused, 1 fallback); Inductor's generated_kernel_count " \
           "2" in text
    assert f"op1 fallback sort sort kernels.py:{sort_line}" in text  # the name; numbers kept
    assert f"BS201 fallback-kernel · graph 1 · sample_models/kernels.py:{sort_line}" in text
    assert "fix: Compute only what you need" in text
    assert "· kernels 3" in text  # the summary line's per-call count


def test_terminal_shows_a_verified_fix_with_its_same_process_timing():
    """What `breakscan per_layer_branch.py:PerLayerBranch --fix` prints (recorded)."""
    text = _terminal(recorded_runs("fix"))
    assert ("graphs 3 → 1 · graph calls per call 48 → 1 · returns to Python per call 24 → 0 · "
            "frames run eagerly 1 → 0 · breaks 1 → 0 · outputs match") in text
    assert "interleaved block pairs of" in text and "same process" in text
    assert any(v in text for v in ("× faster (95 % CI", "× SLOWER (95 % CI",
                                   "no measurable difference ("))


def test_terminal_says_where_a_written_fix_went_and_its_backup():
    """`--fix --write` (tests/cli/test_fixes_cli.py checks the file, the backup and stderr)."""
    (run,) = recorded_runs("fix")
    fix = next(f for f in run.result.fixes if f.verified)
    fix.written, fix.backup = True, f"{fix.file}.breakscan.bak"
    text = _terminal([run])
    assert "written to sample_models/per_layer_branch.py (backup " \
           "sample_models/per_layer_branch.py.breakscan.bak)" in text


def test_html_shows_each_graphs_kernels_ir_and_findings_escaped():
    from breakscan.report.html import to_html

    sort, _ = recorded_runs("kernels")
    page = to_html([sort])
    assert "Inductor: 6 ops → 3 kernel(s), generated_kernel_count 2" in page
    assert "<code>aten.sort.stable</code>" in page
    assert "%relu: f32[4, 64] = relu(%l_x_)" in page  # the IR, in a <pre>
    assert "Inside the graphs (kernel rules)" in page and "<code>BS201</code>" in page
    assert 'data-key="kernels_per_call"' in page


def test_the_config_keys_and_the_kernel_gate_turn_kernels_on():
    import pytest

    from breakscan.config import from_config
    from breakscan.errors import UsageError

    scan, gate, _ = from_config({"kernels": True}, target="m.py:M", where="t")
    assert scan.kernels and not gate.active
    for entry in ({"max-kernels": 40}, {"fail-on": ["fallback"]}):
        scan, gate, _ = from_config(entry, target="m.py:M", where="t")
        assert scan.kernels and gate.needs_kernels
    scan, gate, _ = from_config({"fail-on": ["item"]}, target="m.py:M", where="t")
    assert not scan.kernels and not gate.needs_kernels
    with pytest.raises(UsageError, match="unknown --fail-on category fallbacks; choose from "):
        from_config({"fail-on": ["fallbacks"]}, target="m.py:M", where="t")


def test_the_kernel_rules_are_in_the_one_catalogue():
    from breakscan.rules.catalogue import CATALOGUE, find_rule

    kernel = [r for r in CATALOGUE if r.kind == "kernel"]
    assert [r.id for r in kernel] == ["BS201", "BS202", "BS203", "BS204", "BS205"]
    assert all(r.why and r.suggestion and r.before and r.after for r in kernel)
    assert find_rule("fallback").id == "BS201" and find_rule("layout-copy").id == "BS203"


def test_compare_with_kernels_shows_kernels_per_call_for_both():
    """`breakscan compare kernels.py:SortForMax kernels.py:MaxNoSort --kernels` (recorded)."""
    from breakscan.report.terminal import render_comparison
    from breakscan.model.result import Comparison

    sort_run, max_run = recorded_runs("kernels")
    console = Console(record=True, width=100, file=io.StringIO())
    render_comparison(Comparison(sort_run, max_run, weights_shared=True, outputs=None), console)
    rows = [" ".join(line.replace("│", " ").split()) for line in console.export_text().splitlines()]
    assert "kernels per call 3 1" in rows


def test_only_fusion_stops_a_user_can_act_on_are_kept():
    from breakscan.analysis.kernels import fusion_stop_kind
    from breakscan.model.records import FusionStop

    def stop(reason, first_ops, second_ops):
        return FusionStop("op1", "op2", reason, ["m.py:3"], ["m.py:4"], first_ops, second_ops)

    assert fusion_stop_kind(stop("intermediate nodes between node1 & node2",
                                 ["prims.convert_element_type.default", "aten.exp.default"],
                                 ["aten.sum.dim_IntList", "reduction"])) == "cast"
    assert fusion_stop_kind(stop("memory deps did not match", ["aten.permute.default"],
                                 ["aten.add.Tensor"])) == "layout"
    assert fusion_stop_kind(stop("intermediate nodes between node1 & node2",
                                 ["aten.mul.Tensor"], ["aten.sum.dim_IntList", "reduction"])) \
        == "reduction"
    assert fusion_stop_kind(stop("no shared data", ["aten.permute.default"], ["reduction"])) \
        is None
    assert fusion_stop_kind(stop("exceeds max fusion", ["aten.mul.Tensor"],
                                 ["aten.add.Tensor"])) is None


def test_a_program_run_with_kernels_shows_kernels_per_region_call_everywhere():
    """program_kernels.json: `breakscan run --kernels --max-kernels 2` of
    tests/fixtures/programs/kernel_program.py (one region called 3 times, one graph of 3
    kernels): the region's kernels per call in the terminal's, Markdown's and HTML's region
    tables, the gate on it; the train_loop run without --kernels has no such column."""
    from breakscan.report.github import to_markdown
    from breakscan.report.html import to_html

    (run,) = recorded_runs("program_kernels")
    (region,) = run.result.program.regions
    assert (region.calls, region.graph_calls, region.kernels_per_call) == (3, 3, 3.0)
    assert run.result.summary.kernels_per_call == 3.0
    assert [(c.name, c.actual, c.passed) for c in run.result.gate.checks] == [
        ("max_kernels", 3, False)]
    assert [f.rule for f in run.result.kernel_findings] == ["BS201"]
    from breakscan.report.terminal_kinds import regions_table

    columns = regions_table(run.result.program).columns
    assert (columns[-1].header, [str(c) for c in columns[-1]._cells]) == ("kernels", ["9 (3)"])
    assert "per call: graph calls 1 · returns to Python 0 · kernels 3" in _terminal([run])
    assert "| `top_score` | 3 | 3 | 0 | 0 | 3 |" in to_markdown([run])
    assert '<td data-label="kernels per call" class="num">3</td>' in to_html([run])
    (plain,) = recorded_runs("program")
    assert "kernels" not in [c.header for c in regions_table(plain.result.program).columns]
    assert "kernels per call" not in to_markdown([plain]) + to_html([plain])


def test_html_colours_each_kernel_on_the_source_lines_and_the_ir(tmp_path):
    """SortForMax's three kernels: each source line names the kernel made from it (the sort's
    line also its BS201 finding), in the kernel's colour, linking to its row of the graph's
    kernel table; each IR line has its kernel's colour and links to its source line; every
    in-page link resolves; a crafted kernel name is escaped."""
    import re

    from breakscan.report.html import to_html

    sort, _ = recorded_runs("kernels")
    page = to_html([sort])
    _, at = locate("v, _ = torch.sort(h, dim=-1)", KERNELS)  # the lines before and after it
    lines = {"op0": at - 1, "op1": at, "op4": at + 1}  # relu and mul; the sort; slice and add
    for colour, (name, line) in enumerate(lines.items()):
        kind = "fallback" if name == "op1" else "fused"
        row = re.search(rf'<tr id="model-1-f0-L{line}"[^>]*>.*?</tr>', page, re.S).group(0)
        assert f'<a class="kchip k{colour} {kind}" href="#model-1-g0-k-{name}"' in row
        assert f'<tr id="model-1-g0-k-{name}" class="kernel k{colour} {kind}">' in page
    sort_row = re.search(rf'<tr id="model-1-f0-L{lines["op1"]}"[^>]*>.*?</tr>', page,
                         re.S).group(0)
    assert '<a class="kchip finding" href="#model-1-kf-0"' in sort_row and ">BS201<" in sort_row
    assert (f'<tr class="k1 fallback"><td class="code">%sort: (f32[4, 64], i64[4, 64]) = '
            f'sort(%h, dim=-1)</td><td class="where"><a href="#model-1-f0-L{lines["op1"]}">'
            f'sample_models/kernels.py:{lines["op1"]}</a>') in page
    ids = set(re.findall(r' id="([^"]+)"', page))
    assert {h for h in re.findall(r'href="#([^"]+)"', page)} <= ids
    sort.result.graphs[0].inductor.kernels[0].name = '<img src=x onerror=alert(1)>'
    crafted = to_html([sort])
    assert "<img src=x" not in crafted and "&lt;img src=x onerror=alert(1)&gt;" in crafted



@pytest.mark.parametrize("verdict, status", [
    ("faster", "verified"), ("no measurable difference", "no effect"), ("slower", "slower"),
    (None, "no effect")])
def test_a_kernel_rules_rewrite_is_verified_only_when_its_timing_says_faster(verdict, status):
    """A kernel rule's rewrite that removes a finding and changes no graph, graph call or kernel
    count (kernels.json's SortForMax, its finding taken away as the rescan): only a faster
    same-process timing makes it a gain; the numbers say "kernel findings 1 → 0"."""
    import copy

    from breakscan.fixes.judge import judge, metrics
    from breakscan.report.wording import fix_numbers
    from breakscan.model.result import FixedScan
    from breakscan.model.verdicts import ABTiming, Correctness, Fix, Interval

    sort, _ = recorded_runs("kernels")
    rescan = copy.deepcopy(sort.result)
    rescan.kernel_findings = []
    fixed = FixedScan(result=rescan, same_outputs=Correctness(True, 0.0, None))
    if verdict:
        ratio = {"faster": Interval(1.5, 1.4, 1.6), "slower": Interval(0.9, 0.88, 0.92),
                 "no measurable difference": Interval(1.0, 0.98, 1.02)}[verdict]
        fixed.ab = ABTiming(Interval(1.0, 0.9, 1.1), Interval(1.0, 0.9, 1.1), ratio, verdict,
                            10, 10, 1, "inductor")
    fix = Fix(rule="BS202", fix_id="drop_round_trip", kind="source", title="t",
              category="dtype_cast", before=metrics(sort.result))
    judge(fix, fixed, dynamic=False)
    assert (fix.before.kernel_findings, fix.after.kernel_findings) == (1, 0)
    assert fix.status == status and fix.verified == (status == "verified")
    assert "kernels per call 3 → 3 · kernel findings 1 → 0" in fix_numbers(fix)
    if status != "verified":
        assert "removes" in fix.reason and "no gain" in fix.reason
