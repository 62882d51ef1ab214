"""(c) The whole book: a clean strict build, then a rebuild with nothing changed (optional: ``--book``).

Both run the README's build command (``bin/build-book``: set-up, then the strict
``-W -n --keep-going`` build with pages executed in parallel), into a fresh folder under the
system temp directory, so they never touch anyone's ``_build``. Both times include the set-up
check (a fraction of a second when nothing changed).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from .machine import ROOT


def _build(out: Path, *extra: str) -> dict:
    cmd = [str(ROOT / "bin" / "build-book"), *extra, str(out)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    # kernels' own start-up chatter ("[IPKernelApp] WARNING | ... TCP ...") is not a build warning
    log = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("[IPKernelApp]"))
    return {
        "command": " ".join(["bin/build-book", *extra, "<tmp>"]),
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
        clean = _build(out)
        tick("no-change rebuild")
        again = _build(out, "--incremental")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"clean": clean, "rebuild": again, "goal_clean_s": 120.0, "clean_met": clean["ok"] and clean["seconds"] < 120}
