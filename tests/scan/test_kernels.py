"""``--kernels``: what Inductor made of each graph, checked against Inductor itself.

Each kernel sample (sample_models/kernels.py) is scanned with ``kernels=True``; in the same test
the model is compiled by a plain ``torch.compile`` (FX-graph cache off, so Inductor lowers) and
``torch._inductor.metrics.generated_kernel_count`` must equal the scan's ``kernel_count``. The
finding must be the rule's, at the exact line; the twin has no finding. Every compile is a cold
g++ compile (1–2 s), so all but one pair run in the slow suite.
"""

from __future__ import annotations

import json

import pytest
import torch

from breakscan import scan
from conftest import FIXTURES, SAMPLES, inductors_own_kernel_count, locate, run_cli

KERNELS = SAMPLES / "kernels.py"

# (model, shape, dtype, rule, category, the line's text) and its twin
CASES = [
    ("SortForMax", "4,64", "float32", "BS201", "fallback", "v, _ = torch.sort(h, dim=-1)",
     "MaxNoSort", "4,64"),
    ("CastRoundTrip", "4,64", "float32", "BS202", "dtype_cast",
     "h = h.to(torch.float64).sin().to(torch.float32)", "NoCast", "4,64"),
    ("HalfUpcast", "4,64", "bfloat16", "BS202", "dtype_cast", "h = h.float().softmax(-1)",
     "HalfKept", "4,64"),
    ("LayoutCopy", "8,64,256", "float32", "BS203", "layout_copy",
     "h = x.transpose(1, 2).contiguous()", "LayoutView", "8,256,64"),
    ("PairwiseBroadcast", "256,8", "float32", "BS204", "broadcast",
     "d = a[:, None, :] - a[None, :, :]", "PairwiseProjected", "256,8"),
]
FAST = {"SortForMax"}


def inductors_own_count(name: str, shape: str, dtype: str) -> int:
    return inductors_own_kernel_count(f"{KERNELS}:{name}", input_shapes=[shape], dtype=dtype)


PARAMS = [pytest.param(*case, marks=() if case[0] in FAST else (pytest.mark.slow,), id=case[0])
          for case in CASES]


@pytest.mark.parametrize("name,shape,dtype,rule,category,code,twin,twin_shape", PARAMS)
def test_each_kernel_rule_at_its_line_with_inductors_own_kernel_count(
        name, shape, dtype, rule, category, code, twin, twin_shape):
    result = scan(f"{KERNELS}:{name}", input_shapes=[shape], dtype=dtype, kernels=True)
    assert (result.summary.graph_count, result.summary.graph_break_count) == (1, 0)
    (graph,) = result.graphs
    found = graph.inductor
    assert found is not None and found.error is None
    assert found.kernel_count == inductors_own_count(name, shape, dtype)
    _, line = locate(code, KERNELS)
    assert [(f.rule, f.category, f.line) for f in result.kernel_findings] == \
        [(rule, category, line)]
    assert result.kernel_findings[0].file == str(KERNELS)
    # every IR line of the graph's ops names a kernel and the line it came from
    ops = [n for n in found.nodes if n.op not in ("placeholder", "output", "getitem")]
    assert ops and all(n.file == str(KERNELS) and n.line for n in ops)
    assert all(n.kernels for n in ops if n.shape is not None)
    assert result.summary.kernels_per_call == len(found.kernels)

    if name == "HalfUpcast":  # the float32 island keeps the softmax apart: a cast to act on
        from breakscan.analysis.kernels import actionable_stops

        _, upcast = locate("h = h.float().softmax(-1)", KERNELS)
        stops = actionable_stops(found)
        assert stops and {s.kind for s in stops} == {"cast"}
        assert all(f"{KERNELS}:{upcast}" in s.first_lines + s.second_lines for s in stops)
    fixed = scan(f"{KERNELS}:{twin}", input_shapes=[twin_shape], dtype=dtype, kernels=True)
    assert fixed.kernel_findings == []
    assert fixed.graphs[0].inductor.kernel_count == inductors_own_count(twin, twin_shape, dtype)


def test_the_fallback_is_named_with_its_kernel_and_the_ir_shows_types_and_lines():
    result = scan(f"{KERNELS}:SortForMax", input_shapes=["4,64"], kernels=True)
    found = result.graphs[0].inductor
    _, sort_line = locate("v, _ = torch.sort(h, dim=-1)", KERNELS)
    assert [(f.op, f.line) for f in found.fallbacks] == [("aten.sort.stable", sort_line)]
    assert [(k.kind, k.op) for k in found.kernels] == [
        ("fused", None), ("fallback", "aten.sort.stable"), ("fused", None)]
    ir = found.ir.splitlines()
    assert any(line.startswith("%relu: f32[4, 64] = relu(%l_x_)") for line in ir)
    assert any("sort(%h, dim=-1)" in line and f"kernels.py:{sort_line}" in line
               for line in ir)


