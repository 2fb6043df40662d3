"""Compiled execution (--time) through the real CLI: the timings in the JSON report.

Uses inductor (it shares TORCHINDUCTOR_CACHE_DIR in CI).
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli


def test_cli_time_json(tmp_path):
    dest = tmp_path / "scan.json"
    proc = run_cli("sample_models/item_logging.py:LogInsideForward", "-s", "8,16", "--time",
                   "--max-run-time", "0.2", "--format", "json", "-o", str(dest))
    assert proc.returncode == 0, proc.stderr
    assert "speedup" in proc.stdout and proc.stderr == ""
    t = json.loads(dest.read_text())["timings"]
    assert set(t["eager"]) == {"median_s", "iqr_s", "runs", "threads", "noisy", "blocks"}
    for variant in ("eager", "compiled", "fullgraph"):  # the flag agrees with its own numbers
        v = t[variant]
        assert v["noisy"] is (v["iqr_s"] > 0.1 * v["median_s"] or v["blocks"] < 4), v
    assert t["load_average"] is None or t["load_average"] >= 0
    assert t["compiled"]["runs"] > 0 and t["fullgraph"]["runs"] > 0
    assert t["backend"] == "inductor" and t["threads"] == 1
    assert t["correctness"]["match"] is True
    if t["speedup"] is None:  # a spread beyond its median (a loaded machine): said, not given
        assert any(n.startswith("speedup not measured") for n in t["notes"])
    else:
        assert t["speedup"] == pytest.approx(t["eager"]["median_s"] / t["compiled"]["median_s"])
    assert 0 <= t["outside_share"] <= 1
