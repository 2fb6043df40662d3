"""--compile-time through the CLI: the flag reaches the scan child, and the JSON carries the
cold and warm runs, each frame tied to the break it exists because of."""

from __future__ import annotations

import json

from conftest import SAMPLES, run_cli


def test_compile_time_reaches_the_child_and_its_json():
    proc = run_cli(f"{SAMPLES}/print_in_forward.py:PrintInForward", "-s", "8,16",
                   "--compile-time", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    found = doc["compile_time"]
    assert found["backend"] == "inductor" and found["input_sets"] == 1
    cold, warm = found["cold"], found["warm"]
    assert len(cold["frames"]) == len(warm["frames"]) == len(doc["frames"])
    tied = [f for f in cold["frames"] if f["break_index"] is not None]
    assert [f["break_index"] for f in tied] == [0]  # the resume function after the print
    assert tied[0]["name"].startswith("torch_dynamo_resume_in_forward_at_")
    assert found["breaks_s"] == tied[0]["total_s"] and cold["frames_s"] <= cold["wall_s"]
    assert warm["cache_hits"] == cold["cache_misses"] >= 1