def test_without_kernels_nothing_is_compiled_by_inductor():
    result = scan(f"{KERNELS}:SortForMax", input_shapes=["4,64"])
    assert all(g.inductor is None for g in result.graphs)
    assert result.kernel_findings == [] and result.summary.kernels_per_call is None
    doc = result.to_dict()
    assert doc["graphs"][0]["ir"] is None and doc["graphs"][0]["kernels"] == []


def test_a_host_sync_kept_in_the_graph_is_found_and_inductors_failure_is_reported():
    """capture_scalar_outputs keeps `.item()` in the graph (BS205). breakscan's Inductor compile
    of that graph (outside Dynamo's tracing context) fails on the unbacked scalar: the graph
    says so instead of a kernel count."""
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        result = scan(f"{KERNELS}:ItemInGraph", input_shapes=["4,64"], kernels=True)
    _, line = locate("scale = x.abs().max().item()", KERNELS)
    assert [(f.rule, f.line) for f in result.kernel_findings] == [("BS205", line)]
    (graph,) = result.graphs
    assert graph.inductor.error.startswith("DataDependentOutputException")
    assert graph.inductor.kernel_count is None and result.summary.kernels_per_call is None


@pytest.mark.slow
def test_with_time_the_timed_compile_is_the_inspected_one():
    """--time with Inductor and --kernels: one Inductor compile per graph for both. Its kernels
    are those of the separate inspection, and its count is Inductor's own."""
    from breakscan.options import TimingOptions

    target = f"{KERNELS}:SortForMax"
    alone = scan(target, input_shapes=["4,64"], kernels=True)
    timed = scan(target, input_shapes=["4,64"], kernels=True,
                 timing=TimingOptions(max_run_time=0.05))
    assert "kernels" in alone.stages and "kernels" not in timed.stages
    assert any(n.startswith("--kernels: read from the timed compile") for n in timed.notes)
    (one,), (two,) = alone.graphs, timed.graphs
    assert two.inductor.kernel_count == one.inductor.kernel_count == \
        inductors_own_count("SortForMax", "4,64", "float32")
    assert [(k.kind, k.aten_ops, k.lines) for k in two.inductor.kernels] == \
        [(k.kind, k.aten_ops, k.lines) for k in one.inductor.kernels]
    assert two.inductor.ir == one.inductor.ir
    assert [(f.rule, f.line) for f in timed.kernel_findings] == \
        [(f.rule, f.line) for f in alone.kernel_findings]
    assert timed.timings.compiled is not None and timed.timings.compile_error is None


@pytest.mark.slow
def test_inside_the_timed_compile_a_graph_with_an_unbacked_scalar_compiles():
    """The same graph as above (BS205), compiled inside torch.compile's tracing context: it gets
    its kernels, where the separate compile fails."""
    from breakscan.options import TimingOptions

    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        result = scan(f"{KERNELS}:ItemInGraph", input_shapes=["4,64"], kernels=True,
                      timing=TimingOptions(max_run_time=0.05))
    _, line = locate("scale = x.abs().max().item()", KERNELS)
    assert [(f.rule, f.line) for f in result.kernel_findings] == [("BS205", line)]
    (graph,) = result.graphs
    assert graph.inductor.error is None and graph.inductor.kernel_count >= 1
    assert result.summary.kernels_per_call == len(graph.inductor.kernels)


def _verified_with_kernels(target: str, shape: str, fix_id: str):
    """`TARGET -s SHAPE --kernels --fix` in process: the scan, and its fix ``fix_id`` verified."""
    from breakscan.fixes.verify import verify_fixes
    from breakscan.options import Limits, ScanOptions, TimingOptions

    options = ScanOptions(input_shapes=(shape,), kernels=True,
                          timing=TimingOptions(max_run_time=0.05))
    result = scan(target, options)
    (fix,) = [f for f in verify_fixes(target, options, result, Limits()) if f.fix_id == fix_id]
    return result, fix


@pytest.mark.slow
def test_fix_with_kernels_shows_the_kernels_before_and_after():
    """`--fix --kernels`: each fix's rescan compiles its graphs with Inductor too; the numbers
    before and after include kernels launched per call, each what a scan of that model with
    --kernels counts (the fixed model: its twin, TensorWhere)."""
    from breakscan.report.wording import fix_numbers

    result, fix = _verified_with_kernels(f"{SAMPLES}/tensor_branch.py:TensorIf", "8,16",
                                         "torch_where")
    assert fix.status in ("verified", "slower")
    assert fix.before.kernels_per_call == result.summary.kernels_per_call == \
        sum(len(g.inductor.kernels) * g.calls_per_call for g in result.graphs)
    twin = scan(f"{SAMPLES}/tensor_branch.py:TensorWhere", input_shapes=["8,16"], kernels=True)
    fixed_count = int(twin.summary.kernels_per_call)
    assert fix.after.kernels_per_call == fixed_count
    assert f"kernels per call {int(fix.before.kernels_per_call)} → {fixed_count}" in \
        fix_numbers(fix)


