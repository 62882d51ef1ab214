"""Every page's HTML weighs at most 600 KB: a reader on a slow line or a busy machine gets the page (a
fresh clone's browser tests once timed out on the heaviest pages). Measured on the built file, which holds
the page's outputs (figures and animations are inlined as base64)."""
import pytest

from browsing import PAGES

LIMIT = 600 * 1024
# Pages whose weight is the frame animations (base64 PNG frames) that the live, kernel-free explorers of
# issue 14 replace (developer i14a); not strict, so they pass as soon as that work lands.
ANIMATED = {
    "chapters/prop1-weighted-average.html", "chapters/prop2-three-projections.html", "chapters/prop3-scaling.html",
    "chapters/prop4-self-cross.html", "chapters/theory.html",
}


@pytest.mark.parametrize("name", [
    pytest.param(p, marks=pytest.mark.xfail(strict=False, reason="frame animations, replaced by the live explorers (issue 14, i14a)"))
    if p in ANIMATED else p for p in PAGES])
def test_page_html_weighs_at_most_600_kb(book_html, name):
    size = (book_html / name).stat().st_size
    assert size <= LIMIT, f"{name}: {size / 1024:.0f} KB of HTML (limit {LIMIT / 1024:.0f} KB)"
