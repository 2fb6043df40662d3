"""Issue 48 §1-2: paths a person reads. A break inside an installed package (a package in a
virtualenv-like ``site-packages``) is shown from the package's top module with the package's
version once, in every human format; the absolute path stays in JSON and in the HTML's
tooltips; a graph's source lines are line ranges per file."""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import run_cli

LAYERS = "import torch\n\n\ndef scale(h):\n    peak = h.abs().max().item()\n    return h / (peak + 1e-6)\n"
MODEL = ("import torch\nfrom torch import nn\n\nfrom mylib.layers import scale\n\n\n"
         "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(16, 16)\n\n    def forward(self, x):\n"
         "        h = self.fc(x)\n        h = h * 2\n        return scale(h)\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("paths")
    site = root / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "mylib").mkdir(parents=True)
    (site / "mylib" / "__init__.py").write_text("")
    (site / "mylib" / "layers.py").write_text(LAYERS)
    (site / "mylib-1.2.3.dist-info").mkdir()
    (site / "mylib-1.2.3.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mylib\nVersion: 1.2.3\n")
    (root / "project").mkdir()
    (root / "project" / "model.py").write_text(MODEL)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH"))
                                         if p)}
    return root / "project", site, env


def _run(project, *args: str):
    folder, _site, env = project
    proc = run_cli("model.py:Net", "-s", "8,16", *args, cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "github"])
def test_no_human_format_shows_an_installed_packages_absolute_path(project, fmt):
    _folder, site, _env = project
    text = _run(project, "-f", fmt).stdout
    assert str(site) not in text and "site-packages" not in text, text
    assert "mylib/layers.py:5" in text
    if fmt == "terminal":
        assert "torch 2." in text and " · mylib 1.2.3 · " in " ".join(text.split())
    if fmt == "github":  # annotated at the user's line, the package's line in the message
        (note,) = [line for line in text.splitlines() if "graph break" in line]
        assert note.startswith("::warning file=model.py,line=15,") and \
            "in mylib/layers.py:5: " in note


def test_html_shows_package_paths_and_keeps_the_absolute_one_in_a_tooltip(project, tmp_path):
    _folder, site, _env = project
    page = tmp_path / "report.html"
    _run(project, "--html", str(page))
    html = page.read_text()
    visible = re.sub(r'title="[^"]*"', "", html)
    assert str(site) not in visible and "site-packages" not in visible
    assert f'title="{site}/mylib/layers.py:5"' in html and "mylib/layers.py:5</code>" in html
    assert "mylib 1.2.3" in html


def test_json_keeps_the_absolute_path(project, tmp_path):
    _folder, site, _env = project
    doc = json.loads(_run(project, "-f", "json").stdout)
    (brk,) = doc["breaks"]
    assert brk["file"] == f"{site}/mylib/layers.py" and brk["line"] == 5


def test_a_graphs_source_lines_are_line_ranges_per_file_the_users_first():
    from breakscan.report.locations import line_ranges

    user = os.path.abspath("model.py")
    lib = "/venv/lib/python3.11/site-packages/mylib/layers.py"
    assert line_ranges([f"{lib}:5", f"{user}:13", f"{user}:14", f"{lib}:6", f"{user}:15",
                        f"{user}:20", f"{lib}:9"]) == [
        ("model.py", "model.py", "13–15, 20"), ("layers.py", "mylib/layers.py", "5–6, 9")]
