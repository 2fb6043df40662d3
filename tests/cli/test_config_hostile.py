"""A hostile or careless ``pyproject.toml`` for ``breakscan check`` / ``merge``: a FIFO or
``/dev/zero`` as the config, as its baseline or as a target's file, a config too large to be one,
and one target listed twice. Each is one ``breakscan: error: …`` line (or, for one target, that
target's one-line error) and exit 2: never a hang, an unbounded read or a traceback.

Every CLI run has a short timeout: a run that hangs fails its test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from breakscan import config as config_module

from conftest import run_cli

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="needs FIFOs and /dev/zero (POSIX)")

HANG_S = 60  # a refusal takes well under a second (a real scan, a few): a hang is far more

MODEL = """
    from torch import nn

    class Net(nn.Module):
        def forward(self, x):
            return x * 2
    """


def _entries(*targets: str) -> str:
    return '[tool.breakscan]\ninput-shape = ["2,3"]\n' + "".join(
        f'[[tool.breakscan.targets]]\ntarget = "{t}"\n' for t in targets)


def _usage_error(proc, line: str) -> None:
    """Exit 2 and exactly ``breakscan: error: LINE`` on stderr, nothing on stdout."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == f"breakscan: error: {line}\n"
    assert proc.stdout == ""


def test_a_fifo_as_the_config_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "pyproject.toml")
    proc = run_cli("check", "--no-cache", cwd=tmp_path, timeout=HANG_S)
    _usage_error(proc, "config pyproject.toml is not a regular file; name a file")


def test_dev_zero_as_the_config_is_refused_unread(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    proc = run_cli("check", "--no-cache", "--config", "zero.toml", cwd=tmp_path,
                   timeout=HANG_S)
    _usage_error(proc, "config zero.toml is not a regular file; name a file")


def test_a_config_over_the_size_cap_is_refused_unread(tmp_path):
    cap = config_module.MAX_CONFIG_BYTES
    config = tmp_path / "pyproject.toml"
    config.write_text(_entries("m.py:Net"))
    os.truncate(config, cap + 1)  # sparse: no disk, nothing read
    proc = run_cli("check", "--no-cache", cwd=tmp_path, timeout=HANG_S)
    _usage_error(proc, f"config pyproject.toml is {cap + 1:,} bytes, more than the {cap:,} "
                       "such a file can be")


def test_a_fifo_as_the_baseline_is_refused_for_each_target(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent(MODEL))
    os.mkfifo(tmp_path / "base.json")
    (tmp_path / "pyproject.toml").write_text(
        _entries("m.py:Net").replace("[[", 'baseline = "base.json"\n[[', 1))
    proc = run_cli("check", "--no-cache", "-f", "json", cwd=tmp_path, timeout=HANG_S)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [model] = json.loads(proc.stdout)["models"]
    assert (model["exit_code"], model["result"]) == (2, None)
    assert model["error"] == ("pyproject.toml target #1: baseline base.json is not a regular "
                              "file; name a file")


def test_a_fifo_or_dev_zero_as_a_config_target_fails_that_target_only(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent(MODEL))
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "z.py")
    (tmp_path / "pyproject.toml").write_text(_entries("pipe.py:Net", "z.py:Net", "m.py:Net"))
    proc = run_cli("check", "--no-cache", "-j", "1", "-f", "json", cwd=tmp_path,
                   timeout=HANG_S)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    models = json.loads(proc.stdout)["models"]
    assert [(m["target"], m["exit_code"], m["error"]) for m in models] == [
        ("pipe.py:Net", 2, "target pipe.py is not a regular file; name a .py file"),
        ("z.py:Net", 2, "target z.py is not a regular file; name a .py file"),
        ("m.py:Net", 0, None),  # the others are still scanned
    ]


@pytest.mark.parametrize("make", [os.mkfifo, lambda path: os.symlink("/dev/zero", path)],
                         ids=["fifo", "dev-zero"])
def test_scan_of_a_special_file_is_a_usage_error(tmp_path, make):
    make(tmp_path / "pipe.py")
    proc = run_cli("scan", "pipe.py:Net", "--input-shape", "2,3", cwd=tmp_path,
                   timeout=HANG_S)
    _usage_error(proc, "target pipe.py is not a regular file; name a .py file")


def test_a_target_listed_twice_is_refused_by_check(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "pyproject.toml").write_text(
        _entries("model.py:Net", "other.py:Net", "model.py:Net"))
    proc = run_cli("check", "--no-cache", cwd=tmp_path, timeout=HANG_S)
    _usage_error(proc, "pyproject.toml lists target model.py:Net twice (targets #1 and #3): "
                       "one entry per target")


def test_a_target_listed_twice_is_refused_by_merge(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "once.toml").write_text(_entries("model.py:Net"))
    shard = run_cli("check", "--no-cache", "--config", "once.toml", "--results", "r.json",
                    "-q", cwd=tmp_path, timeout=HANG_S * 3)
    assert shard.returncode == 0, shard.stdout + shard.stderr
    # the same model again, with other input shapes: two runs under one name
    (tmp_path / "pyproject.toml").write_text(
        _entries("model.py:Net") + '[[tool.breakscan.targets]]\ntarget = "model.py:Net"\n'
        'input-shape = ["4,5"]\n')
    proc = run_cli("merge", "r.json", cwd=tmp_path, timeout=HANG_S)
    _usage_error(proc, "pyproject.toml lists target model.py:Net twice (targets #1 and #2): "
                       "one entry per target")


READERS = """
import sys
from breakscan.runs.cache import _digest
from breakscan.sources import source_tree
fifo = sys.argv[1]
print(_digest(fifo), _digest("/dev/zero"), source_tree(fifo).module)
"""


def _small_memory() -> None:
    """``preexec_fn``: a reader of ``/dev/zero`` runs out of memory at 2 GiB, not the machine's."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_pre_scan_readers_never_block_on_a_fifo(tmp_path):
    """The cache's file hashes (names that come from a stored result) and a target's relative
    imports are read in the parent: a FIFO or /dev/zero there is a miss / no imports, at once."""
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-c", READERS, str(fifo)], capture_output=True,
                          text=True, timeout=HANG_S, preexec_fn=_small_memory)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "None None None\n", "")
