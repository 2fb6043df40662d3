"""Job requests cross the process boundary as JSON and come back as the same typed records;
the child reads no request by string keys (issue 43: typed jobs, one Switch type)."""

import ast
from pathlib import Path

import pytest

import breakscan
from breakscan.model.jobs import (FixRequest, OutputsRequest, ProgramRequest, ScanRequest,
                                  request_from_json, request_to_json)
from breakscan.model.verdicts import FixMetrics
from breakscan.options import ProgramOptions, ScanOptions
from breakscan.rules.catalogue import library_switches
from breakscan.rules.model import PathSetting, Switch

PACKAGE = Path(breakscan.__file__).parent
BEFORE = FixMetrics(graph_count=3, breaks=2, recompiles=None, compiled_s=0.01, speedup=1.2)


def _round_trip(request):
    import json

    return request_from_json(json.loads(json.dumps(request_to_json(request))))


@pytest.mark.parametrize("switch", [
    *(spec.switch for spec in library_switches()),
    Switch(path=PathSetting("layerdrop", 0.0, "attribute", True)),
    Switch(path=PathSetting("set_begin_index", 0, "method", False, ("EulerScheduler",))),
    Switch(path=PathSetting("TRANSFORMERS_DISABLE_TORCH_CHECK", "1", "env")),
    Switch(path=PathSetting("position_ids", None, "input",
                            computed_by=("/x/model.py", 12, "vision_position_ids"))),
])
def test_every_switch_shape_survives_the_boundary(switch):
    request = FixRequest("m.py:Net", ScanOptions(), kind="switch", fix_id="switch:x",
                         switch=switch, before=BEFORE)
    assert _round_trip(request) == request


def test_every_fix_kind_survives_the_boundary():
    for request in [
        FixRequest("m.py:Net", ScanOptions(), kind="setting", fix_id="capture_scalar_outputs",
                   config=(("capture_scalar_outputs", True),)),
        FixRequest("m.py:Net", ScanOptions(), kind="source", fix_id="torch_where",
                   file="/x/m.py", new_source="x = 1\n", before=BEFORE,
                   constants=(("Net", ("scale", "shift")),)),
        FixRequest("m.py:Net", ScanOptions(), kind="dynamic", fix_id="dynamic", dynamic=True),
    ]:
        assert _round_trip(request) == request


def test_the_other_requests_survive_the_boundary():
    for request in [ScanRequest("m.py:Net", ScanOptions()),
                    OutputsRequest("a.py:A", "b.py:B", ScanOptions()),
                    ProgramRequest(ProgramOptions(script="train.py"))]:
        assert type(_round_trip(request)) is type(request)


def test_the_fix_child_reads_no_request_by_string_keys():
    """fixes/fix_job.py and fixes/switches.py take typed records: no ``x["key"]`` or
    ``x.get("key")`` on a request, a fix or a switch."""
    for name in ("fix_job.py", "switches.py"):
        tree = ast.parse((PACKAGE / "fixes" / name).read_text(encoding="utf-8"))
        keyed = [node.lineno for node in ast.walk(tree)
                 if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                 and node.value.id in ("fix", "request", "switch", "path", "setting")
                 and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)]
        gets = [node.lineno for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("fix", "request", "switch", "path", "setting")]
        assert keyed == gets == [], name
