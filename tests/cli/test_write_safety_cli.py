"""``breakscan --fix --write`` on a disk that fills while the fixed file is written: exit 2, one
line saying the file is unchanged, the file byte for byte as before, no backup left.

The fault is injected into the CLI process's ``os.write`` for files in the test's folder only
(a short write past half the file's size, then ENOSPC); the backup is a ``sendfile`` copy and
still fits, as in the issue; the scan and verifying children run untouched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import QUICK, ROOT, SAMPLES

FULL_DISK = """
import errno, os, sys
folder, real_write = os.path.realpath(sys.argv[1]), os.write
room = os.path.getsize(os.path.join(folder, "tensor_branch.py")) // 2  # the fix is shorter

def write(fd, data):
    try:
        inside = os.readlink(f"/proc/self/fd/{fd}").startswith(folder + os.sep)
    except OSError:
        inside = False
    offset = os.lseek(fd, 0, os.SEEK_CUR) if inside else 0
    if not inside or offset + len(data) <= room:
        return real_write(fd, data)
    if offset < room:
        return real_write(fd, bytes(data[: room - offset]))
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

os.write = write
from breakscan.cli import main
main(sys.argv[2:])
"""


def test_a_disk_that_fills_during_write_exits_2_and_leaves_the_source_unchanged(tmp_path):
    model = tmp_path / "tensor_branch.py"
    shutil.copy(SAMPLES / "tensor_branch.py", model)
    original = model.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path), f"{model}:TensorIf", "-s", "8,16",
         "--fix", "--write", *QUICK, "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    if "torch_where: verified" not in proc.stderr:
        pytest.skip(f"the fix was not verified on this machine, nothing to write: {proc.stderr}")
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 2, proc.stderr
    assert errors == [f"breakscan: error: cannot write {model}: No space left on device; "
                      f"{model} is unchanged"]
    assert "Traceback" not in proc.stderr
    assert model.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tensor_branch.py"]
