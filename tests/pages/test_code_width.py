"""Every code line a reader sees fits the book's code column, so nothing scrolls out of sight.

At 1280 px the theme's code box is 684 px wide with 16 px of padding each side, in a 14 px monospace font of
8.43 px a character: 77 characters fit. Inside the boxes of the page the box is narrower: a folded cell once
opened (``hide-input``) 666 px, 75 characters; a solution 662 px, 74; an exercise's statement 617 px, 69
(measured in Chromium; tests/browser/test_pages.py checks the built page itself, this test names the line).
Removed cells (``remove-cell``, ``remove-input``) are not shown and are not checked; the learner copies open in
JupyterLab, which has no such column.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
WIDTH = 77
WIDTH_IN = {"folded": 75, "solution": 74, "exercise": 69}
FENCE = re.compile(r"^```(?P<kind>\{code-cell\}[^\n]*|python[^\n]*|\{code-block\}[^\n]*)\n(?P<body>.*?)\n```$", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]|^\s*tags:\s*\[(?P<tags2>[^\]]*)\]", re.M)
REMOVED = {"remove-cell", "remove-input"}
FOLDED = {"hide-input", "hide-cell"}
GATE = re.compile(r"^[`:]{3,}\{(?P<kind>exercise|solution)-(?P<end>start|end)\}", re.M)


def _inside(text: str, at: int) -> str | None:
    """The gated box (exercise or solution) the text at ``at`` sits in, if any."""
    box = None
    for m in GATE.finditer(text, 0, at):
        box = m.group("kind") if m.group("end") == "start" else None
    return box


def wide_lines(text: str) -> list[str]:
    """``line number: line`` for every shown code line wider than the box it is shown in."""
    found = []
    for m in FENCE.finditer(text):
        body = m.group("body")
        tags = {t.strip() for g in TAGS.finditer(body) for t in (g.group("tags") or g.group("tags2")).split(",")}
        if tags & REMOVED:
            continue
        box = _inside(text, m.start())
        width = min([WIDTH] + ([WIDTH_IN[box]] if box else []) + ([WIDTH_IN["folded"]] if tags & FOLDED else []))
        lines = body.split("\n")
        skip = 0  # the cell's options: a YAML block (captions, alt texts) or ":key: value" lines
        if lines and lines[0] == "---" and "---" in lines[1:]:
            skip = lines.index("---", 1) + 1
        while skip < len(lines) and lines[skip].startswith(":"):
            skip += 1
        first = text[:m.start("body")].count("\n") + 1
        found += [f"{first + i}: ({width}) {line}" for i, line in enumerate(lines) if i >= skip and len(line) > width]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_shown_code_fits_the_column(page):
    wide = wide_lines(page.read_text(encoding="utf-8"))
    assert not wide, f"{page.relative_to(ROOT)}: {len(wide)} code lines over {WIDTH} characters:\n" + "\n".join(wide[:20])


def test_the_rule_sees_shown_cells_and_skips_hidden_ones():
    long = "x = " + "1 + " * 30 + "1"
    shown = f"```{{code-cell}} ipython3\n{long}\n```\n"
    hidden = f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{long}\n```\n"
    assert wide_lines(shown) == [f"2: (77) {long}"] and wide_lines(hidden) == []
    assert wide_lines(f"```python\n{long}\n```\n") == [f"2: (77) {long}"]
    line = "x" * 72
    statement = f"```{{exercise-start}}\n```\n\n```{{code-cell}} ipython3\n{line}\n```\n\n```{{exercise-end}}\n```\n"
    assert wide_lines(statement) == [f"5: (69) {line}"] and wide_lines(statement.replace("x" * 72, "x" * 69)) == []
    folded = f"```{{code-cell}} ipython3\n:tags: [hide-input]\n\n{'y' * 76}\n```\n"
    assert wide_lines(folded) == [f"4: (75) {'y' * 76}"]
    caption = f"```{{code-cell}} ipython3\n---\nmystnb:\n  figure:\n    caption: {'z' * 90}\n---\nx = 1\n```\n"
    assert wide_lines(caption) == []
    # a long caption in the cell's metadata is not code; a long line after the metadata is
    meta = f"```{{code-cell}} ipython3\n---\nmystnb:\n  figure:\n    caption: {long}\n---\n{long}\n```\n"
    assert wide_lines(meta) == [f"7: (77) {long}"]
