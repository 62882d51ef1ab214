import subprocess

from book import HTML, ROOT, build_book


def test_book_builds_strictly():
    result = build_book()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (HTML / "index.html").exists()
    assert (HTML / "chapters" / "prop1-weighted-average.html").exists()


def test_a_rebuild_with_nothing_changed_executes_nothing():
    """The README's build command, run again on the book the clean build above made: the execution cache
    (keyed on each page and on src/attn, _ext/execution_cache.py) and Sphinx's environment are kept, so no
    page is read or executed again. (After an edit to src/attn every page is: tests/test_book_extensions.py.)"""
    assert build_book().returncode == 0
    again = subprocess.run([str(ROOT / "bin" / "build-book")], cwd=ROOT, capture_output=True, text=True)
    log = again.stdout + again.stderr
    assert again.returncode == 0, log[-4000:]
    assert "Executing notebook" not in log, "a page was executed again although nothing changed"
    assert "execution cache emptied" not in log
    assert "no targets are out of date" in log, log[-2000:]
