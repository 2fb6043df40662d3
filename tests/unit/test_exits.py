"""The CLI's exit codes and one-line errors, in this process and before any scan starts."""

from __future__ import annotations

import pytest

from conftest import SAMPLES


def test_an_internal_error_is_exit_4_in_one_line(monkeypatch, capsys):
    import breakscan.options as options
    from breakscan.cli import main

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(options.ScanOptions, "check", broken)
    with pytest.raises(SystemExit) as ended:
        main([f"{SAMPLES / 'tensor_branch.py'}:TensorIf", "-s", "8,16"])
    assert ended.value.code == 4
    err = capsys.readouterr().err.strip()
    assert err == ("breakscan: error: internal error in breakscan: KeyError: 'a bug' (please "
                   "report it; --debug shows the traceback)")
