"""`breakscan lint` through the real CLI (lint itself: tests/unit/test_lint.py)."""

from __future__ import annotations

from conftest import run_cli


def test_standalone_lint_claims_no_scan(tmp_path):
    model = tmp_path / "m.py"
    model.write_text("import numpy as np\nimport torch\nfrom torch import nn\n\n\n"
                     "class M(nn.Module):\n    def forward(self, x):\n"
                     "        return x * np.cos(1.0)\n")
    proc = run_cli("lint", str(model))
    assert "(a scan tells)" in proc.stdout and "the scan confirms" not in proc.stdout
