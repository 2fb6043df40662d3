"""Real third-party architectures (Hugging Face transformers, tiny, random weights, offline).

Marked ``slow``: not in the default ``python -m pytest -q``; ``.ci/run`` runs them with
``-m slow`` after installing transformers (``--no-deps``, beside the CPU torch). For each model:
the isolated scan completes, its raw explain counts equal a separate ``torch._dynamo.explain`` on
the same inputs, and every root-cause break points into the installed package, owner
``third_party``. ``--durations`` in the CI log records each scan's time.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from breakscan.isolate import run_isolated

from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow

if importlib.util.find_spec("transformers") is None:
    if os.environ.get("BREAKSCAN_REQUIRE_TRANSFORMERS"):  # set by .ci/run: never skip there
        raise ImportError("transformers is not installed but BREAKSCAN_REQUIRE_TRANSFORMERS is set")
    pytest.skip("transformers is not installed", allow_module_level=True)

HF = FIXTURES / "third_party" / "hf_models.py"
IDS = {"input_shapes": ["2,16"], "dtype": "int64"}

# model -> (scan options, graphs, [(category, code fragment, file fragment)] of root-cause breaks)
CASES = {
    "gpt2": (IDS, 1, []),
    "bert": (IDS, 1, []),
    "llama": (IDS, 1, []),
    "t5": ({"inputs": f"{HF}:t5_inputs"}, 1, []),
    # The router picks experts with .nonzero()/torch.where: data-dependent output shapes.
    "switch": (IDS, 10, [
        ("dynamic_shape_op",
         "expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()",
         "switch_transformers/modeling_switch_transformers.py"),
        ("frame_skipped", "idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))",
         "switch_transformers/modeling_switch_transformers.py"),
    ]),
    # Global attention is decided in Python from a tensor: .item().
    "longformer": (IDS, 4, [
        ("item", "is_global_attn = is_index_global_attn.flatten().any().item()",
         "longformer/modeling_longformer.py"),
    ]),
}


def _explain_counts(name: str, options: dict) -> tuple[int, int, int, int]:
    """A separate, plain torch._dynamo.explain of the same model on the same inputs."""
    import torch

    from breakscan.load import load_target

    loaded = load_target(f"{HF}:{name}", **options)
    with torch.no_grad():
        out = torch._dynamo.explain(loaded.fn)(*loaded.args, **loaded.kwargs)
    return out.graph_count, out.graph_break_count, out.op_count, len(out.break_reasons)


@pytest.mark.parametrize("name", CASES)
def test_third_party_model(name):
    import transformers

    options, graphs, expected_breaks = CASES[name]
    os.chdir(ROOT)
    run = run_isolated(f"{HF}:{name}", options, timeout=300)
    assert run.error is None, run.error
    result = run.result
    assert result.summary.graph_count == graphs

    e = result.explain
    assert (e.graph_count, e.graph_break_count, e.op_count, len(e.break_reasons)) == \
        _explain_counts(name, options)

    package = str(Path(transformers.__file__).parent)
    for brk in result.breaks:
        assert brk.owner == "third_party" and brk.file.startswith(package), brk.location()
        assert Path(brk.file).read_text().splitlines()[brk.line - 1].strip() == brk.code
    found = {(b.category, b.code) for b in result.breaks}
    for category, code, file in expected_breaks:
        assert (category, code) in found, sorted(found)
        assert any(b.code == code and b.file.endswith(file) for b in result.breaks)
    if not expected_breaks:
        assert result.breaks == []
