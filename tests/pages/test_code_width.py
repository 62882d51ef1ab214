"""Every code line a reader sees fits the book's code column, so nothing scrolls out of sight.

At 1280 px the theme's code box is 684 px wide with 16 px of padding each side, in a 14 px monospace font of
8.43 px a character: 77 characters fit (measured in Chromium; tests/browser/test_pages.py checks the built page
itself, this test names the line). Hidden cells (``remove-cell``, ``remove-input``, ...) are not shown and are
not checked; the learner copies open in JupyterLab, which has no such column.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
WIDTH = 77
FENCE = re.compile(r"^```(?P<kind>\{code-cell\}[^\n]*|python[^\n]*|\{code-block\}[^\n]*)\n(?P<body>.*?)\n```$", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]|^\s*tags:\s*\[(?P<tags2>[^\]]*)\]", re.M)
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def wide_lines(text: str) -> list[str]:
    """``line number: line`` for every shown code line longer than WIDTH characters."""
    found = []
    for m in FENCE.finditer(text):
        body = m.group("body")
        tags = {t.strip() for g in TAGS.finditer(body) for t in (g.group("tags") or g.group("tags2")).split(",")}
        if tags & HIDDEN:
            continue
        first = text[:m.start("body")].count("\n") + 1
        lines = body.split("\n")
        # A cell's metadata block (``---`` ... ``---``: caption, alt text, tags) is not code and is not shown
        # as code; the code starts after it.
        skip = lines.index("---", 1) + 1 if lines[0] == "---" and "---" in lines[1:] else 0
        found += [f"{first + i}: {line}" for i, line in enumerate(lines) if i >= skip and len(line) > WIDTH]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_shown_code_fits_the_column(page):
    wide = wide_lines(page.read_text(encoding="utf-8"))
    assert not wide, f"{page.relative_to(ROOT)}: {len(wide)} code lines over {WIDTH} characters:\n" + "\n".join(wide[:20])


def test_the_rule_sees_shown_cells_and_skips_hidden_ones():
    long = "x = " + "1 + " * 30 + "1"
    shown = f"```{{code-cell}} ipython3\n{long}\n```\n"
    hidden = f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{long}\n```\n"
    assert wide_lines(shown) == [f"2: {long}"] and wide_lines(hidden) == []
    assert wide_lines(f"```python\n{long}\n```\n") == [f"2: {long}"]
    # a long caption in the cell's metadata is not code; a long line after the metadata is
    meta = f"```{{code-cell}} ipython3\n---\nmystnb:\n  figure:\n    caption: {long}\n---\n{long}\n```\n"
    assert wide_lines(meta) == [f"7: {long}"]
