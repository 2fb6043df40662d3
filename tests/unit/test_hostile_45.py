"""Issue 45 §5: messages on hostile input, decided before any process starts."""

from __future__ import annotations

import pytest

from breakscan.errors import UsageError, describe
from breakscan.options import ScanOptions
from breakscan.target import check_fits_memory, parse_shape


def test_a_dimension_no_tensor_can_have_is_refused_in_one_line():
    with pytest.raises(UsageError) as err:
        parse_shape("99999999999999999999999,8")
    assert str(err.value) == ("bad --input-shape '99999999999999999999999,8': dimension "
                              "99999999999999999999999 is too large for a tensor")
    assert parse_shape("8,16") == [8, 16]


def test_inputs_larger_than_memory_are_refused_before_a_scan_starts():
    with pytest.raises(UsageError) as err:
        check_fits_memory([[8, 16], [1000, 1000, 1000]], "float64", memory=4 * 2**30)
    assert str(err.value) == ("--input-shape 1000,1000,1000 is 1e+09 elements (7 GiB as "
                              "float64), more than this machine's 4 GiB of memory: use a smaller "
                              "--input-shape")
    check_fits_memory([[1000, 1000, 1000]], "int8", memory=4 * 2**30)  # 1 GB: fits
    with pytest.raises(UsageError, match="--vary-batch"):  # the largest batch counts too
        ScanOptions(input_shapes=("8,100,100,100",), vary_batch="8,100000000").check(
            "sample_models/print_in_forward.py:PrintInForward")


def test_torchs_cpp_backtrace_never_reaches_a_message():
    exc = TypeError("randn(): argument 'size' failed to unpack the object at pos 1 with error "
                    "\"Overflow when unpacking long long\nException raised from "
                    "THPUtils_unpackLong at /w/torch/csrc/utils/python_numbers.h:79 (most recent "
                    "call first):\nframe #0: c10::Error::Error(c10::SourceLocation, "
                    "std::string) + 0x96\nframe #1: <unknown function> + 0x4f\"")
    text = describe(exc)
    assert text == ("TypeError: randn(): argument 'size' failed to unpack the object at pos 1 "
                    "with error \"Overflow when unpacking long long")
    assert "frame #" not in text and "c10::" not in text


def test_a_models_root_causes_have_one_numbering_timed_or_not():
    """Issue 45 §2: ranked by a measured cost under --fix (which times) and by counts in a plain
    scan, one model's root causes were numbered two ways. The rank is counted (fires per call ×
    graph splits); the cost only breaks ties."""
    from types import SimpleNamespace

    from breakscan.analysis.ranking import rank

    def brk(name, fires, splits, cost):
        return SimpleNamespace(name=name, owner="user", fires_per_call=fires, graph_splits=splits,
                               cost_s_per_call=cost, caused_by=None, hint_classes=[], code="",
                               frame_skipped=False, file="m.py", line=1)

    def order(costs):
        found = SimpleNamespace(breaks=[brk("once", 1.0, 1, costs[0]),
                                        brk("per layer", 12.0, 1, costs[1]),
                                        brk("tie", 1.0, 1, costs[2])], frames=[])
        rank(found)
        return [b.name for b in found.breaks]

    plain = order([None, None, None])
    assert plain == ["per layer", "once", "tie"]
    assert order([5e-3, 1e-4, 2e-5]) == plain  # timed: a costly single break does not jump
    assert order([1e-5, 1e-4, 2e-5]) == ["per layer", "tie", "once"]  # a tie: the cost decides
