"""Options from the config file and the command line, through the real CLI: wrong types and
pathological values are one-line usage errors (the parsers: tests/unit/test_options.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import SAMPLES, run_cli


@pytest.mark.parametrize("config, message", [
    ('[[tool.breakscan.targets]]\ntarget = 5\n', "'target' must be a string"),
    ('[[tool.breakscan.targets]]\ntarget = "m.py:M"\ninput-shape = [[4, 4]]\n',
     "a value of the wrong type"),
    ('', "tool.breakscan must be a table"),
])
def test_wrong_types_in_the_config_are_usage_errors(tmp_path, config, message):
    text = "[tool]\nbreakscan = 5\n" if not config else "[tool.breakscan]\n" + config
    (tmp_path / "pyproject.toml").write_text(text)
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "m.py")
    proc = run_cli("check", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_dynamic_at_the_top_of_the_config_is_a_default(tmp_path):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.breakscan]\ndynamic = true\n[[tool.breakscan.targets]]\n'
        'target = "tensor_branch.py:TensorIf"\ninput-shape = ["8,16"]\n')
    proc = run_cli("check", "-f", "json", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (model,) = json.loads(proc.stdout)["models"]
    assert model["result"]["compile_settings"]["dynamic"] is True


def test_pathological_init_args_are_a_usage_error():
    proc = run_cli(f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16", "--init-args",
                   "[" * 50_000 + "]" * 50_000)
    assert proc.returncode == 2 and "nested too deep" in proc.stderr
