"""The user's torch.compile settings parsed from the CLI's strings, the config and Python (no
torch, no scan)."""

from __future__ import annotations

import json

from breakscan.config import from_config
from breakscan.options import ScanOptions


def test_the_settings_parse_from_the_cli_the_config_and_python():
    assert ScanOptions(dynamic="true").dynamic is True
    assert ScanOptions(compile_options=["b=True", "a=3", "c=fast"]).compile_options == (
        ("a", 3), ("b", True), ("c", "fast"))
    assert ScanOptions(compile_options={"a": 1}).compile_options == (("a", 1),)
    options = ScanOptions(dynamic=True, compile_options=["a=1"])
    assert ScanOptions.from_dict(json.loads(json.dumps(options.to_dict()))) == options
    scan_options, _, _ = from_config({"dynamic": True, "compile-option": ["max_autotune=False"]},
                                     target="m.py:Net", where="pyproject.toml")
    assert (scan_options.dynamic, scan_options.compile_options) == (
        True, (("max_autotune", False),))
