"""The sandbox's mounts: bwrap mounts in the order of its arguments, and a later mount hides what lies under
it. /tmp is the sandbox's own; the read-only roots (Python, the venv, the attn package) are bound after it, so a
checkout under /tmp (a clone in /tmp/fresh, say) stays visible to the kernel. Before, every submission of such a
checkout died with "Kernel died before replying to kernel_info"."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attn.grading.runner import sandbox
from attn.grading.runner.sandbox import Sandbox


def _mount_order(args: list[str]) -> list[tuple[str, str]]:
    """(kind, target) of each mount in a bwrap command line, in order."""
    out, i = [], 0
    while i < len(args) and args[i] != "--":
        a = args[i]
        if a in ("--bind", "--ro-bind", "--symlink"):
            out.append((a, args[i + 2]))
            i += 3
        elif a in ("--tmpfs", "--dir", "--dev", "--proc", "--chdir"):
            out.append((a, args[i + 1]))
            i += 2
        else:
            i += 1
    return out


@pytest.mark.parametrize("probe", [False, True])
def test_tmp_is_mounted_before_the_read_only_roots(tmp_path, monkeypatch, probe):
    root = "/tmp/a-checkout/.venv"  # a venv under /tmp, as in a clone made there
    monkeypatch.setattr(sandbox, "_read_only_roots", lambda: [root])
    box = Sandbox(tmp_path / "scratch", tmp_path / "ipc")
    mounts = _mount_order(box.command(["true"], probe=probe))
    tmp = next(k for k, (kind, target) in enumerate(mounts) if target == "/tmp" and kind in ("--bind", "--tmpfs"))
    venv = mounts.index(("--ro-bind", root))
    assert tmp < venv, mounts
    assert not any(target == "/tmp" for kind, target in mounts[tmp + 1:] if kind in ("--bind", "--tmpfs"))


@pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap is not installed (bin/test installs it)")
def test_a_python_under_tmp_runs_in_the_sandbox(tmp_path, monkeypatch):
    """A real run: the read-only root is a folder under /tmp holding a script; the sandbox can read it."""
    folder = Path("/tmp") / f"attn-mount-test-{tmp_path.name}"
    folder.mkdir(exist_ok=True)
    (folder / "here.txt").write_text("visible\n")
    roots = sandbox._read_only_roots() + [str(folder)]
    monkeypatch.setattr(sandbox, "_read_only_roots", lambda: roots)
    box = Sandbox(tmp_path / "scratch", tmp_path / "ipc")
    box.prepare()
    try:
        r = subprocess.run(box.command([sys.executable, "-c", f"print(open('{folder}/here.txt').read())"]),
                           capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert r.returncode == 0 and r.stdout.strip() == "visible", r.stderr
