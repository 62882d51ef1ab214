"""What the built pages show as text (read from the built HTML, not in the browser): the book this session built,
or the one ATTN_BOOK_HTML names."""
import re

from book import ROOT

OWN = [ROOT / "chapters" / f"{name}.md" for name in ("theory", "mathematics-softmax", "mathematics-attention")]


def test_built_derivation_pages_show_no_glued_number_in_e_notation(book_html):
    """A number glued into a sentence of the theory and Mathematics pages is written as math (3.9 × 10⁻⁷), never in
    a computer's e-notation (3.9e-07), which could also break across two lines."""
    pages = [book_html / "chapters" / p.with_suffix(".html").name for p in OWN]
    pasted = re.compile(r"<span class=\"pasted-[a-z]+\">(?:(?!</span>).)*?\d(?:\.\d+)?e[+-]?\d+(?:(?!</span>).)*?</span>", re.S)
    found = []
    for page in pages:
        text = re.sub(r"<pre.*?</pre>", "", page.read_text(encoding="utf-8"), flags=re.S)
        found += [f"{page.name}: {m.group(0)[:100]!r}" for m in pasted.finditer(text)]
    assert not found, "\n".join(found)


FIGURE = re.compile(r"<figure\b[^>]*>(.*?)</figure>", re.S)
DRAWN = re.compile(r"<img\b|<svg\b|attn-explorer|application/vnd\.jupyter\.widget-view\+json")


def figures_without_a_picture(html: str) -> list[str]:
    """The figures of a built page that hold no picture (an empty plt.show() output), and the glued figures
    shown as their text repr ("<Figure size 640x480 with 1 Axes>")."""
    found = [f"figure {m.group(0)[:80]!r} holds no picture" for m in FIGURE.finditer(html) if not DRAWN.search(m.group(1))]
    found += [f"a figure shown as text: {m.group(0)!r}" for m in re.finditer(r"&lt;Figure size [^&]*&gt;", html)]
    return found


def test_every_figure_is_drawn(book_html):
    """An MPLBACKEND of Agg in the build's environment (a benchmark test once set it in the pytest process) makes
    every kernel draw off screen: each plt.show() figure comes out empty and each glued one as its text repr, and
    the strict build still passes. Every figure of every page must hold its picture."""
    found = []
    for page in sorted(book_html.glob("*/*.html")) + [book_html / "intro.html"]:
        found += [f"{page.relative_to(book_html)}: {f}" for f in figures_without_a_picture(page.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_figure_rule_finds_an_empty_figure_and_a_text_repr():
    empty = '<figure class="align-default" id="fig-x"><figcaption><p>Caption</p></figcaption></figure>'
    text = '<div class="output text_plain"><pre>&lt;Figure size 640x480 with 1 Axes&gt;</pre></div>'
    drawn = '<figure id="fig-y"><img alt="a plot" src="../_images/a.png"/><figcaption>c</figcaption></figure>'
    assert len(figures_without_a_picture(empty + text)) == 2 and not figures_without_a_picture(drawn)
