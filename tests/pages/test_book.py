import subprocess

import pytest

from book import HTML, ROOT


@pytest.fixture
def book_build(book_build):
    if book_build is None:
        pytest.skip("ATTN_BOOK_HTML names a book built elsewhere: this session builds none")
    return book_build


def test_book_builds_strictly(book_build):
    result = book_build
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (HTML / "index.html").exists()
    assert (HTML / "chapters" / "prop1-weighted-average.html").exists()


def test_a_rebuild_with_nothing_changed_executes_nothing(book_build):
    """The README's build command, run again on the book the clean build above made: the execution cache
    (keyed on each page and on src/attn, _ext/execution_cache.py) and Sphinx's environment are kept, so no
    page is read or executed again. (After an edit to src/attn every page is: tests/pages/test_book_extensions.py.)"""
    assert book_build.returncode == 0
    again = subprocess.run([str(ROOT / "bin" / "build-book")], cwd=ROOT, capture_output=True, text=True)
    log = again.stdout + again.stderr
    assert again.returncode == 0, log[-4000:]
    assert "Executing notebook" not in log, "a page was executed again although nothing changed"
    assert "execution cache emptied" not in log
    assert "no targets are out of date" in log, log[-2000:]
