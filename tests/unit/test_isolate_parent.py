"""The parent's side of the isolated scan (process.isolate): what it reads of a child's stderr
and stack dump, with no child started."""

from __future__ import annotations


def test_the_parent_reads_only_the_end_of_a_huge_stderr(tmp_path):
    from breakscan.process.isolate import TAIL_BYTES, _tail

    (tmp_path / "stderr").write_bytes(b"x" * (20 * 1024 * 1024) + b"\nthe end\n")
    text = _tail(tmp_path / "stderr")
    assert len(text) == TAIL_BYTES and text.endswith("the end\n")


def test_a_timeout_names_the_users_line_never_the_standard_librarys(tmp_path):
    from breakscan.process.isolate import user_line_from_stack

    import runpy
    import threading
    import traceback

    model = str(tmp_path / "model.py")
    dump = ("Thread 0x00007f (most recent call first):\n"
            f'  File "{threading.__file__}", line 320 in wait\n\n'
            "Current thread 0x00007e (most recent call first):\n"
            f'  File "{traceback.__file__}", line 364 in _get_code_position\n'
            f'  File "{model}", line 20 in forward\n'
            f'  File "{runpy.__file__}", line 88 in _run_code\n')
    assert user_line_from_stack(dump) == f" at {model}:20 in forward"
    only_stdlib = dump.replace(f'  File "{model}", line 20 in forward\n', "")
    assert user_line_from_stack(only_stdlib) == " (no line of your code was on the stack)"
