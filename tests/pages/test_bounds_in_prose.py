"""A bound the prose states is never a number rounded to nearest.

"They agree to within {glue:text}`gap:.0e`" shows 2e-16 for a gap of 2.2e-16, and the sentence is false of the
number it bounds. A bound in the prose ("within", "up to", "at most", "below", "never exceeds", "agree ... to",
and the lower bounds "at least", "more than", "above") is glued as a string rounded the safe way, from
``attn.page.upper_bound`` or ``attn.page.agreement`` (``"exactly"``, ``"to within 3e-16"``); a glued role with a
number format there is a raw value the format rounds to nearest. Every page of the book, not only the practice
pages (``test_page_claims.py`` holds them to the same rule among others).

Proposition 3, 4 and 5, the score-matrix page and the apparatus were fixed by their reader's findings (s2); the
pages of other owners that still glue a rounded bound are listed in ``OTHERS`` and marked ``xfail`` (not strict,
so a fix there does not fail this file): drop a page from the list once it is fixed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])

# Pages of other owners that glued a rounded bound when this test was written (the reader's round s2).
OTHERS: set[str] = set()

_GLUE = r"\{glue:text\}`[\w\-]+:[^`]*`"  # a glued number with a format: rounded to nearest
_MORE = rf"(?:\s*(?:,|and|or)\s*(?:\$[^$]*\$\s*)?{_GLUE})*"  # "within {a} and {b}": both are bounds
_WORDS = (r"within|below|under|at most|up to|less than|no more than|never exceeds|never more than|not exceed"
          r"|at least|more than|above|exceeds")
BOUND = re.compile(  # ("the weights add up to {glue}" is a sum, not a bound)
    rf"(?<!\badd )(?<!\badds )(?<!\bsum )(?<!\bsums )\b(?:{_WORDS})\s+(?:\$[^$]*\$\s*)?{_GLUE}{_MORE}"  # "within {glue}"
    rf"|\\(?:le|leq|lt|ge|geq)\s*\$\s*{_GLUE}{_MORE}"                       # "$\le$ {glue}"
    rf"|\b(?:agree|agrees|agreed|match|matches|matched)\b[^.{{}}`]{{0,80}}?\bto\s+{_GLUE}{_MORE}",  # "agree ... to {glue}"
    re.S | re.I)
GLUED = re.compile(r"\{glue:text\}`([\w\-]+):([^`]*)`")
CODE_CELL = re.compile(r"```\{code-cell\}.*?\n```", re.S)


def _exact_constant(name: str, fmt: str) -> bool:
    """Whether ``name`` is one of the checker's declared numbers an exercise statement glues (``const_``,
    ``tol_``, ``data_``: attn.grading.learner.statement_value) and the format shows it exactly."""
    from attn.grading.learner import statement_value

    if not name.startswith(("const_", "tol_", "data_")):
        return False
    try:
        value = statement_value(name)
    except (ValueError, AttributeError, KeyError):
        return False
    if not isinstance(value, (int, float)):
        return False
    shown = format(value, fmt)
    return (float(shown[:-1]) / 100 if shown.endswith("%") else float(shown)) == value


def rounded_bounds(text: str) -> list[str]:
    """The bounds in ``text``'s prose (code cells left out) that glue a raw number with a format."""
    prose = CODE_CELL.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = []
    for m in BOUND.finditer(prose):
        if all(_exact_constant(name, fmt) for name, fmt in GLUED.findall(m.group(0))):
            continue  # the checker's own tolerance, shown exactly: a definition, not a rounded measurement
        line = prose[:m.start()].count("\n") + 1
        found.append(f"line {line}: {' '.join(m.group(0).split())}")
    return found


def _param(page: Path):
    rel = str(page.relative_to(ROOT))
    marks = [pytest.mark.xfail(reason="another owner's page, listed when this test was written", strict=False)
             ] if rel in OTHERS else []
    return pytest.param(page, id=rel, marks=marks)


@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_a_bound_in_the_prose_is_rounded_the_safe_way(page):
    found = rounded_bounds(page.read_text(encoding="utf-8"))
    assert not found, (f"{page.relative_to(ROOT)}: glue these bounds from attn.page.upper_bound or "
                       "attn.page.agreement (rounded up), not a number format:\n" + "\n".join(found))


def test_the_listed_pages_exist():
    assert all((ROOT / rel).is_file() for rel in OTHERS)


@pytest.mark.parametrize("bad", [
    "They agree to within {glue:text}`gap:.0e`.",
    "the outputs change by at most {glue:text}`g:.0e`, because",
    "the matrix agrees with `attn.scores` within\n{glue:text}`e1:.0e` and {glue:text}`e2:.0e`.",
    "The formula agrees with finite differences to {glue:text}`fd:.0e`, and",
    "the two agree to {glue:text}`p5_gap:.0e`",
    "The gradient matches the softmax to {glue:text}`err:.0e`.",
    "the ratio never exceeds {glue:text}`r:.3f`, at most 1",
    "they differ by up to {glue:text}`asym:.2f`:",
    "each is $\\le$ {glue:text}`b:.1e`",
    "a margin of at least {glue:text}`m:.1e`",
])
def test_the_rule_finds_a_rounded_bound(bad):
    assert rounded_bounds(bad)


def test_the_rule_finds_every_bound_of_a_list():
    text = "agrees with `attn.scores` within {glue:text}`e1:.0e` and {glue:text}`e2:.0e`."
    (found,) = rounded_bounds(text)
    assert "e1:.0e" in found and "e2:.0e" in found


