"""Save, then compare, the JSON report of every sample model (timings and stage seconds aside).

Run once before a change to capture and once after it::

    python benchmarks/json_snapshot.py save /tmp/before
    python benchmarks/json_snapshot.py compare /tmp/before

A change that should not alter what a scan reports (issue 23: one Dynamo pass instead of three)
must print "identical" for every model (fields the change added are not compared). Covered: every class of ``sample_models/`` with an
"Expected scan" block and every class of ``tests/fixtures/models/`` that builds without
arguments and runs on an 8x16 float input, and the recorded trace fixture
(``breakscan trace tests/fixtures/traces/step -f json``).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMING_KEYS = {"capture_seconds", "stages", "schema_version"}  # and the version it bumped


def targets() -> list[str]:
    found = []
    for folder, need_doc in ((ROOT / "sample_models", True), (ROOT / "tests/fixtures/models", False)):
        for path in sorted(folder.glob("*.py")):
            if path.name == "misbehaving.py":  # hangs or kills the process: the CLI's isolation tests
                continue
            try:
                tree = ast.parse(path.read_text())
            except SyntaxError:  # a fixture for load errors
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and \
                        (not need_doc or "Expected scan" in (ast.get_docstring(node) or "")):
                    found.append(f"{path}:{node.name}")
    return found + ["trace:tests/fixtures/traces/step"]


def without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    if isinstance(value, str):  # a function's repr names its address, new in every process
        return re.sub(r" at 0x[0-9a-f]+>", " at 0x…>", value)
    return value


def known_keys(after: object, before: object) -> object:
    """``after`` without the fields ``before`` does not have (fields a change added)."""
    if isinstance(after, dict) and isinstance(before, dict):
        return {k: known_keys(v, before[k]) for k, v in after.items() if k in before}
    if isinstance(after, list) and isinstance(before, list) and len(after) == len(before):
        return [known_keys(a, b) for a, b in zip(after, before)]
    return after


def report(target: str) -> object | None:
    from breakscan import scan
    from breakscan.report.json import to_json

    if target.startswith("trace:"):  # the recorded trace fixture, through the CLI
        import subprocess
        out = subprocess.run([sys.executable, "-m", "breakscan", "trace", target[6:], "-f", "json"],
                             capture_output=True, text=True, cwd=ROOT)
        return without_timings(json.loads(out.stdout))
    try:
        result = scan(target, input_shapes=["8,16"])
    except Exception as exc:  # a fixture that needs other inputs: not compared
        return {"error": type(exc).__name__}
    return without_timings(json.loads(to_json(result)))


def main(mode: str, folder: str) -> int:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    differ = 0
    for target in targets():
        name = target.replace(str(ROOT) + "/", "").replace("trace:", "trace_").replace("/", "_").replace(":", "__") + ".json"
        doc = report(target)
        if mode == "save":
            (out / name).write_text(json.dumps(doc, indent=1, sort_keys=True))
            print("saved", name)
            continue
        if not (out / name).exists():
            print("new (no saved report)", name)
            continue
        before = without_timings(json.loads((out / name).read_text()))
        if before == known_keys(doc, before):
            print("identical", name)
        else:
            differ += 1
            print("DIFFERENT", name)
            (out / (name + ".after")).write_text(json.dumps(doc, indent=1, sort_keys=True))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
