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
