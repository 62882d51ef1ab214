"""Build the book once per test session: from clean, every notebook executed, strict."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
_result: subprocess.CompletedProcess | None = None
# Signs that a kernel, not a page, failed (a lost message on a busy machine): then build once more.
KERNEL_TROUBLE = ("CellTimeoutError", "DeadKernelError", "Kernel didn't respond", "Kernel died")


def _build() -> subprocess.CompletedProcess:
    """The README's build command itself (bin/build-book: set-up, then a clean strict parallel build)."""
    return subprocess.run([str(ROOT / "bin" / "build-book"), "--clean"], cwd=ROOT, capture_output=True, text=True)


def build_book() -> subprocess.CompletedProcess:
    global _result
    if _result is None:
        _result = _build()
        log = _result.stdout + _result.stderr
        if _result.returncode != 0 and any(sign in log for sign in KERNEL_TROUBLE):
            print("book build: a kernel stopped answering; building once more")
            _result = _build()
    return _result
