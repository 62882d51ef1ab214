"""Build the book once per test session: from clean, every notebook executed, strict."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
_result: subprocess.CompletedProcess | None = None


def build_book() -> subprocess.CompletedProcess:
    global _result
    if _result is None:
        subprocess.run(["rm", "-rf", "_build/html", "_build/.doctrees", "_build/jupyter_execute"], cwd=ROOT, check=True)
        jb = Path(sys.executable).parent / "jupyter-book"
        _result = subprocess.run(
            [str(jb), "build", ".", "--builder", "html", "--all", "-W", "-n", "--keep-going"],
            cwd=ROOT, capture_output=True, text=True,
        )
    return _result
