"""The book's own machinery is not shown to readers as if it were part of the lesson.

A code cell that builds the book (finding labels, making links to other pages with ``attn.book_index``) teaches
nothing about attention: it must be tagged ``remove-cell`` (or ``remove-input``, ``hide-input``). The strands
page, whose subject is the book's own structure, is the exception. Handing numbers to the prose
(``glue_values(...)``, ``glue(...)``) is bookkeeping too, on every page: it sits in a hidden cell after the one
that computes the numbers, which shows the computation alone.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
ABOUT_THE_BOOK = {"chapters/strands.md"}
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```(?:\n|$)", re.S)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]|^\s*tags:\s*\[(?P<tags2>[^\]]*)\]", re.M)
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
MACHINERY = re.compile(r"\bbook_index\.(?!SECTIONS|STRANDS)\w+\(")
GLUE = re.compile(r"^\s*(?:glue_values|glue)\(", re.M)


def shown_machinery(text: str, rule: re.Pattern = MACHINERY) -> list[str]:
    """The first line of every cell shown to readers that does what ``rule`` finds (``book_index`` calls)."""
    found = []
    for m in CELL.finditer(text):
        body = m.group("body")
        tags = {t.strip() for g in TAGS.finditer(body) for t in (g.group("tags") or g.group("tags2")).split(",")}
        if rule.search(body) and not tags & HIDDEN:
            found.append(next(line for line in body.splitlines() if rule.search(line)))
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_book_machinery_is_hidden(page):
    if str(page.relative_to(ROOT)) in ABOUT_THE_BOOK:
        pytest.skip("the strands page is about the book itself")
    shown = shown_machinery(page.read_text(encoding="utf-8"))
    assert not shown, f"{page.relative_to(ROOT)} shows book-building code: {shown}"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_glue_is_hidden(page):
    shown = shown_machinery(page.read_text(encoding="utf-8"), GLUE)
    assert not shown, f"{page.relative_to(ROOT)} shows glue bookkeeping: {shown}"


def test_the_rule_catches_a_shown_cell_and_passes_a_hidden_one():
    shown = "```{code-cell} ipython3\nlabels = book_index.find_labels()\n```\n"
    hidden = "```{code-cell} ipython3\n:tags: [remove-cell]\n\nlabels = book_index.find_labels()\n```\n"
    meta = "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nx = book_index.link(l)\n```\n"
    assert shown_machinery(shown) == ["labels = book_index.find_labels()"]
    assert shown_machinery(hidden) == [] and shown_machinery(meta) == []
    glued = "```{code-cell} ipython3\nw = 1\nglue_values(w=w)\n```\n"
    assert shown_machinery(glued, GLUE) == ["glue_values(w=w)"]
    assert shown_machinery(glued.replace("w = 1\n", ":tags: [remove-cell]\n\n"), GLUE) == []


# Plotting is helper code too: a figure's axes, markers and labels are folded (hide-input) so that a shown cell
# shows the computation the text is about. Held on the pages of Propositions 3 to 5, the score matrix and the
# apparatus (their reader's round s2 found Proposition 3's and 4's figure cells shown in full), and on the practice
# pages (reader t4 found the split-heads figure's text colours and tick labels shown in full).
PLOTTING = re.compile(r"\bplt\.(?:subplots|figure|plot|imshow)\(|\.(?:imshow|errorbar|colorbar|set_xlabel|set_ylabel"
                      r"|legend)\(")
FOLDED_FIGURES = [ROOT / "chapters" / f"{p}.md" for p in ("prop3-scaling", "prop4-self-cross", "score-matrix",
                                                          "prop5-quadratic-cost", "apparatus", "practice-build",
                                                          "practice-break", "practice-papers")]


@pytest.mark.parametrize("page", FOLDED_FIGURES, ids=[p.name for p in FOLDED_FIGURES])
def test_plotting_is_folded(page):
    shown = shown_machinery(page.read_text(encoding="utf-8"), PLOTTING)
    assert not shown, f"{page.relative_to(ROOT)} shows plotting code in full: {shown}"


def test_the_plotting_rule_catches_a_shown_figure_cell():
    cell = "```{code-cell} ipython3\n---\nmystnb:\n  image:\n    alt: a plot\n---\nfig, ax = plt.subplots()\n```\n"
    assert shown_machinery(cell, PLOTTING) == ["fig, ax = plt.subplots()"]
    assert shown_machinery(cell.replace("---\nfig", "tags: [hide-input]\n---\nfig"), PLOTTING) == []
