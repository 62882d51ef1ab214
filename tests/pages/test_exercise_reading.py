"""What an expert read of the problem and exercise pages found (review 5), kept from coming back.

Each test is one kind of fault, checked on every page of ``exercises/`` it can occur on:

- code wider than the box it is shown in (the exercise and solution boxes are narrower than the page);
- a proposition cited as plain text ("Proposition 3") instead of a link;
- prose that names a row, token, query, key or head by its code index (0) without saying it counts from 0,
  on a page whose formulas count from 1 (the notation page's convention);
- a claim that needs a condition and does not state it (E02's equation, E08's closed form, E10's zero row);
- a question that answers itself (E10's right choice spelling out the mechanism it asks for);
- a name that means something else in the notation (``w`` for a warning);
- check() and hint() boxes on a light panel in the book's dark mode.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "exercises").glob("*.md") if p.name != "index.md")
IDS = [p.name for p in PAGES]
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]", re.M)
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The page without its code cells and without inline code and math (what the prose itself says)."""
    text = CELL.sub("\n", text)
    return re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)


def _shown_code(text: str) -> list[str]:
    lines = []
    for m in CELL.finditer(text):
        body = m["body"]
        tags = {t.strip() for g in TAGS.finditer(body) for t in g["tags"].split(",")}
        if not tags & HIDDEN:
            lines += body.split("\n")
    return lines


# -- code fits the box it is shown in -------------------------------------------------------------------------
# At 1280 px the exercise box and the solution box leave a code column of 617 px: 16 px of padding each side and
# 8.43 px a character make 69 characters (tests/browser/test_pages.py measures the built page; the page-wide
# column of tests/pages/test_code_width.py holds 77).
BOX_WIDTH = 69


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_code_fits_the_exercise_and_solution_boxes(page):
    wide = [line for line in _shown_code(_text(page)) if len(line) > BOX_WIDTH]
    assert not wide, f"{page.name}: code lines over {BOX_WIDTH} characters:\n" + "\n".join(wide)


# -- results are cited as links ---------------------------------------------------------------------------------
PLAIN_CITATION = re.compile(r"\b(?:Proposition|Definition|Lemma|Theorem)\s+\d+\b")
EXPLICIT_REF = re.compile(r"\{prf:ref\}`(?P<kind>Proposition|Definition)\s+(?P<n>\d+)\s*<(?P<label>[\w-]+)>`")


def plain_citations(text: str) -> list[str]:
    without_roles = re.sub(r"\{(?:prf:ref|ref|doc)\}`[^`]*`", " ", CELL.sub("\n", text))
    return PLAIN_CITATION.findall(without_roles)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_propositions_are_cited_as_links(page):
    assert not plain_citations(_text(page)), f"{page.name} cites as plain text: {plain_citations(_text(page))}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_a_cited_number_is_the_propositions_own(page):
    """{prf:ref}`Proposition 3 <prop-scaling>`: the chapter's Proposition 3 is the one on chapters/prop3-*.md."""
    for m in EXPLICIT_REF.finditer(_text(page)):
        files = [p for p in (ROOT / "chapters").glob("*.md") if f":label: {m['label']}\n" in _text(p)]
        assert len(files) == 1, (page.name, m["label"])
        assert m["kind"] != "Proposition" or files[0].name.startswith(f"prop{m['n']}-"), (page.name, m.group(0))


def test_the_citation_rule_catches_plain_text():
    assert plain_citations("signal gets through (Proposition 3).")
    assert not plain_citations("signal gets through ({prf:ref}`Proposition 3 <prop-scaling>`).")


# -- the index base is said where prose names a code index -------------------------------------------------------
CODE_INDEX = re.compile(r"\b(?:[Rr]ow|[Tt]oken|[Qq]uery|[Kk]ey|[Hh]ead)s? 0\b")
SAYS_BASE = re.compile(r"\bcount(?:ed|ing|s)?\b[^.]{0,30}?\bfrom 0\b", re.I)


def unannounced_code_indices(text: str) -> list[str]:
    prose = _prose(text)
    first = CODE_INDEX.search(prose)
    if not first:
        return []
    said = SAYS_BASE.search(re.sub(r"\s+", " ", prose))
    if said and said.start() <= len(re.sub(r"\s+", " ", prose[:first.end()])):
        return []
    return CODE_INDEX.findall(prose)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_prose_that_names_a_code_index_says_it_counts_from_0(page):
    found = unannounced_code_indices(_text(page))
    assert not found, f"{page.name} names code indices before saying it counts from 0: {found}"


@pytest.mark.parametrize("page", [p for p in PAGES if p.name[0] in "bv"], ids=lambda p: p.name)
def test_problem_pages_count_from_1(page):
    """B and V pages count tokens, queries, rows and keys from 1 throughout, as their checker's messages do."""
    assert not CODE_INDEX.findall(_prose(_text(page))), page.name


def test_the_index_rule_catches_an_unannounced_row_0():
    assert unannounced_code_indices("Query 0 may read key 0 only.")
    assert not unannounced_code_indices("Counting from 0, as NumPy does, query 0 may read key 0 only.")


