"""Every code cell of every page compiles without a warning: an invalid escape such as ``"\\s"`` in a string is a
SyntaxWarning the kernel prints on the reader's page (and an error in a future Python)."""
import warnings
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])


def compile_warnings(source: str) -> list[str]:
    """The warnings compiling one cell gives (IPython's % and ! lines left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile(code, "cell", "exec")
    return [f"line {w.lineno}: {w.message}" for w in caught]


def test_the_check_sees_an_invalid_escape():
    assert compile_warnings('x = "a\\sb"\n') and not compile_warnings('x = r"a\\sb"\n')


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_cell_compiles_without_a_warning(page):
    notebook = jupytext.read(page)
    found = {i: w for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             for w in [compile_warnings(cell.source)] if w}
    assert not found, f"{page.name}: code cells (by index) that compile with warnings: {found}"
