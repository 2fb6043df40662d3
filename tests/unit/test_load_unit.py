"""Parsing a target, an input shape and --init-args: every supported form and the one-line
errors (no torch, no scan)."""

from __future__ import annotations

import pytest

from breakscan.errors import UsageError
from breakscan.target import parse_init_args, parse_shape, parse_target


@pytest.mark.parametrize("text, expected", [
    ("model.py:Net", ("model.py", True, "Net", None)),
    ("dir/model.py:Net.infer", ("dir/model.py", True, "Net", "infer")),
    ("pkg.models:Net", ("pkg.models", False, "Net", None)),
    ("pkg.models:make.generate", ("pkg.models", False, "make", "generate")),
])
def test_parse_target(text, expected):
    spec = parse_target(text)
    assert (spec.source, spec.is_file, spec.name, spec.method) == expected


@pytest.mark.parametrize("text", ["model.py", "model.py:", ":Net", "model.py:Net.a.b",
                                  "model.py:1Net", "bad module:Net"])
def test_parse_target_rejects(text):
    with pytest.raises(UsageError):
        parse_target(text)


@pytest.mark.parametrize("text, dims", [("8,16", [8, 16]), ("8x16", [8, 16]), (" 4 , 2 ", [4, 2]),
                                        ("(2,3)", [2, 3]), ("0,4", [0, 4]), ("()", [])])
def test_parse_shape(text, dims):
    assert parse_shape(text) == dims


@pytest.mark.parametrize("text", ["8,,16", "-1", "abc", "8,16.5", "8;16", "", "99999999999999999999,16x"])
def test_parse_shape_rejects(text):
    with pytest.raises(UsageError, match="--input-shape"):
        parse_shape(text)


def test_parse_init_args():
    assert parse_init_args('{"width": 12}') == {"width": 12}
    with pytest.raises(UsageError, match="not valid JSON"):
        parse_init_args("{width: 12}")
    with pytest.raises(UsageError, match="JSON object"):
        parse_init_args("[1, 2]")
