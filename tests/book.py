"""The book as the tests build it: from clean, every notebook executed, strict (the session fixture
``book_build`` in tests/conftest.py builds it once per test session)."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# Signs in the build's log that a kernel, not a page, failed (a lost message on a busy machine).
KERNEL_TROUBLE = ("CellTimeoutError", "DeadKernelError", "Kernel didn't respond", "Kernel died")


def build() -> subprocess.CompletedProcess:
    """The README's build command itself (bin/build-book: set-up, then a clean strict parallel build)."""
    return subprocess.run([str(ROOT / "bin" / "build-book"), "--clean"], cwd=ROOT, capture_output=True, text=True)


def kernel_trouble(result: subprocess.CompletedProcess) -> bool:
    """The build failed, and its log says a kernel stopped answering (the machine's fault, not a page's)."""
    return result.returncode != 0 and any(sign in result.stdout + result.stderr for sign in KERNEL_TROUBLE)
