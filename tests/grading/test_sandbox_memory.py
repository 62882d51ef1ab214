"""The sandbox's memory: each process has an address-space limit, and where the grader can make a memory cgroup
(as root here) all of a sandbox's processes share one limit, so forking does not multiply it."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attn.grading.runner.sandbox import Limits, MemoryGroup, Sandbox, check_available

FORKS = """
import os, time
pids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            b = bytearray(300 * 2**20)
            for j in range(0, len(b), 4096):
                b[j] = 1
            time.sleep(1.5)
            os._exit(0)
        except MemoryError:
            os._exit(3)
    pids.append(pid)
print(sum(os.waitpid(p, 0)[1] == 0 for p in pids))
"""


def _group_available() -> bool:
    g = MemoryGroup(2**30)
    ok = g.path is not None
    g.remove()
    return ok


@pytest.mark.skipif(not _group_available(), reason="no writable memory cgroup here (not root, or no controller)")
def test_four_forked_children_share_one_memory_limit():
    """Four children of 300 MB each under --memory-mb 700: each is within its own address-space limit, but together
    they are not; at most two hold their memory to the end (the others are killed), and the group is removed."""
    check_available()
    root = Path(tempfile.mkdtemp(prefix="attn-mem-"))
    try:
        sandbox = Sandbox(root / "scratch", root / "ipc", Limits(memory_mb=700))
        sandbox.prepare()
        (root / "scratch" / "forks.py").write_text(FORKS)
        sandbox.give(root / "scratch" / "forks.py")
        proc = subprocess.run(sandbox.command([sys.executable, "/scratch/forks.py"]), capture_output=True, text=True,
                              timeout=120)
        path = sandbox.group.path
        assert proc.returncode == 0, proc.stderr[-500:]
        assert int(proc.stdout.strip()) <= 2
        sandbox.release()
        assert not path.exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_without_a_cgroup_the_command_is_unchanged(monkeypatch):
    monkeypatch.setattr(MemoryGroup, "ROOTS", (Path("/nonexistent/cgroup"),))
    g = MemoryGroup(2**30)
    assert g.path is None and g.wrap(["true"]) == ["true"]