PROGRAM = FIXTURES / "programs" / "kernel_program.py"


def test_run_kernels_reads_the_programs_own_inductor_compile():
    """`breakscan run --kernels`: the program's own Inductor compile is the inspected one (no
    compile more: Inductor's count over the whole run equals the graph's); the fallback at the
    sort's line; kernels per call of the region = its graph's kernels (one graph call per call)."""
    from torch._inductor import metrics

    from breakscan import ProgramOptions, run_program

    before = metrics.generated_kernel_count
    result = run_program(ProgramOptions(script=str(PROGRAM), kernels=True, quiet=True))
    made = metrics.generated_kernel_count - before
    assert result.program.exit_code == 0 and "scored" in result.model_output
    (graph,) = result.graphs
    found = graph.inductor
    assert found.error is None and found.kernel_count == made == 2
    assert [k.kind for k in found.kernels] == ["fused", "fallback", "fused"]
    _, sort_line = locate("v, _ = torch.sort(h, dim=-1)", PROGRAM)
    assert [(f.rule, f.line) for f in result.kernel_findings] == [("BS201", sort_line)]
    (region,) = result.program.regions
    assert (region.calls, region.graph_calls) == (3, 3)
    assert region.kernels_per_call == result.summary.kernels_per_call == 3
    assert any("the program's own Inductor compiles" in n for n in result.notes)


@pytest.mark.slow
def test_run_kernels_of_another_backend_and_its_gate(tmp_path):
    """A program compiling with aot_eager: each graph is compiled once more by Inductor, the
    same kernels as the Inductor run (Inductor's own count); `--max-kernels` gates per region
    call (3 kernels > 2: exit 1), and implies --kernels."""
    report = tmp_path / "run.json"
    proc = run_cli("run", "--max-kernels", "2", "--format", "json", "-o", str(report),
                   str(PROGRAM), "aot_eager")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(report.read_text())
    (graph,) = data["graphs"]
    assert graph["kernel_count"] == 2  # Inductor's own count, pinned by the test above
    assert [k["kind"] for k in graph["kernels"]] == ["fused", "fallback", "fused"]
    assert data["program"]["regions"][0]["kernels_per_call"] == 3
    assert any("compiled once more by Inductor" in n for n in data["notes"])
    (check,) = [c for c in data["gate"]["checks"] if c["name"] == "max_kernels"]
    assert not check["passed"]


@pytest.mark.slow
def test_fix_with_kernels_drops_a_dtype_round_trip():
    """`--fix --kernels` on CastRoundTrip: BS202's rewrite drops the cast to float64 and back
    (the exact diff), its rescan has no kernel finding and the same kernels, the outputs
    match; whether it is verified is the same-process timing's call (1.02x to 4x measured)."""
    _, fix = _verified_with_kernels(f"{KERNELS}:CastRoundTrip", "4,64", "drop_round_trip")
    _, line = locate("h = h.to(torch.float64).sin().to(torch.float32)", KERNELS)
    assert (fix.rule, fix.category, fix.line) == ("BS202", "dtype_cast", line)
    assert "-        h = h.to(torch.float64).sin().to(torch.float32)\n" \
           "+        h = h.sin()\n" in fix.diff
    assert (fix.before.kernel_findings, fix.after.kernel_findings) == (1, 0)
    assert fix.before.kernels_per_call == fix.after.kernels_per_call == 1
    assert fix.outputs_match and fix.status in ("verified", "no effect", "slower")
    assert fix.ab is not None  # a finding gone is timed against the original


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (Triton kernels)")
def test_cuda_kernels_are_triton_kernels_with_inductors_own_count():
    """On CUDA Inductor generates Triton kernels: the count equals Inductor's own for the same
    model on the device, and every op of the IR names the line it came from."""
    name, shape = "CastRoundTrip", "4,64"
    result = scan(f"{KERNELS}:{name}", input_shapes=[shape], device="cuda", kernels=True)
    (graph,) = result.graphs
    assert graph.inductor.error is None
    assert graph.inductor.kernel_count == inductors_own_kernel_count(
        f"{KERNELS}:{name}", input_shapes=[shape], device="cuda")
    _, line = locate("h = h.to(torch.float64).sin().to(torch.float32)", KERNELS)
    assert [(f.rule, f.line) for f in result.kernel_findings] == [("BS202", line)]
