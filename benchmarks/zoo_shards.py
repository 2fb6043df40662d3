"""A model zoo across machines (issue 36), three measurements (not a test):

1. ``merge``: 500 targets' results in 4 shard files merged and gated against expected counts, as
   the CLI does (``breakscan merge … --expected``, a whole process: JSON, the ``-q`` and the
   whole terminal report, ``--html``) and in-process. Goal < 2 s each.
2. A shard's overhead: ``check --no-cache -j 1`` of 8 sample targets, plain vs as
   ``--shard 1/1 --results FILE``, interleaved, ``--repeats`` rounds, medians. Goal < 5 %.
3. Balance: the 8 targets' measured seconds (``--write-durations`` of the plain run), and an
   uneven zoo made of them (each target repeated 1–5 times under new names): the slowest of 4
   shards over the mean, split by durations vs by name. Goal within 25 % of the mean.

    python benchmarks/zoo_shards.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_parallel import _project  # noqa: E402  the same 8 sample targets


def _seconds(folder: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "breakscan", *args], cwd=folder,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _merge_500(folder: Path, results_line: str) -> None:
    """Four shard files of 125 targets each (one real result, renamed), the config that lists
    them, and their expected counts."""
    from breakscan.runs.expected import write_expected
    from breakscan.model.jsondata import dumps, loads

    from breakscan.options import ScanOptions

    entry = loads(results_line)
    entry.options = ScanOptions().to_dict()  # what big.toml gives each target
    names = [f"zoo/model_{i:03d}.py:Net" for i in range(500)]
    runs = []
    for shard in range(4):
        with open(folder / f"big-{shard + 1}.json", "w") as handle:
            for name in names[shard::4]:
                entry.run.target = entry.run.result.target = name
                handle.write(dumps(entry) + "\n")
                runs.append(loads(dumps(entry.run)))
    (folder / "big.toml").write_text("[tool.breakscan]\n" + "".join(
        f'[[tool.breakscan.targets]]\ntarget = "{n}"\n' for n in names))
    write_expected(folder / "big-expected.json", runs)


def _merge_seconds(folder: Path, repeats: int) -> tuple[dict[str, float], float]:
    from breakscan.config import load_config
    from breakscan.runs.check import config_targets, zoo_settings
    from breakscan.runs.expected import apply_expected, read_expected
    from breakscan.runs.results import gated_again, merge_results

    files = sorted(folder.glob("big-[0-9].json"))
    merge = ("merge", *map(str, files), "--config", "big.toml", "--expected",
             "big-expected.json")
    outputs = {"JSON": ("-q", "-f", "json", "-o", "merged.json"), "terminal -q": ("-q",),
               "terminal": (), "HTML": ("-q", "--html", "merged.html")}
    times: dict[str, list[float]] = {name: [] for name in outputs}
    for _ in range(repeats):  # interleaved
        for name, args in outputs.items():
            times[name].append(_seconds(folder, *merge, *args))
    inside = []
    for _ in range(repeats):
        start = time.perf_counter()
        section, _zoo = zoo_settings(load_config(folder / "big.toml"), folder / "big.toml")
        entries, _ = merge_results(files, [t["target"] for t in section["targets"]])
        runs = gated_again(entries, config_targets(section, folder / "big.toml", loadable=False))
        apply_expected(runs, read_expected(folder / "big-expected.json"),
                       allow_improvements=False, complete=True)
        inside.append(time.perf_counter() - start)
    return ({name: statistics.median(t) for name, t in times.items()},
            statistics.median(inside))


def _balance(durations: dict[str, float]) -> None:
    from breakscan.runs.shard import split

    uneven = {f"{name}#{copy}": seconds for i, (name, seconds) in enumerate(sorted(
        durations.items())) for copy in range(1 + i % 5)}
    for label, zoo in (("the 8 sample targets", durations), ("an uneven zoo of "
                                                             f"{len(uneven)}", uneven)):
        mean = sum(zoo.values()) / 4
        for how, times in (("by name", None), ("by durations", zoo)):
            loads = [sum(zoo[t] for t in split(list(zoo), k, 4, times)) for k in range(1, 5)]
            print(f"  {label}, 4 shards {how}: slowest {max(loads):.1f} s, mean {mean:.1f} s "
                  f"-> {100 * (max(loads) / mean - 1):+.0f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}; "
          f"median of {args.repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _project(folder)
        _seconds(folder, "check", "-q", "-j", "1", "--no-cache")  # warm-up
        plain, sharded = [], []
        for _ in range(args.repeats):  # interleaved
            plain.append(_seconds(folder, "check", "-q", "-j", "1", "--no-cache",
                                  "--write-durations", "durations.json"))
            sharded.append(_seconds(folder, "check", "-q", "-j", "1", "--no-cache", "--shard",
                                    "1/1", "--results", "results.json"))
        p, s = statistics.median(plain), statistics.median(sharded)
        print(f"shard overhead, 8 targets: plain {p:.2f} s (min {min(plain):.2f}, max "
              f"{max(plain):.2f}), --shard 1/1 --results {s:.2f} s (min {min(sharded):.2f}, "
              f"max {max(sharded):.2f}) -> {100 * (s / p - 1):+.1f} %"
              + ("  (noisy: the runs' spread is wider than the difference)"
                 if max(plain) - min(plain) > abs(s - p) else ""))
        first_line = (folder / "results.json").read_text().splitlines()[0]
        _merge_500(folder, first_line)
        cli, inside = _merge_seconds(folder, args.repeats)
        print("merge + expected gate, 500 targets in 4 files, as the CLI (a whole process): "
              + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in cli.items())
              + f"; {inside:.2f} s in-process")
        print("balance of 4 shards (seconds measured by --write-durations):")
        _balance(json.loads((folder / "durations.json").read_text()))


if __name__ == "__main__":
    main()
