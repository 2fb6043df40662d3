"""Issue 36 (first part): `breakscan check --shard K/N` over a small zoo of sample models, as
separate processes: every target in exactly one shard, a shard with nothing to do passes, the
index from a job array's variable, and the durations file each run adds to."""

from __future__ import annotations

import json
import shutil
import textwrap

from conftest import SAMPLES, run_cli

ZOO = ["item_logging.py:LogInsideForward", "tensor_branch.py:TensorIf",
       "tensor_branch.py:TensorWhere"]


def _zoo(tmp_path):
    for name in ("tensor_branch.py", "item_logging.py"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    entries = "".join(f'[[tool.breakscan.targets]]\ntarget = "{t}"\ninput-shape = ["8,16"]\n'
                      for t in reversed(ZOO))  # listed unsorted: shards follow the names
    (tmp_path / "pyproject.toml").write_text("[tool.breakscan]\n" + textwrap.dedent(entries))
    return tmp_path


def _shard(folder, spec: str, *args: str, env: dict | None = None):
    proc = run_cli("check", "--no-cache", "-f", "json", "-o", f"shard-{spec[0]}.json",
                   "--shard", spec, "--write-durations", f"durations-{spec[0]}.json", *args,
                   cwd=folder, env=env)
    out = folder / f"shard-{spec[0]}.json"
    return proc, (json.loads(out.read_text()) if out.exists() else None)


def test_two_shards_cover_the_zoo_once_and_record_their_durations(tmp_path):
    folder = _zoo(tmp_path)
    first, doc1 = _shard(folder, "1/2", "--results", "results-1.json")  # two jobs at a time
    # the second shard's index from a Kubernetes Indexed Job (0-based)
    second, doc2 = _shard(folder, "env/2", env={"JOB_COMPLETION_INDEX": "1"})
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    names = [sorted(m["target"] for m in doc["models"]) for doc in (doc1, doc2)]
    assert names == [ZOO[:2], ZOO[2:]]  # split by sorted name, contiguous (run in config order)
    lines = (folder / "results-1.json").read_text().splitlines()  # one per finished target
    assert sorted(json.loads(line)["fields"]["run"]["fields"]["target"] for line in lines) == \
        ZOO[:2]
    durations = {**json.loads((folder / "durations-1.json").read_text()),
                 **json.loads((folder / "durations-e.json").read_text())}
    assert sorted(durations) == ZOO and all(v > 0 for v in durations.values())
    (folder / "durations.json").write_text(json.dumps(durations))
    # balanced by the recorded times: still every target once over the shards
    balanced = [_shard(folder, f"{k}/2", "--durations", "durations.json")[1] for k in (1, 2)]
    assert sorted(m["target"] for doc in balanced for m in doc["models"]) == ZOO


def test_a_shard_with_nothing_to_do_passes_and_says_so(tmp_path):
    folder = _zoo(tmp_path)
    proc, doc = _shard(folder, "4/4")
    assert proc.returncode == 0 and doc is None
    assert "no targets in this shard (the config lists 3)" in proc.stderr


def test_a_bad_shard_is_a_usage_error(tmp_path):
    folder = _zoo(tmp_path)
    proc, _ = _shard(folder, "env/2")  # no job array variable
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("breakscan: error: --shard env/N:")


def test_the_durations_being_read_are_never_written(tmp_path):
    folder = _zoo(tmp_path)
    proc = run_cli("check", "--shard", "1/2", "--durations", "d.json", "--write-durations",
                   "d.json", cwd=folder)
    assert proc.returncode == 2 and proc.stderr == (
        "breakscan: error: refusing to write --write-durations d.json: it is the --durations "
        "file d.json, which this run reads; name another file\n")
