"""(c) The whole book: a clean strict build, then a rebuild with nothing changed (optional: ``--book``).

Both use the project's strict command (``-W -n --keep-going``) into a fresh
folder under the system temp directory, so they never touch anyone's ``_build``.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from .machine import ROOT


def _jupyter_book() -> str:
    exe = Path(sys.executable).with_name("jupyter-book")
    return str(exe) if exe.exists() else "jupyter-book"


def _build(out: Path, *extra: str) -> dict:
    cmd = [_jupyter_book(), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going", *extra]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    # kernels' own start-up chatter ("[IPKernelApp] WARNING | ... TCP ...") is not a build warning
    log = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("[IPKernelApp]"))
    return {
        "command": " ".join(["jupyter-book", "build", ".", "--path-output", "<tmp>", "-W", "-n", "--keep-going", *extra]),
        "seconds": seconds,
        "returncode": done.returncode,
        "ok": done.returncode == 0,
        "warnings": sum("WARNING:" in line for line in log.splitlines()),
        "first_warnings": [line for line in log.splitlines() if "WARNING:" in line][:10],
        "log_tail": log.splitlines()[-15:] if done.returncode else [],
    }


def steps() -> int:
    return 2


def run(tick: Callable[[str], None] = lambda s: None) -> dict:
    out = Path(tempfile.mkdtemp(prefix="attn-bench-book-"))
    try:
        tick("clean strict build")
        clean = _build(out, "--all")
        tick("no-change rebuild")
        again = _build(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"clean": clean, "rebuild": again, "goal_clean_s": 120.0, "clean_met": clean["ok"] and clean["seconds"] < 120}
