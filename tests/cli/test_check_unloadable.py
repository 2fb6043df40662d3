"""`breakscan check` refuses a target that cannot load before any scan process starts.

A missing file, a module no finder knows, or a name the file never binds (read with `ast`) is
answered in the parent with the scan's own one-line error (exit 2), without importing the
user's file: thousands of such targets take a second, not a process each. A name the file may
make at run time is left to the scan. The rules themselves: tests/unit/test_target_loadable.py.
"""

from __future__ import annotations

import json
import textwrap

from conftest import run_cli

MODEL = """
    import os
    from torch import nn

    open(os.environ["IMPORTED_MARKER"], "a").write("imported\\n")  # a side effect of importing

    class Net(nn.Module):
        def forward(self, x):
            return x * 2
    """


def test_targets_that_cannot_load_are_refused_without_a_process(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(textwrap.dedent(MODEL))
    marker = tmp_path / "imported"
    targets = ["pkg/model.py:Nett", "pkg.model:Other", "pkg.missing:Net", "nosuchpkg.model:Net",
               "missing.py:Net"]
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.breakscan]\ninput-shape = ["2,3"]\n' + "".join(
        f'[[tool.breakscan.targets]]\ntarget = "{t}"\n' for t in targets))
    proc = run_cli("check", "-f", "json", "--no-cache", cwd=tmp_path,
                   env={"IMPORTED_MARKER": str(marker)})
    doc = json.loads(proc.stdout)
    assert (proc.returncode, doc["exit_code"], len(doc["models"])) == (2, 2, 5)
    assert not marker.exists()  # no scan process imported the model
    no_module = ("no module named {!r} importable from " + str(tmp_path) + ": run breakscan "
                 "from the folder that holds it (or add that folder to PYTHONPATH), or pass its "
                 "file instead, e.g. path/to/model.py:NAME")
    expected = [
        "pkg/model.py has no 'Nett'; did you mean Net?",
        "pkg.model has no 'Other'; it defines Net",
        no_module.format("pkg.missing"),
        no_module.format("nosuchpkg.model"),
        f"target file not found: missing.py (check the path; it is relative to {tmp_path})",
    ]
    for number, model in enumerate(doc["models"]):
        assert (model["target"], model["exit_code"], model["stage"], model["result"]) == \
            (targets[number], 2, None, None)
        assert model["error"] == expected[number % 5]


def test_a_name_made_at_run_time_is_left_to_the_scan(tmp_path):
    (tmp_path / "made.py").write_text(textwrap.dedent("""
        from torch import nn

        class _Doubles(nn.Module):
            def forward(self, x):
                return x * 2

        globals()["Made"] = _Doubles
        """))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.breakscan]\ninput-shape = ["2,3"]\n[[tool.breakscan.targets]]\n'
        'target = "made.py:Made"\n')
    proc = run_cli("check", "-f", "json", "--no-cache", cwd=tmp_path)
    (model,) = json.loads(proc.stdout)["models"]
    assert (proc.returncode, model["exit_code"], model["error"]) == (0, 0, None), proc.stderr
    assert model["result"]["summary"]["graph_count"] == 1
