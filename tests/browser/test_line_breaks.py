"""Line breaks a reader trips over, at 1280 px, on the pages whose reader found them (the Practice pages and the
exercise index): inline code cut over two lines (docutils lets `variant("V01", 7)` break at its space), and a
comma or full stop alone at the start of a line after inline math (the browser may break between a MathJax
formula and the punctuation that follows it). Also: a figure wider than the column is shown exactly
attn.page.FIGURE_COLUMN_PX wide, the width attn.page.figure_text_px assumes when the pages check that their
figures' text is readable. Loaded in Debian's chromium from the book's own server.

For another page, add it to PAGES; for the whole book, use browsing.PAGES.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from attn.page import FIGURE_COLUMN_PX
from browsing import CHROMIUM, CHROMIUM_ARGS, MATHJAX_DONE

PAGES = ["chapters/practice.html", "chapters/practice-build.html", "chapters/practice-break.html",
         "chapters/practice-papers.html", "exercises/index.html"]

BREAKS_JS = r"""
() => {
  const found = [];
  const main = document.querySelector("main") || document.body;
  const line = el => [...el.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top));
  for (const code of main.querySelectorAll("code")) {
    if (code.closest("pre, .highlight, .cell_output, .output")) continue;
    if (new Set(line(code)).size > 1) found.push("inline code cut over two lines: " + code.textContent);
  }
  for (const mj of main.querySelectorAll("mjx-container:not([display='true'])")) {
    const el = mj.closest("span.math") || mj;
    const next = el.nextSibling;
    if (!next || next.nodeType !== Node.TEXT_NODE || !/^[,.;:)]/.test(next.textContent)) continue;
    const range = document.createRange();
    range.setStart(next, 0);
    range.setEnd(next, 1);
    const mark = range.getBoundingClientRect(), box = mj.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;  // not shown (a folded table of contents)
    if (mark.top >= box.bottom - 2) {
      const context = (el.parentElement.textContent || "").replace(/\s+/g, " ");
      const at = context.indexOf(next.textContent.slice(0, 20).replace(/\s+/g, " "));
      found.push("punctuation starts a line after a formula: ..." + context.slice(Math.max(0, at - 40), at + 20));
    }
  }
  return found;
}
"""

# (shown width, natural width) of every figure image in the page's text
FIGURES_JS = """() => [...document.querySelectorAll("main img")].filter(i => i.naturalWidth > 0)
                      .map(i => [i.getBoundingClientRect().width, i.naturalWidth])"""


@pytest.fixture(scope="module")
def breaks(server) -> dict[str, list[str]]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: bin/setup installs Debian's chromium"
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((server, "data:")) else r.abort())
        for name in PAGES:
            page.goto(server + name, wait_until="load")
            page.evaluate(MATHJAX_DONE)
            found[name] = page.evaluate(BREAKS_JS)
            found[name] += [f"a figure {natural} px wide is shown {shown:.0f} px wide, not {FIGURE_COLUMN_PX}"
                            for shown, natural in page.evaluate(FIGURES_JS)
                            if natural > shown + 1 and abs(shown - FIGURE_COLUMN_PX) > 2]
        browser.close()
    return found


@pytest.mark.parametrize("name", PAGES)
def test_no_stray_line_break_and_figures_at_the_column_width(breaks, name):
    assert not breaks[name], f"{name} at 1280 px:\n" + "\n".join(breaks[name])
