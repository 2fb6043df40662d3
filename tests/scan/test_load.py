"""Loading targets and building inputs: every supported form, and the one-line errors."""

from __future__ import annotations

import pytest
import torch

from breakscan import scan
from breakscan.errors import EXIT_MODEL_FAILED, EXIT_USAGE, ModelError, UsageError
from breakscan.pipeline.load import load_target

from conftest import FIXTURES, locate

VARIETY = FIXTURES / "models" / "variety.py"


def target(name: str) -> str:
    return f"{VARIETY}:{name}"


def test_class_with_init_args_and_helper_beside_it():
    loaded = load_target(target("Plain"), input_shapes=["2,12"], init_args='{"width": 12}')
    assert loaded.model.fc.in_features == 12
    assert not loaded.model.training  # eval() unless --train
    assert loaded.args[0].shape == (2, 12) and loaded.args[0].dtype == torch.float32


def test_factory_and_instance():
    assert load_target(target("make_plain"), input_shapes=["2,8"]).model.fc.in_features == 8
    assert load_target(target("prebuilt"), input_shapes=["2,4"]).model.fc.in_features == 4


def test_method_by_suffix_or_option_scans_that_method():
    by_suffix = scan(target("Plain.infer"), input_shapes=["2,16"])
    by_option = scan(target("Plain"), input_shapes=["2,16"], method="infer")
    for result in (by_suffix, by_option):
        assert result.method == "infer"
        assert [b.category for b in result.breaks] == ["print"]
        assert result.breaks[0].function == "infer"
        assert "infer torch.Size([2, 16])" in result.model_output


def test_int64_inputs_stay_inside_the_embedding_table():
    loaded = load_target(target("Tokens"), input_shapes=["4,32"], dtype="int64")
    ids = loaded.args[0]
    assert ids.dtype == torch.int64 and int(ids.min()) >= 0 and int(ids.max()) < 10


def test_inputs_factory_returning_a_dict():
    result = scan(target("DictInputs"), inputs=f"{VARIETY}:make_inputs")
    assert [(i.name, i.shape) for i in result.inputs] == [("x", [2, 3]), ("scale", [])]
    assert result.summary.graph_count == 1 and result.breaks == []


def test_two_positional_inputs():
    result = scan(target("TwoInputs"), input_shapes=["2,3", "2,3"])
    assert [i.name for i in result.inputs] == ["x", "mask"]


def test_non_tensor_outputs_are_fine():
    result = scan(target("ReturnsNonTensor"), input_shapes=["2,3"])
    assert result.summary.graph_count == 1


def test_train_mode_keeps_autograd():
    loaded = load_target(target("Plain"), input_shapes=["2,16"], train=True)
    assert loaded.model.training and loaded.training


# The full bad-input matrix runs through the CLI (tests/cli/); here, the Python
# API's side of it: one-line errors of the documented class.
@pytest.mark.parametrize("kwargs, error, code, text", [
    ({"target": target("Plian")}, UsageError, EXIT_USAGE, "did you mean Plain"),
    ({"target": target("Plain"), "dtype": "float8"}, UsageError, EXIT_USAGE, "unknown --dtype"),
    ({"target": f"{FIXTURES}/models/broken_syntax.py:Net"}, ModelError, EXIT_MODEL_FAILED,
     "SyntaxError"),
    ({"target": target("RaisesInInit")}, ModelError, EXIT_MODEL_FAILED, "weights file missing"),
])
def test_bad_input_errors(kwargs, error, code, text):
    kwargs.setdefault("input_shapes", ["2,16"])
    with pytest.raises(error) as info:
        scan(**kwargs)
    assert info.value.exit_code == code
    assert text in str(info.value)
    assert "\n" not in str(info.value)


def test_forward_raising_names_the_line():
    with pytest.raises(ModelError) as info:
        scan(target("RaisesInForward"), input_shapes=["2,3"])
    assert "RuntimeError: boom in forward" in str(info.value)
    _, line = locate('raise RuntimeError("boom in forward")', VARIETY)
    assert str(info.value).endswith(f"variety.py:{line}")


def test_shape_mismatch_is_a_model_error_with_a_hint():
    with pytest.raises(ModelError, match="check --input-shape"):
        scan(target("Plain"), input_shapes=["2,5"])


def test_inputs_too_large_to_allocate_is_a_usage_error():
    with pytest.raises(UsageError, match="is too large for a tensor"):  # checked before loading
        scan(target("Plain"), input_shapes=["99999999999999999999,16"])


def test_inputs_factory_returning_a_number_is_a_usage_error():
    with pytest.raises(UsageError, match="returned int"):
        scan(target("DictInputs"), inputs=f"{FIXTURES}/models/global_state.py:len_of_seen")


def test_cuda_without_cuda_is_a_usage_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(UsageError, match="--device cuda"):
        scan(target("Plain"), input_shapes=["2,16"], device="cuda")


def test_a_second_copy_leaves_the_first_copys_custom_ops_callable():
    """Loading a target's file again (a fix's copy, compare's other side) runs its
    ``torch.library.custom_op`` again, and torch destroys the earlier definition: calling it
    through the first copy read freed memory (``ValueError: basic_string::_M_create``, or a
    segfault that took a pytest worker down). The first copy's op now calls the live one."""
    import gc
    import sys

    from torch._library.custom_ops import OPDEFS

    from conftest import SAMPLES

    file = SAMPLES / "family_custom_op.py"
    first = load_target(f"{file}:FakeShapeOnly", input_shapes=["8,16"])
    # its module, now: a later copy may be imported under the same private module name
    op = sys.modules[type(first.model).__module__].soft_root_shape_only
    x = torch.randn(8, 16)
    expected = first.model(x)
    for _ in range(10):
        load_target(f"{file}:FakeReadsData", input_shapes=["8,16"])
        gc.collect()
        torch.testing.assert_close(first.model(x), expected, rtol=0, atol=0)
    live = OPDEFS["breakscan_samples::soft_root_shape_only"]
    assert op is not live and op._opoverload is live._opoverload
