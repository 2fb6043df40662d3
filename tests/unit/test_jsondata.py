"""jsondata, the one format breakscan reads its own data back in (a restored cache, the isolated
child's result): parsed as data into result records only, never unpickled, never code run."""

from __future__ import annotations

import pickle

import pytest

from breakscan.model.jsondata import DataError, dumps, loads


class _Payload:
    """Unpickling this creates the file named in ``path``: proof that code ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_the_data_format_builds_only_result_records():
    for text in ('{"__dataclass__": "os.system", "fields": {}}',
                 '{"__dataclass__": "Frame", "fields": {"file": "a", "line": 1, "x": 2}}',
                 '{"__dataclass__": "Frame", "fields": {"file": "a"}}',
                 '{"py/object": "subprocess.Popen"}', "[" * 100_000, "1" * 5000, "\x80abc"):
        with pytest.raises(DataError):
            loads(text)
    frame = loads('{"__dataclass__": "Frame", "fields": {"file": "a", "line": 1, '
                  '"function": "f"}}')
    assert (frame.file, frame.line, frame.function) == ("a", 1, "f")
    assert loads(dumps({"k": [1.5, float("inf"), None]})) == {"k": [1.5, float("inf"), None]}


def test_the_parent_parses_the_childs_result_and_never_unpickles_it(tmp_path):
    from breakscan.process.isolate import _outcome, _read_partial

    marker = tmp_path / "code-ran"
    (tmp_path / "result.pkl").write_bytes(pickle.dumps(_Payload(str(marker))))
    (tmp_path / "result.json").write_bytes(pickle.dumps(_Payload(str(marker))))
    assert _read_partial(tmp_path) is None and not marker.exists()
    # A finished job whose result is data of another kind: refused with a one-line error.
    (tmp_path / "result.json").write_text(dumps([1, 2]))
    (tmp_path / "events.jsonl").write_text('{"stage": "explain"}\n{"done": true}\n')
    (tmp_path / "stderr").write_text("")
    run = _outcome("m.py:M", tmp_path, 0, timed_out=False, timeout=None, seconds=1.0)
    assert run.result is None and run.exit_code == 3
    assert run.error == "the scan process returned a list, not a result (during explain)"