@pytest.mark.parametrize("good", [
    "They agree {glue:text}`gap`.",                                # agreement(): "exactly" or "to within 3e-16"
    "the outputs differ by up to {glue:text}`asym`:",              # upper_bound(asym, ".2f")
    "the largest weight climbs to {glue:text}`w:.2f` at $d_k = 1$",  # a value, not a bound
    "```{code-cell} ipython3\nprint(f'within {x:.0e}')\n```\n",    # code, not prose
    "the weights add up to {glue:text}`s:.1f`.",                   # a sum, not a bound
])
def test_the_rule_passes_safe_bounds_and_plain_values(good):
    assert not rounded_bounds(good)


def test_an_exact_constant_is_no_rounded_bound():
    assert rounded_bounds("within {glue:text}`const_E08_WTOL:g` of the target") == []  # 0.005 shown as 0.005
    assert rounded_bounds("within {glue:text}`const_E07_RTOL:.0f` of it") != []  # 0.08 shown as 0
    assert rounded_bounds("within {glue:text}`const_NO_SUCH:g` of it") != []
    assert rounded_bounds("Within {glue:text}`tol_B05_simulated_rtol:.0%` of the exact value") == []
    assert rounded_bounds("within {glue:text}`e08_gap:g` of the target") != []  # a measurement


# -- a bound the prose glues is printed the same way by the shown cell (reader t2, finding 10) ----------------------
# The prose rounds a bound up (upper_bound, agreement); a shown cell that prints the same value with another format
# ("differ by up to 0.203" above "differ by up to 0.21", "1.2e-16" above "to within 2e-16", "0.936" above "never
# exceeds 0.937") makes a careful reader suspect a mistake. A shown cell prints the string the prose glues:
# upper_bound / agreement of the same expression with the same format. Pages of other owners that still print a
# glued bound raw are listed in PRINT_OTHERS and marked xfail (not strict): drop a page once it is fixed.
PRINT_OTHERS = {"chapters/practice-build.md", "chapters/practice-papers.md", "chapters/prop1-weighted-average.md",
                "chapters/prop2-three-projections.md", "chapters/theory.md"}
_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)\n```", re.S)
_BOUND_CALL = re.compile(r"\b(upper_bound|agreement)\(\s*([^,()]+(?:\([^()]*\))?[^,()]*?)\s*"
                         r"(?:,\s*(?:fmt\s*=\s*)?['\"]([^'\"]+)['\"])?\s*\)")
_GLUE_CALL = re.compile(r"glue_values\(.*?\n\)", re.S)
_FIELD = re.compile(r"\{([^{}:!'\"]+?)(?:![rsa])?:([^{}]*)\}")   # an f-string field {expr:fmt}


def printed_otherwise(text: str) -> list[str]:
    """The bounds a page glues (upper_bound/agreement of an expression) that one of its shown cells prints with
    another format, or raw."""
    shown, glued = [], {}
    for m in _CELL.finditer(text):
        body = m.group(1)
        if not re.search(r"tags:\s*\[[^\]]*remove-(?:cell|output)", body[:300]):
            shown.append(body)
        for call in _GLUE_CALL.finditer(body + "\n)"):
            for b in _BOUND_CALL.finditer(call.group(0)):
                glued[re.sub(r"\s+", "", b.group(2))] = (b.group(1), b.group(3) or ".0e")
    found = []
    for body in shown:
        code = _GLUE_CALL.sub("", body)
        for b in _BOUND_CALL.finditer(code):
            expr = re.sub(r"\s+", "", b.group(2))
            if expr in glued and (b.group(3) or ".0e") != glued[expr][1]:
                found.append(f"prints {b.group(1)}({expr}, {b.group(3)!r}), the prose {glued[expr]}")
        for f in _FIELD.finditer(code):
            expr = re.sub(r"\s+", "", f.group(1))
            if expr in glued:
                found.append(f"prints {{{expr}:{f.group(2)}}} raw, the prose {glued[expr][0]}({expr}, {glued[expr][1]!r})")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_glued_bound_is_printed_as_the_prose_writes_it(page, request):
    rel = str(page.relative_to(ROOT))
    if rel in PRINT_OTHERS:
        request.applymarker(pytest.mark.xfail(reason="another owner's page, not yet fixed", strict=False))
    found = printed_otherwise(page.read_text(encoding="utf-8"))
    assert not found, f"{rel}:\n" + "\n".join(found)


def test_the_listed_print_pages_exist():
    assert all((ROOT / p).is_file() for p in PRINT_OTHERS)


@pytest.mark.parametrize("cell", [
    'print("differ by up to " + upper_bound(the_gap, ".3f"))\n',          # score-matrix, before
    'print(f"largest ratio: {grad_ratio:.3f}")\n',                          # prop3-scaling, before
    'print(f"renormalisation formula matches {agreement(gap, \'.1e\')}")\n',
])
def test_the_print_rule_finds_a_bound_printed_otherwise(cell):
    page = ("```{code-cell} ipython3\n" + cell + "```\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
            "glue_values(\n    a=upper_bound(the_gap, \".2f\"),\n    b=upper_bound(grad_ratio, \".3f\"),\n"
            "    c=agreement(gap),\n)\n```\n")
    assert printed_otherwise(page), cell


def test_the_print_rule_passes_the_same_string():
    page = ("```{code-cell} ipython3\nprint(\"up to \" + upper_bound(the_gap, \".2f\"), agreement(gap))\n"
            "print(f\"{other:.3f}\")\n```\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
            "glue_values(\n    a=upper_bound(the_gap, \".2f\"),\n    c=agreement(gap),\n)\n```\n")
    assert not printed_otherwise(page)
