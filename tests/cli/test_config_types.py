"""Issue 33 item 10: every ``[tool.breakscan]`` key is type-checked; a wrong type (or a value no
option object can hold) is exit 2 with one line naming the key, never exit 4 or a value read
as something else (``kernels = "false"`` turned --kernels on)."""

from __future__ import annotations

import shutil

import pytest

from breakscan.config import from_config
from breakscan.errors import UsageError

from conftest import SAMPLES, run_cli

ENTRY = '[tool.breakscan]\n[[tool.breakscan.targets]]\ntarget = "m.py:TensorIf"\n'


@pytest.mark.parametrize("line, message", [
    ('dtype = ["float32"]', "dtype takes a string, got an array ['float32']"),
    ('inputs = 5', "inputs takes a string, got 5"),
    ('train = "no"', 'train takes a boolean (true or false), got "no"'),
    ('kernels = "false"', 'kernels takes a boolean (true or false), got "false"'),
    ('kernels = 1', "kernels takes a boolean (true or false), got 1"),
    ('memory-limit = 9223372036854775807',
     "memory-limit must be at most 8796093022207 MB (the most setrlimit takes), got "
     "9223372036854775807"),
])
def test_a_wrong_value_in_the_config_is_exit_2_naming_the_key(tmp_path, line, message):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "m.py")
    (tmp_path / "pyproject.toml").write_text(f'{ENTRY}input-shape = ["8,16"]\n{line}\n')
    proc = run_cli("check", "--no-cache", "-q", cwd=tmp_path, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "Traceback" not in out and "internal error" not in out
    assert "ERROR (exit 2): pyproject.toml target #1: " in out
    assert message in " ".join(out.split())


def test_a_config_nested_2000_deep_is_exit_2_in_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        f'{ENTRY}init-args = {"{a = " * 2000}1{"}" * 2000}\n')
    proc = run_cli("check", "--no-cache", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("breakscan: error: pyproject.toml: arrays or inline tables nested too "
                           "deep to read\n")


def test_every_key_has_a_type_and_a_wrong_one_names_it():
    from breakscan.config import FORMS, GATE_KEYS, KEY_TYPES, LIMIT_KEYS, OTHER_KEYS, SCAN_KEYS

    assert set(KEY_TYPES) == set(SCAN_KEYS) | set(GATE_KEYS) | set(LIMIT_KEYS) | OTHER_KEYS
    for key, forms in KEY_TYPES.items():
        wrong = "text" if "string" not in forms else {"a": 1} if "table" not in forms else 1.5
        with pytest.raises(UsageError) as refused:
            from_config({"target": "m.py:M", key: wrong}, target="m.py:M", where="cfg")
        wanted = " or ".join(FORMS[form][0] for form in forms)
        assert str(refused.value).startswith(f"cfg: a value of the wrong type: {key} takes "
                                             f"{wanted}, got "), key


def test_the_natural_forms_are_accepted():
    scan, gate, limits = from_config(
        {"target": "m.py:M", "input-shape": "8,16", "vary-batch": [2, 4], "kernels": False,
         "init-args": {"width": 3}, "compile-option": {"max_autotune": True}, "timeout": 1.5,
         "fail-on": "item", "max-breaks": 0, "memory-limit": 2000},
        target="m.py:M", where="cfg")
    assert (scan.input_shapes, scan.vary_batch, scan.kernels, scan.init_args) == \
        (("8,16",), "2,4", False, '{"width": 3}')
    assert (gate.fail_on, gate.max_breaks, limits.timeout, limits.memory_limit_mb) == \
        (("item",), 0, 1.5, 2000)


def test_load_config_refuses_deep_nesting_in_process(tmp_path):
    from breakscan.config import load_config

    path = tmp_path / "pyproject.toml"
    path.write_text(f'{ENTRY}x = {"[" * 2000}1{"]" * 2000}\n')
    with pytest.raises(UsageError, match="nested too deep to read"):
        load_config(path)


def test_a_corrupted_or_unreadable_config_is_a_usage_error(tmp_path):
    from breakscan.config import load_config

    binary = tmp_path / "pyproject.toml"
    binary.write_bytes(b"[tool.breakscan]\n\xaa\xff\x00 = 1\n")
    with pytest.raises(UsageError, match="is not valid TOML: not UTF-8 text"):
        load_config(binary)
    with pytest.raises(UsageError, match="is a folder, not a config file"):
        load_config(tmp_path)
