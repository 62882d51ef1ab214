"""Every page of the built book, loaded in chromium with no network: clean console, no failed request,
math typeset, images with alt text, headings in order, no dead controls, axe-core without serious or
critical findings. One page load per page (see conftest.py); one test per page and check."""
import re

import pytest

from browsing import CONTRAST_FLOOR, PAGES, built_pages

BAD_IMPACTS = {"serious", "critical"}
FILENAME_ALT = re.compile(r"(\.(png|jpe?g|svg|gif|webp)$)|(^\.\./)|_images/|jupyter_execute", re.I)


def test_every_built_page_is_checked(book_html):
    missing = sorted(built_pages(book_html) - set(PAGES))
    assert not missing, f"pages in _build/html that these tests do not visit (add them to _toc.yml?): {missing}"
    absent = sorted(set(PAGES) - built_pages(book_html))
    assert not absent, f"pages these tests expect that the build did not write: {absent}"


@pytest.mark.parametrize("name", PAGES)
def test_console_is_clean(visit, name):
    r = visit(name)
    assert not r.console_errors, f"{name}: JavaScript errors:\n" + "\n".join(r.console_errors)


@pytest.mark.parametrize("name", PAGES)
def test_no_failed_or_outside_request(visit, name):
    r = visit(name)
    assert not r.failed_requests, f"{name}: failed requests (the page must load from 127.0.0.1 alone):\n" + "\n".join(r.failed_requests)


@pytest.mark.parametrize("name", PAGES)
def test_math_is_typeset(visit, name):
    m = visit(name).math
    assert not m["raw_tex"], (f"{name}: TeX shown to the reader as text (a $, \\( or TeX command outside the math "
                              f"MathJax typesets: $$ in a list item, a raw title, a caption?):\n" + "\n".join(m["raw_tex"][:8]))
    if m["formulas"]:
        assert m["typeset"] > 0, f"{name}: {m['formulas']} formulas but no MathJax output (MathJax not loaded?)"
        assert not m["untypeset"], f"{name}: formulas MathJax did not typeset: {m['untypeset'][:5]}"
    assert not m["errors"], f"{name}: TeX errors in MathJax output: {m['errors'][:5]}"


@pytest.mark.parametrize("name", PAGES)
def test_math_fits_its_box(visit, name):
    """At 1280 px no formula is wider than the paragraph, list item, admonition or display block it sits in
    (it would be cut off or need a scroll bar): break long display equations over lines (aligned)."""
    r = visit(name)
    assert not r.error, f"{name}: {r.error}"
    assert not r.math_overflow, f"{name}: formulas that do not fit at 1280 px:\n" + "\n".join(r.math_overflow[:8])


@pytest.mark.parametrize("name", PAGES)
def test_one_search_button_beside_the_sidebar(visit, name):
    """At 1280 px the sidebar holds the book's search button; the theme's top bar, which held a second one over
    the sidebar's, is hidden (_ext/offline_book_static/attn-layout.css)."""
    r = visit(name)
    assert not r.error, f"{name}: {r.error}"
    assert r.search_buttons.count("sidebar") == 1 and "top bar" not in r.search_buttons, (
        f"{name}: search buttons at 1280 px: {r.search_buttons}")


@pytest.mark.parametrize("name", PAGES)
def test_code_and_printed_output_fit_their_column(visit, name):
    """At 1280 px no code line and no printed line is wider than the text column, and no table is wider than it
    (each would need a horizontal scroll bar, and what is cut off, a shape comment or a table's last column, is
    out of sight): wrap code at the width tests/pages/test_code_width.py checks; print one fact per line; let a
    table's long formulas break between their parts."""
    r = visit(name)
    assert not r.error, f"{name}: {r.error}"
    assert not r.output_overflow, f"{name}: code, outputs or tables wider than the column at 1280 px:\n" + "\n".join(r.output_overflow[:8])


