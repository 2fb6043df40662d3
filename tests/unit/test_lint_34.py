"""Issue 34 §5: the lint's checks for the newer families say what Dynamo really reports.

tests/fixtures/lint/families_34.py marks each line lint must flag (test_lint.py checks the set
exactly); here each finding's message must name the registry id torch 2.13 reported for that
class (measured with TORCH_LOGS=graph_breaks), say the frame is skipped exactly where it was,
and a hook's side effect is reported inside the hook, where Dynamo reports it. The slow test
re-measures it: every class with a finding breaks with that id, every look-alike does not.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from breakscan.lint.run import lint_file

from conftest import FIXTURES, ROOT

FIXTURE = FIXTURES / "lint" / "families_34.py"
SKIP_TEXT = "(frame runs eagerly)"

# class -> the registry id Dynamo reported first (torch 2.13, CPU, input 4x4)
MEASURED = {
    "AddressCompare": "GB5976", "IdKey": "GB4501", "IdKeyOnSelf": "GB4501", "IdCompare": "GB9316",
    "SortedNorms": "GB0207", "SortedByKey": "GB0207", "ListSortByKey": "GB0207",
    "SliceByCount": "GB0124", "RepeatByCounts": "GB0036", "RepeatMethod": "GB0036",
    "CountBins": "GB0036", "SeedInForward": "GB0007", "GeneratorInForward": "GB0363",
    "GlobalGenerator": "GB0055", "OwnGenerator": "GB0055", "NumpyNumber": "GB0033",
    "NumpyChoice": "GB0033", "PythonRandom": "GB0007", "GradInForward": "GB9186",
    "LeafInForward": "GB8985", "GlobalLock": "GB0142", "OwnLock": "GB0142", "NewLock": "GB0007",
    "ToSparse": "GB0277", "SparseFromIndices": "GB0007", "HookAppends": "GB0067",
    "HookOnSelfList": "GB0067", "NamedHook": "GB0067", "MethodHook": "GB0067",
    "NestedHook": "GB0067", "ModuleHookInForward": "GB0467",
}
LOOK_ALIKES = ["IdentityLookAlikes", "ValueLookAlikes", "ShapeLookAlikes", "RandomLookAlikes",
               "AutogradLookAlikes", "ManagerLookAlikes", "SparseLookAlikes", "HookLookAlikes"]
# Frames Dynamo skipped whole (0 graphs, or the scan's frame_skipped) for these classes.
SKIPPED = {"IdKey", "IdKeyOnSelf", "IdCompare", "GlobalLock", "OwnLock", "NewLock"}


def _by_class() -> dict[str, list]:
    found: dict[str, list] = {}
    for f in lint_file(FIXTURE):
        owner = f.function.split(".")[0]
        owner = "NamedHook" if owner == "log_grad" else owner  # a module function, see below
        found.setdefault(owner, []).append(f)
    return found


def test_every_finding_names_the_id_dynamo_reported():
    found = _by_class()
    assert sorted(found) == sorted(MEASURED)  # the look-alikes have none
    for name, findings in found.items():
        (finding,) = findings
        assert re.findall(r"\bGB\d{4}\b", finding.message)[0] == MEASURED[name], finding


def test_findings_say_the_frame_is_skipped_exactly_where_it_was():
    said = {name for name, (f,) in _by_class().items() if SKIP_TEXT in f.message}
    assert said == SKIPPED


def test_a_named_hook_is_reported_at_its_side_effect():
    lines = FIXTURE.read_text().splitlines()
    hooks = {f.function: lines[f.line - 1].strip().split("  #")[0]
             for f in lint_file(FIXTURE) if f.category == "hook"}
    assert hooks == {
        "log_grad": "GRADS.append(g.norm())",
        "MethodHook._keep": "self.last = g",
        "NestedHook.forward.keep": 'STATS["g"] = g.norm()',
        "HookAppends.forward": "h.register_hook(lambda g: GRADS.append(g.norm()))",
        "HookOnSelfList.forward": "h.register_hook(lambda g: self.grads.append(g))",
        "ModuleHookInForward.forward": "self.fc.register_forward_hook(lambda m, i, o: o)",
    }
    (named,) = [f for f in lint_file(FIXTURE) if f.function == "log_grad"]
    assert "`h.register_hook(log_grad)`, line" in named.message


def test_rule_ids_follow_the_family():
    from breakscan.rules.catalogue import rule_id

    for f in lint_file(FIXTURE):
        assert f.rule == rule_id(f.category)


_MEASURE = r"""
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("families_34", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
for name in sys.argv[2:]:
    torch._dynamo.reset()
    torch.compile(getattr(mod, name)(), backend="eager")(torch.randn(4, 4))
    print("@@ " + name, file=sys.stderr, flush=True)
"""


@pytest.mark.slow
def test_the_fixture_breaks_as_measured():
    """Every class with a finding breaks first with its id; no look-alike breaks at all."""
    env = {**os.environ, "TORCH_LOGS": "graph_breaks"}
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(FIXTURE), *MEASURED, *LOOK_ALIKES],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    ids, pending = {}, []
    for line in done.stderr.splitlines():  # the graph_breaks log, then "@@ Class" per class
        if line.startswith("@@ "):
            ids[line[3:]], pending = pending, []
        pending += [g.upper() for g in re.findall(r"gb/(gb\d+)\.html", line)]
    assert {name: found[:1] for name, found in ids.items() if name in MEASURED} == \
        {name: [gb_id] for name, gb_id in MEASURED.items()}
    assert {name: ids[name] for name in LOOK_ALIKES} == {name: [] for name in LOOK_ALIKES}
