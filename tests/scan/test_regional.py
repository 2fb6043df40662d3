"""Issue 47 §2: compiling less, proved. A stack of one block class is found on the eager run
(``repeated_blocks``), compiling each block alone is proposed (``regional_compile``) and judged
on its cold compile against the whole model's, in one process, with the run time timed
interleaved; a model where nothing repeats gets no such proposal."""

from __future__ import annotations

from breakscan import scan

from conftest import FIXTURES, SAMPLES, fixes_in_process, locate

CASES = FIXTURES / "models" / "regional_cases.py"


def test_a_stack_of_one_block_class_is_found_on_the_eager_run():
    result = scan(f"{CASES}:Stack16", input_shapes=["8,16"])
    (block,) = result.repeated_blocks  # the Linear and LayerNorm inside: torch's, not blocks
    assert (block.name, block.instances, block.calls) == ("Block", 16, 16)
    assert (block.file, block.line) == (str(CASES), locate("class Block(nn.Module):", CASES)[1])
    assert block.parameters == 16 * 2 + 16 * 32 + 32 + 32 * 16 + 16
    assert scan(f"{CASES}:NoRepeats", input_shapes=["8,16"]).repeated_blocks == []


def test_compiling_the_repeated_block_alone_is_judged_on_its_cold_compile():
    """16 tiny blocks: the block alone compiles in a fraction of the whole model's cold compile
    (one code for 16 calls), the outputs match, and calling 16 compiled blocks costs run time
    on blocks this small: the status says both numbers."""
    fixes = fixes_in_process(f"{CASES}:Stack16")
    (fix,) = [f for f in fixes if f["fix_id"] == "regional_compile"]
    whole, alone = fix["before"]["cold_compile_s"], fix["after"]["cold_compile_s"]
    assert 0 < alone < 0.9 * whole, (whole, alone)
    assert fix["outputs_match"] and fix["kind"] == "switch"
    assert (fix["before"]["graph_calls_per_call"], fix["after"]["graph_calls_per_call"]) == (1, 16)
    assert fix["status"] in ("verified", "slower"), fix["reason"]
    assert f"cold compile {whole:.2f} s -> {alone:.2f} s" in fix["reason"]
    assert "run time" in fix["reason"]
    assert "block.compile()" in fix["setting"]


def test_nothing_repeated_nothing_proposed():
    assert "regional_compile" not in [f["fix_id"] for f in fixes_in_process(f"{CASES}:NoRepeats")]


def test_dynamic_true_for_recompiles_says_the_compile_time_it_saves_or_costs():
    """`dynamic=True` for a model recompiled over batch sizes: its child compiles both cold
    over the same input sets, so the numbers say what the recompiles it removes cost (on a
    model this small a dynamic compile may cost more than three static ones: said as measured)."""
    fixes = fixes_in_process(f"{SAMPLES}/shape_branch.py:ShapeBranch", vary_batch=(2, 4, 16))
    (fix,) = [f for f in fixes if f["fix_id"] == "dynamic"]
    assert fix["before"]["recompiles"] > fix["after"]["recompiles"]
    assert fix["before"]["cold_compile_s"] > 0 and fix["after"]["cold_compile_s"] > 0
