"""Every MyST notebook under chapters/ and exercises/ runs top to bottom in a fresh kernel.

pytest's notebook plugins do not collect .md files, so read them with jupytext and run them with nbclient.
"""
from pathlib import Path

import jupytext
import nbclient
import pytest
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from book import built_cleanly, toc_pages

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    p for folder in ("chapters", "exercises") for p in (ROOT / folder).rglob("*.md")
    if p.read_text(encoding="utf-8").startswith("---\njupytext:")
)
# A kernel that never answers (seen rarely here: a lost first message on a busy machine) is the
# machine's fault, not the notebook's: such a run is tried once more in a new kernel (pytest-rerunfailures).
# A cell that raises (CellExecutionError) fails at once, and a notebook that really hangs times out twice.
KERNEL_TROUBLE = [CellTimeoutError, DeadKernelError, TimeoutError, "Kernel didn't respond"]
# A page of the book is also executed, top to bottom in a fresh kernel with errors not allowed, by the clean
# strict build (tests/pages/test_book.py, tests/browser); when this session's build has passed, running it
# again here proves nothing more (bin/test: about 3.5 of these 4 minutes). Learner copies are not in the book.
IN_THE_BOOK = {page.removesuffix(".html") for page in toc_pages()}


def _execute(path: Path, cwd: Path) -> None:
    nb = jupytext.read(path)
    client = nbclient.NotebookClient(nb, timeout=300, startup_timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()  # raises CellExecutionError, showing the failing cell, if any cell raises


@pytest.mark.flaky(reruns=1, only_rerun=KERNEL_TROUBLE)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, request):
    if path.relative_to(ROOT).with_suffix("").as_posix() in IN_THE_BOOK and built_cleanly(request.config):
        pytest.skip("executed by this session's clean strict book build, which passed")
    _execute(path, tmp_path)


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS
