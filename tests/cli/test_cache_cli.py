"""The result cache of `breakscan check` through the real CLI: a crafted entry never runs code
nor passes the gate, and an edited inputs file is a miss (the cache itself:
tests/unit/test_cache.py)."""

from __future__ import annotations

import json
import pickle
import shutil

from conftest import SAMPLES, run_cli, tensor_branch_project

TARGET = "tensor_branch.py:TensorIf"


class _Payload:
    """Unpickling this creates the file named in ``path``: proof that code ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_crafted_cache_never_runs_code_nor_passes_the_gate(tmp_path):
    folder = tensor_branch_project(tmp_path)
    first = run_cli("check", "-f", "json", cwd=folder)
    assert first.returncode == 1  # TensorIf breaks: max-breaks 0 fails
    cache = folder / ".breakscan_cache"
    (entry,) = cache.glob("*.json")
    marker = tmp_path / "code-ran"
    # An old-style pickle entry under the same key, and a forged JSON entry: no file hashes,
    # no breaks (as a cache restored from another branch could hold).
    (cache / entry.name.replace(".json", ".pkl")).write_bytes(pickle.dumps(_Payload(str(marker))))
    doc = json.loads(entry.read_text())
    doc["__dict__"] = [[k, {} if k == "files" else v] for k, v in doc["__dict__"]]
    entry.write_text(json.dumps(doc))
    again = run_cli("check", "-f", "json", cwd=folder)
    assert not marker.exists()
    assert again.returncode == 1, again.stdout  # rescanned: the break is still there
    (model,) = json.loads(again.stdout)["models"]
    assert model["cached"] is False and model["result"]["summary"]["graph_break_count"] == 1


def test_the_cache_is_invalidated_by_an_edited_inputs_file(tmp_path):
    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "inp.py").write_text("import torch\n\ndef make():\n"
                                     "    return (torch.ones(8, 16),)\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.breakscan]\n[[tool.breakscan.targets]]\ntarget = "tensor_branch.py:TensorIf"\n'
        'inputs = "inp.py:make"\n')
    first = run_cli("check", "-f", "json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "inp.py").write_text("import torch\n\ndef make():\n"
                                     "    return (torch.zeros(8, 16),)\n")
    again = run_cli("check", "-f", "json", cwd=tmp_path)
    (model,) = json.loads(again.stdout)["models"]
    assert model["cached"] is False