@pytest.mark.parametrize("name", PAGES)
def test_images_have_alt_text(visit, name):
    """Every <img> says what it shows. A matplotlib figure from a code cell gets myst-nb's cell metadata
    `mystnb: {image: {alt: ...}}` (or glue + {glue:figure} with :alt:); without it Sphinx writes the
    image's file name as its alt text, which this test rejects."""
    r = visit(name)
    bad = [f"{i['src']!r}: alt={i['alt']!r}" for i in r.images
           if not (i["alt"] or "").strip() or FILENAME_ALT.search(i["alt"].strip())]
    assert not bad, (f"{name}: images without alt text that says what they show "
                     "(add cell metadata `mystnb: {image: {alt: ...}}`):\n" + "\n".join(bad))
    unlabelled = [f["id"] or "(no id)" for f in r.figures if f["unlabelled"]]
    assert not unlabelled, f"{name}: figures whose image has no alt text: {unlabelled}"


@pytest.mark.parametrize("name", PAGES)
def test_headings_in_order(visit, name):
    h = visit(name).headings
    if not h:
        return
    assert h[0][0] == 1, f"{name}: the first heading is h{h[0][0]} {h[0][1]!r}, not the page title (h1)"
    assert [lvl for lvl, _ in h].count(1) == 1, f"{name}: more than one h1: {[t for lvl, t in h if lvl == 1]}"
    for (a, ta), (b, tb) in zip(h, h[1:]):
        assert b <= a + 1, f"{name}: heading level jumps from h{a} {ta!r} to h{b} {tb!r}"


@pytest.mark.parametrize("name", PAGES)
def test_no_dead_controls(visit, name):
    """Every widget on the static page is a live explorer (anywidget, drawn and computed in the browser):
    no ipywidgets control, which would move and redraw nothing without a kernel."""
    c = visit(name).controls
    assert c["widget_views"] == c["explorers"], (
        f"{name}: {c['widget_views']} widget view(s) but {c['explorers']} live explorer(s) drawn: a widget that is not "
        "an attn explorer, or an explorer that failed to render (is the vendored anywidget front end served?)")
    assert c["widgets"] == 0, f"{name}: {c['widgets']} ipywidgets element(s) in the static page"
    assert c["ranges_outside_scrubbers"] == 0, f"{name}: {c['ranges_outside_scrubbers']} slider(s) outside an explorer"


@pytest.mark.parametrize("name", PAGES)
def test_axe_finds_no_serious_violation(visit, name):
    r = visit(name)
    bad = [v for v in r.axe if v["impact"] in BAD_IMPACTS]
    assert not bad, f"{name}: axe-core found:\n" + "\n".join(
        f"  [{v['impact']}] {v['id']}: {v['help']} at {v['nodes']}" for v in bad)


@pytest.mark.parametrize("name", PAGES)
def test_axe_finds_no_serious_violation_in_dark_mode(visit, name):
    """The same page after the theme's switch to dark mode: the book's palette (attn-palette.css) must
    keep every text at WCAG AA contrast on dark backgrounds too (feedback boxes, proof headings, links)."""
    r = visit(name)
    bad = [v for v in r.axe_dark if v["impact"] in BAD_IMPACTS]
    assert not bad, f"{name} (dark mode): axe-core found:\n" + "\n".join(
        f"  [{v['impact']}] {v['id']} ({v['count']} elements): {v['help']} at {v['nodes']}" for v in bad)


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_every_text_has_contrast(visit, name, mode):
    """No text below 3:1 against what it is painted on, in either mode, including what axe-core skips
    (punctuation alone, such as the `...` in a feedback box's code span)."""
    r = visit(name)
    low = r.low_contrast if mode == "light" else r.low_contrast_dark
    assert not low, f"{name} ({mode} mode): {len(low)} text(s) below {CONTRAST_FLOOR}:1, e.g.\n" + "\n".join(
        f"  {x['ratio']}:1 {x['where']} {x['text']!r} ({x['fg']} on {x['bg']})" for x in low[:8])


def test_search_finds_pages(visit):
    assert visit("search.html").search_hits > 0, "searching the built book for 'softmax' found nothing"
