"""What an expert read of the pages found, kept from coming back: each test is one kind of fault.

- a proof that opens with a numbered item renders as run-on text (sphinx-proof puts "Proof." in front of the
  item, so the list is never parsed: "Proof. 1. … 2. …" in one paragraph);
- a number an exercise statement gives by hand about its checker (a tolerance, a target) must be the checker's;
- an exercise statement does not count the checker's cases by hand (the count drifts when a case is added; the
  statement glues it, and a learner's copy computes the glued values it may show, attn.grading.learner);
- a page that quotes how far two computations differ says "exactly" for 0, not "0.0e+00".
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from attn.grading import get_item
from attn.grading.exercises import E08_TARGET, E08_WTOL

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md")])
DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{prf:(proof|proposition|lemma|theorem|definition)\}")


def proofs_opening_with_an_item(text: str) -> list[str]:
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = DIRECTIVE.match(line)
        if not m or m.group(2) != "proof":
            continue
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or re.match(r"^:\w+:", lines[j])):
            j += 1
        if j < len(lines) and re.match(r"^\s*\d+[.)]\s", lines[j]):
            found.append(f"line {i + 1}: {lines[j][:60]!r}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_no_proof_opens_with_a_numbered_item(page):
    found = proofs_opening_with_an_item(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}: a proof opening with an item renders as run-on text; " \
                      f"put a sentence before the list:\n" + "\n".join(found)


def test_the_proof_rule_catches_an_opening_item():
    assert proofs_opening_with_an_item("```{prf:proof}\n1. First.\n2. Second.\n```\n")
    assert not proofs_opening_with_an_item("```{prf:proof}\nWe take the parts in order.\n\n1. First.\n```\n")


# -- numbers an exercise statement gives about its checker ---------------------------------------------------
def _statement(page: str) -> str:
    """The page's text before its solution: what a learner's copy keeps."""
    text = (ROOT / "exercises" / page).read_text(encoding="utf-8")
    return text.split("{solution-start}")[0]


def _statement_as_read(page: str) -> str:
    """The statement as a learner reads it: the learner copy, where the glued values are filled in (the book
    glues the same values from the same items), with runs of white space made single spaces."""
    text = (ROOT / "exercises" / "learner" / page).read_text(encoding="utf-8")
    return " ".join(text.split())


def _number(pattern: str, text: str) -> float:
    m = re.search(pattern, text, re.S)
    assert m, f"the statement no longer says {pattern!r}"
    return float(m.group(1))


def test_e07_states_the_checkers_tolerances():
    text = _statement_as_read("e07-variance.md")
    variances, slope = get_item("E07").parts
    assert _number(r"tolerance of (\d+(?:\.\d+)?)\s*%", text) / 100 == pytest.approx(variances.rtol)
    assert _number(r"%\s*on each variance,\s*(\d+(?:\.\d+)?)\s+on\s+the slope", text) == pytest.approx(slope.atol)


def test_e08_states_the_checkers_target_and_tolerance():
    text = _statement_as_read("e08-temperature.md")
    assert _number(r"within (\d+(?:\.\d+)?) of", text) == pytest.approx(E08_WTOL)
    assert _number(r"within \d+(?:\.\d+)? of (\d+(?:\.\d+)?) counts as right", text) == pytest.approx(E08_TARGET)


def test_b05_states_the_checkers_tolerance():
    text = _statement_as_read("b05-variance.md")
    simulated = get_item("B05").part("simulated")
    assert _number(r"Within (\d+(?:\.\d+)?)\s*%", text) / 100 == pytest.approx(simulated.rtol)


COUNT_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
CASE_COUNT = re.compile(rf"\b(?:\d+|{COUNT_WORDS})\s+(?:inputs|cases|test cases)\b", re.I)


@pytest.mark.parametrize("page", sorted((ROOT / "exercises").glob("e*.md")), ids=lambda p: p.name)
def test_exercise_statements_do_not_count_the_checkers_cases(page):
    found = CASE_COUNT.findall(_statement(page.name))
    assert not found, f"{page.name} counts the checker's cases by hand: {found}"


# -- a zero difference reads as "exactly" ---------------------------------------------------------------------
def test_built_pages_quote_no_zero_in_scientific_notation():
    """Checked on the built HTML when there is one (ATTN_BOOK_HTML or _build/html); otherwise skipped."""
    import os

    html = Path(os.environ.get("ATTN_BOOK_HTML", ROOT / "_build" / "html"))
    pages = sorted([*html.glob("chapters/*.html"), *html.glob("exercises/*.html")])
    if not pages:
        pytest.skip("no built book to read")
    zero = re.compile(r"<span class=\"pasted-text\">\s*0(?:\.0+)?e[+-]?0+\s*</span>")   # a glued number, zero in e-notation
    found = []
    for page in pages:
        text = re.sub(r"<pre.*?</pre>", "", page.read_text(encoding="utf-8"), flags=re.S)  # not code output
        found += [f"{page.name}: {m.group(0)!r}" for m in zero.finditer(text)]
    assert not found, "a zero difference quoted as 0e+00; glue it with attn.page.agreement:\n" + "\n".join(found)
