"""Every page's HTML weighs at most 600 KB: a reader on a slow line or a busy machine gets the page (a
fresh clone's browser tests once timed out on the heaviest pages). Measured on the built file, which holds
the page's outputs (figures are inlined as base64; the live explorers carry their code and state)."""
import pytest

from browsing import PAGES

LIMIT = 600 * 1024


@pytest.mark.parametrize("name", PAGES)
def test_page_html_weighs_at_most_600_kb(book_html, name):
    size = (book_html / name).stat().st_size
    assert size <= LIMIT, f"{name}: {size / 1024:.0f} KB of HTML (limit {LIMIT / 1024:.0f} KB)"
