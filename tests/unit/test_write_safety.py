"""``--fix --write`` and ``-o`` when the disk fails mid-write: never a partial file.

Two faults: the kernel's file-size limit (``RLIMIT_FSIZE``: a write past it fails with EFBIG,
as a full disk fails with ENOSPC, however the file is written), and a disk that fills after N
bytes, injected into ``os.write`` for files in the test's folder only (a short write, then
ENOSPC, as Linux does), to reach each branch: the temporary file, in place, in place whose old
bytes cannot be put back.
The backup is a ``sendfile`` copy, so it still fits: the issue's "room for the backup only".
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import resource
import signal
import stat

import pytest

from breakscan.errors import UsageError
from breakscan.files import write_atomic
from breakscan.fixes.write import write_fixes
from breakscan.model.verdicts import Fix

SOURCE = (b'import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n'
          b'    def forward(self, x):\n        h = x * 2\n        print("h", h)\n'
          b'        return h\n')
GUARDED = SOURCE.replace(b'        print("h", h)\n',
                         b'        if not torch.compiler.is_compiling():\n'
                         b'            print("h", h)\n')


def _guard_fix(path) -> Fix:
    return Fix(rule="BS003", fix_id="print_guard", kind="source", title="guard",
               category="print", file=str(path), line=8, verified=True)


def _disk_fills(monkeypatch, folder, room: int, *, then_broken: bool = False) -> list[int]:
    """Writes into ``folder`` past byte ``room`` of a file fail (short write, then ENOSPC);
    with ``then_broken`` every later write there fails too (EIO). Returns the fault count."""
    real_write, folder, faults = os.write, os.path.realpath(folder), []

    def write(fd, data):
        try:
            inside = os.readlink(f"/proc/self/fd/{fd}").startswith(folder + os.sep)
        except OSError:
            inside = False
        if not inside:
            return real_write(fd, data)
        if then_broken and faults:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        offset = os.lseek(fd, 0, os.SEEK_CUR)
        if offset + len(data) <= room:
            return real_write(fd, data)
        if offset < room:
            return real_write(fd, bytes(data[: room - offset]))
        faults.append(fd)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write)
    return faults


def _unchanged(path, error) -> None:
    """The file byte for byte as before, the one-line message says so, nothing left beside it."""
    assert path.read_bytes() == SOURCE
    name = re.escape(path.name)
    assert re.fullmatch(rf"cannot write \S*{name}: [^;\n]+; \S*{name} is unchanged", str(error))
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no backup, no temp


def test_a_disk_that_fills_mid_write_leaves_the_source_byte_identical(tmp_path, monkeypatch):
    path = tmp_path / "model.py"
    path.write_bytes(SOURCE)
    faults = _disk_fills(monkeypatch, tmp_path, room=len(SOURCE))
    with pytest.raises(UsageError) as caught:
        write_fixes([_guard_fix(path)])
    assert faults  # the fault fired: the new text is longer than the room left
    _unchanged(path, caught.value)
    assert "No space left on device" in str(caught.value)


@contextlib.contextmanager
def _file_size_limit(size: int):
    """The kernel refuses to grow any file of this process past ``size`` bytes (EFBIG)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_the_file_size_limit_hit_mid_write_leaves_the_source_byte_identical(tmp_path):
    """The kernel's own fault, in whatever way the file is written (the issue's truncation)."""
    path = tmp_path / "model.py"
    path.write_bytes(SOURCE)
    with _file_size_limit(len(SOURCE)), pytest.raises(UsageError) as caught:
        write_fixes([_guard_fix(path)])
    _unchanged(path, caught.value)
    assert "File too large" in str(caught.value)


def test_a_hard_linked_source_is_put_back_in_place_when_the_disk_fills(tmp_path, monkeypatch):
    """A file with two names is written in place (both names see the fix); a failed write puts
    the old bytes back into the same inode."""
    path, link = tmp_path / "model.py", tmp_path / "same.py"
    path.write_bytes(SOURCE)
    os.link(path, link)
    _disk_fills(monkeypatch, tmp_path, room=len(SOURCE))
    with pytest.raises(UsageError, match=r"model\.py is unchanged$"):
        write_fixes([_guard_fix(path)])
    assert path.read_bytes() == link.read_bytes() == SOURCE
    assert os.path.samefile(path, link)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "same.py"]
    monkeypatch.undo()
    (fix,) = fixes = [_guard_fix(path)]
    write_fixes(fixes)  # with room: written in place, the link shares it
    assert os.path.samefile(path, link) and link.read_bytes() == GUARDED
    assert open(fix.backup, "rb").read() == SOURCE


def test_a_source_that_cannot_be_put_back_names_its_backup(tmp_path, monkeypatch):
    path, link = tmp_path / "model.py", tmp_path / "same.py"
    path.write_bytes(SOURCE)
    os.link(path, link)
    _disk_fills(monkeypatch, tmp_path, room=len(SOURCE), then_broken=True)
    with pytest.raises(UsageError) as caught:
        write_fixes([_guard_fix(path)])
    backup = tmp_path / "model.py.breakscan.bak"
    assert re.fullmatch(r"cannot write \S*model\.py: No space left on device; it may be "
                        r"partial: restore it from \S*model\.py\.breakscan\.bak",
                        str(caught.value))
    assert backup.read_bytes() == SOURCE


def test_a_link_is_written_through_whole_or_not_at_all(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    target, link = real / "model.py", tmp_path / "model.py"
    target.write_bytes(SOURCE)
    link.symlink_to(target)
    _disk_fills(monkeypatch, tmp_path, room=len(SOURCE))
    with pytest.raises(UsageError, match=r"model\.py is unchanged$"):
        write_fixes([_guard_fix(link)])
    assert target.read_bytes() == SOURCE and link.is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["model.py"]
    monkeypatch.undo()
    write_fixes([_guard_fix(link)])
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == GUARDED


def test_a_replaced_source_keeps_its_mode_and_owner(tmp_path):
    path = tmp_path / "model.py"
    path.write_bytes(SOURCE)
    os.chmod(path, 0o640)
    owner = (os.getuid(), os.getgid())
    if os.geteuid() == 0:  # root can hand the file to someone else: the copy must follow
        owner = (1234, 4321)
        os.chown(path, *owner)
    write_fixes([_guard_fix(path)])
    info = path.stat()
    assert path.read_bytes() == GUARDED
    assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o640, *owner)


def test_a_report_written_with_o_keeps_the_old_one_when_the_disk_fails(tmp_path):
    """``-o``/``--html``/baselines go through ``write_atomic``: the old file stays whole."""
    report = tmp_path / "report.json"
    report.write_text('{"old": true}\n')
    with _file_size_limit(8), pytest.raises(OSError) as caught:
        write_atomic(report, '{"new": "a report longer than the room left"}\n')
    assert caught.value.errno == errno.EFBIG
    assert report.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
