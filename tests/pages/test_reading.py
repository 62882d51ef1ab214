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


# -- captions and alt texts type no result: counts and sizes come from the code that draws ----------------------
# A caption or alt text is not executed, so a count typed into it ("eight keys", "log 8", "from 1 to 1024") drifts
# from the figure when the code changes. Say it without the number ("the keys", "log T_k"), glue it in a
# glue:figure caption, or build the text from the drawing code (an explorer's ``alt``).
TYPED_COUNT = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?:[a-z-]+\s+)?"
    r"(?:keys?|values?|weights?|tokens?|quer(?:y|ies)|bars?|points?|rows?|columns?|logits?|scores?|heads?)\b"
    r"|\bquadrilateral|\blog\s*\d|(?<!float)(?<!int)\d{2,}", re.I)


def figure_texts(text: str) -> list[str]:
    """The alt texts and captions of a page's figures (code-cell metadata and glue:figure), glue roles and
    math removed (a glued number is computed; math is checked by the notation rules)."""
    found = [m.group(1) for m in re.finditer(r"^\s*:?alt:\s*(.*)$", text, re.M)]
    found += [m.group(1) for m in re.finditer(r"caption: \|\n((?:\s{6,}.*\n)+)", text)]
    found += [m.group(1) for m in re.finditer(r"```\{glue:figure\}[^\n]*\n(?::[^\n]*\n)*\n(.*?)```", text, re.S)]
    return [re.sub(r"\$[^$]*\$", "", re.sub(r"\{glue:[a-z]+\}`[^`]*`", "", s)) for s in found]


def typed_counts(text: str) -> list[str]:
    return [m.group(0) for s in figure_texts(text) for m in TYPED_COUNT.finditer(s)]


@pytest.mark.parametrize("page", [*PAGES, ROOT / "intro.md"], ids=lambda p: p.name)
def test_captions_and_alt_texts_type_no_count(page):
    found = typed_counts(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: a caption or alt text types a count or size by hand: {found}"


def test_explorer_alt_texts_type_no_count():
    from attn.widgets.base import Explorer
    import attn.widgets  # noqa: F401  (imports every explorer module)
    import importlib, pkgutil

    for mod in pkgutil.iter_modules(attn.widgets.__path__):
        importlib.import_module(f"attn.widgets.{mod.name}")
    explorers = {c for c in _subclasses(Explorer) if "alt" in vars(c)}
    assert len(explorers) >= 5
    found = {c.__name__: TYPED_COUNT.findall(_typed_text(vars(c)["alt"])) for c in explorers}
    assert not any(found.values()), f"an explorer's alt text types a count by hand: {found}"


def _typed_text(alt) -> str:
    """An alt text as typed: the string itself, or the literal parts of the strings a property builds."""
    if isinstance(alt, str):
        return alt
    import ast, inspect, textwrap
    tree = ast.parse(textwrap.dedent(inspect.getsource(alt.fget)))
    return " ".join(node.value for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str))


def _subclasses(cls):
    return {s for c in cls.__subclasses__() for s in (c, *_subclasses(c))}


@pytest.mark.parametrize("bad", [
    "  alt: \"Left: eight blue bars of softmax weights\"\n",
    "  alt: \"entropy rising to log 8 at large tau\"\n",
    "  alt: \"Log-log plot against the key width, from 1 to 1024.\"\n",
    "    caption: |\n      Top right: the eight weights of a typical query.\n",
    ":alt: Right, the value points joined into a grey quadrilateral.\n",
    "```{glue:figure} fig\n:name: f\n\nThe four values and their hull.\n```\n",
])
def test_the_count_rule_catches_typed_counts(bad):
    assert typed_counts(bad), bad


def test_the_count_rule_passes_glued_and_symbolic_counts():
    good = ("    caption: |\n      The weights of {glue:text}`p3_T8` keys; entropy up to $\\log T_k$; a float32 matrix.\n"
            "  alt: \"Three panels. Left: blue bars, one per key.\"\n")
    assert not typed_counts(good)
