"""Every MyST notebook under chapters/ and exercises/ runs top to bottom in a fresh kernel.

pytest's notebook plugins do not collect .md files, so read them with jupytext and run them with nbclient.
"""
from pathlib import Path

import jupytext
import nbclient
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for folder in ("chapters", "exercises") for p in (ROOT / folder).rglob("*.md")
    if p.read_text(encoding="utf-8").startswith("---\njupytext:")
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    nb = jupytext.read(path)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, showing the failing cell, if any cell raises


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS
