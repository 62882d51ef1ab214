from book import HTML, build_book


def test_book_builds_strictly():
    result = build_book()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (HTML / "index.html").exists()
    assert (HTML / "chapters" / "prop1-weighted-average.html").exists()