# -- claims state their conditions --------------------------------------------------------------------------------
def _statement(name: str) -> str:
    return " ".join(_text(ROOT / "exercises" / name).split("{solution-start}")[0].split())


def _solution(name: str) -> str:
    return " ".join(_text(ROOT / "exercises" / name).split("{solution-start}")[1].split())


def test_e02_states_that_every_query_must_read_a_key():
    """The equation holds only when no row of the mask is empty: that row's softmax is 0/0 (finding 1)."""
    intro = _statement("e02-attention.md").split("{exercise-start}")[0]
    after_formula = intro.split("$$")[-1]
    assert "provided every query may read at least one key" in after_formula
    assert "{ref}`e10-nan`" in after_formula


def test_e08_states_when_the_two_key_formula_has_a_solution():
    """τ = Δ / log(w*/(1 − w*)) is positive and finite only for 1/2 < w* < 1 (finding 3)."""
    two_keys = _solution("e08-temperature.md").split("**Four keys.**")[0]
    assert "$1/2 < w^* < 1$" in two_keys
    # and only when the two scores differ: tied scores give 1/2 at every τ (reader s5, finding 8)
    assert "When the two scores differ ($\\Delta > 0$)" in two_keys and "Tied scores ($\\Delta = 0$)" in two_keys
    assert "(1/T_k" not in two_keys  # the four-key range is the four-key paragraph's


def test_e07_derives_its_standard_error_under_its_condition_and_does_not_overstate_the_tail():
    """The standard error holds for normal entries; the far tail is skewed, so the page gives an order (finding 2)."""
    text = _solution("e07-variance.md")
    assert "For normal entries" in text and "kurtosis" in text and "skewness" in text
    assert "of order {glue:text}`e07_p_order`" in text
    assert not re.search(r"once in \{glue:text\}`\w+:\.0f` million", text)


def test_e10_says_the_zero_row_is_a_convention():
    """A zero row is no weighted average of the values (finding 16)."""
    statement = _statement("e10-nan.md")
    assert "The zero row is a convention, not a weighted average" in statement
    assert "convex combination" in statement


def test_e10_does_not_answer_its_own_question():
    """The right choice names what the learner must find, not the mechanism the solution explains (finding 14);
    it is the checker's right answer and the solution's."""
    from attn.grading import get_item

    statement = _statement("e10-nan.md")
    choices = dict(re.findall(r"(?<= )(\d)\. (.*?)(?= \d\. | 2\. `safe_attention`)", statement.split("`cause`:")[1]))
    right = int(get_item("E10").expected()["cause"])
    assert len(choices) == 4 and right in map(int, choices)
    assert not re.search(r"0/0|NaN|exponential|−∞|-\\infty", choices[str(right)]), choices[str(right)]
    assert f"cause = {right}" in _text(ROOT / "exercises" / "e10-nan.md").split("{solution-start}")[1]
    wrong = {m.answer(None) for m in get_item("E10").part("cause").mistakes}
    assert wrong == {float(n) for n in choices if int(n) != right}, "every wrong choice has its own message"


# -- code names keep the notation's meaning -------------------------------------------------------------------------
def test_w_names_weights_only():
    """``w`` is one row of weights (the notation page): not a warning, as E10's loop had it (finding 8)."""
    for page in PAGES:
        code = "\n".join(_shown_code(_text(page)))
        assert not re.search(r"\bfor\s+w\s+in\s+\w*(?:caught|warn)", code), page.name


# -- the feedback boxes in dark mode ----------------------------------------------------------------------------------
def test_feedback_boxes_follow_the_books_dark_mode():
    """In dark mode the theme puts every HTML output on a light panel; check() and hint() boxes, a variant's numbers
    and the progress table sit on the page instead, with borders in the dark palette (finding 11). The browser
    tests measure the contrast of what this paints (tests/browser: axe and the page's own contrast check)."""
    from attn.grading import Note, get_item
    from attn.grading.feedback import NOTE_VARIABLE, _VARIABLE
    from attn.grading.learner_api import variant

    css = (ROOT / "_ext" / "offline_book_static" / "attn-palette.css").read_text(encoding="utf-8")
    dark = css.split('html[data-theme="dark"] {')[1].split("}")[0]
    for name in [*_VARIABLE.values(), NOTE_VARIABLE]:
        assert re.search(rf"{name}:\s*#[0-9a-f]{{6}};", dark), name
    rule = re.search(r'html\[data-theme="dark"\][^{]*\.output\.text_html:has\(([^)]*)\)\s*\{([^}]*)\}', css)
    assert rule, "no dark-mode rule for the feedback's output panel"
    for cls in ("attn-feedback", "attn-variant", "attn-table"):
        assert f".{cls}" in rule[1], cls
    assert "background-color: transparent" in rule[2] and "var(--pst-color-text-base)" in rule[2]
    fb = get_item("B01").judge("scores", [[0]])
    assert f"var({_VARIABLE[fb.status]}, " in fb._repr_html_()
    assert f"var({NOTE_VARIABLE}, " in Note("t", "x")._repr_html_()
    assert 'class="attn-variant"' in variant("V01", 0)._repr_html_()
