"""What the third reader of the opening pages found (reader t1), kept true.

The pages: intro.md, chapters/overview.md, strands.md, notation.md, basics.md, prop1-weighted-average.md and
prop2-three-projections.md. Each test names its finding; each rule has a test that it catches the slip.

1. softmax has one meaning: the symbol carries no temperature, which enters through the argument
   (softmax(x/τ)), and ``attn.softmax(x, tau)`` computes softmax(x/τ).
2. A numeral after q or k numbers a query or a key, never a coordinate (coordinates: a letter, or x and y).
3. The weights do not identify W_QK either: they see it only through X W_QK Xᵀ (up to a constant per row).
5. "The output lies inside the hull" carries its condition: exact arithmetic, up to rounding in floating point.
6. The quadratic work holds for exact attention (approximations compute fewer scores).
7. A glued number names the quantity it comes from: the glue of w_11 does not stand for w_13.
8. The line example's farthest point is the exact maximiser, not the best of the sampled c.
9. The notation table has rows for d_model / d'_model, h and o_i.
11. No formula is followed by punctuation MathJax can break away from it.
12. The intro's "notebook" and "live sliders" claims match the pages.
13. The first cells shown on a page hold no book machinery (the glue and bound helpers are imported where used).
14. Proposition 1's alt text says the heaviest key points *roughly* the query's way.
15. Proposition 2's setup holds the rows q_t = x_t W_Q, ...; its parts are results.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import attn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_hidden_machinery import shown_machinery  # noqa: E402
from test_notation import PAGE as NOTATION, ROWS, prose_math  # noqa: E402

MINE = [ROOT / "intro.md", *(ROOT / "chapters" / f"{p}.md" for p in (
    "overview", "strands", "notation", "basics", "prop1-weighted-average", "prop2-three-projections"))]
ALL = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
ids = [str(p.relative_to(ROOT)) for p in MINE]


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    return " ".join(text.split())


def prose(text: str) -> str:
    """The page without its code cells."""
    return re.sub(r"```\{code-cell\}.*?\n```", "\n", text, flags=re.S)


# ------------------------------------------------------------------------------------------------ 1. softmax
def softmax_definitions(text: str) -> list[str]:
    """Formulas that define the softmax symbol itself: softmax(<a bare letter>)_j = ... ."""
    return re.findall(r"\\operatorname\{softmax\}\((\w)\)_j\s*=\s*([^$]*)", text)


def test_the_softmax_symbol_has_no_temperature_in_it():
    rows = {sym: code for sym, code in ROWS}
    line = next(l for l in NOTATION.read_text(encoding="utf-8").splitlines() if l.startswith("| $\\operatorname{softmax}$"))
    defs = softmax_definitions(line)
    assert defs and all("\\tau" not in body for _, body in defs), defs
    assert "computes $\\operatorname{softmax}(x/\\tau)$" in line and "attn.softmax(x, tau, axis)" in rows[
        "$\\operatorname{softmax}$"]
    lse = next(l for l in NOTATION.read_text(encoding="utf-8").splitlines() if l.startswith("| $\\operatorname{lse}$"))
    assert "denominator of $\\operatorname{softmax}(x/\\tau)$ is $\\operatorname{lse}(x/\\tau)" in lse
    basics = read("chapters/basics.md")
    definition = basics[basics.index(":label: def-softmax"):]
    definition = definition[:definition.index("```")]
    defs = softmax_definitions(definition)
    assert defs and all("\\tau" not in body for _, body in defs)


@pytest.mark.parametrize("page", ALL, ids=[str(p.relative_to(ROOT)) for p in ALL])
def test_no_page_defines_the_softmax_symbol_with_tau_inside(page):
    bad = [d for d in softmax_definitions(page.read_text(encoding="utf-8")) if "\\tau" in d[1]]
    assert not bad, f"{page.name}: softmax(x)_j defined with τ inside: {bad}"


def test_the_softmax_rule_catches_the_old_row():
    old = r"normalised exponential $\operatorname{softmax}(x)_j = e^{x_j/\tau}/\sum_l e^{x_l/\tau}$"
    assert [d for d in softmax_definitions(old) if "\\tau" in d[1]]


@pytest.mark.parametrize("tau", [0.1, 0.5, 1.0, 3.0])
def test_attn_softmax_with_tau_is_the_softmax_of_x_over_tau(tau):
    x = np.random.default_rng(0).normal(size=7)
    np.testing.assert_allclose(attn.softmax(x, tau), attn.softmax(x / tau), rtol=1e-14)
    e = np.exp(x / tau - (x / tau).max())
    np.testing.assert_allclose(attn.softmax(x, tau), e / e.sum(), rtol=1e-14)


# -------------------------------------------------------------------------------- 2. q_1 is a query
COORDINATE_WITH_NUMERAL = re.compile(r"[qk]_\{?\d\}?\^2|[qk]_\{?(\d)\}?\s*k_\{?\1\}?(?!\w)|\bq_\d\s*k_\d\b")


@pytest.mark.parametrize("page", ALL, ids=[str(p.relative_to(ROOT)) for p in ALL])
def test_no_formula_writes_a_coordinate_with_a_numeral(page):
    bad = [s for s in prose_math(page.read_text(encoding="utf-8")) if COORDINATE_WITH_NUMERAL.search(s)]
    assert not bad, f"{page.name}: a coordinate written like a query: {bad}"


def test_the_coordinate_rule():
    assert COORDINATE_WITH_NUMERAL.search(r"$\operatorname{Cov}(q_1^2, q_2^2)$")
    assert COORDINATE_WITH_NUMERAL.search(r"$q_1 k_1 + q_2 k_2$")
    assert not COORDINATE_WITH_NUMERAL.search(r"$q_1 \cdot k_1 = 4$")
    assert not COORDINATE_WITH_NUMERAL.search(r"$\sum_a q_a k_a$")
    row = next(l for l in NOTATION.read_text(encoding="utf-8").splitlines() if l.startswith("| $q_a$"))
    assert "never with a numeral" in row and "two queries" in row


# ------------------------------------------------------------------- 3. W_QK is not identified either
def test_the_weights_do_not_fix_W_QK_when_the_tokens_do_not_span():
    """The page's example: T = 5 tokens in d_model = 6 dimensions; W_Q + u rᵀ with X u = 0."""
    rng = np.random.default_rng(2)
    T, d_model, d_k, d_v = 5, 6, 4, 3
    X = rng.normal(size=(T, d_model))
    W_Q, W_K, W_V = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    z = np.linalg.svd(X)[2][-1]
    W_Q2 = W_Q + np.outer(z, np.random.default_rng(7).normal(size=d_k))
    W = attn.self_attention(X, W_Q, W_K, W_V).weights
    assert np.abs(attn.self_attention(X, W_Q2, W_K, W_V).weights - W).max() < 1e-12
    assert np.abs(W_Q2 @ W_K.T - W_Q @ W_K.T).max() > 0.1
    # and a constant added to a row of X W_QK Xᵀ leaves the weights: the softmax ignores it
    S = X @ W_Q @ W_K.T @ X.T / np.sqrt(d_k)
    np.testing.assert_allclose(attn.softmax(S + rng.normal(size=(T, 1))), W, atol=1e-14)


def test_proposition_2_no_longer_says_the_product_is_identifiable():
    text = flat(read("chapters/prop2-three-projections.md"))
    assert "only their product is." not in text and "learns $W_{QK}$ and nothing more" not in text
    assert "even $W_{QK}$ is seen only through $XW_{QK}X^\\top,$ up to a constant added to each row" in text


# ------------------------------------------------------------------------- 5. the hull's condition
HULL_CLAIM = re.compile(r"[^.]*\b(?:inside (?:the|its|that|their) (?:convex )?hull|never leaves the shaded region|"
                        r"stays inside the hull|never out of it)[^.]*\.")


def unconditional_hull_claims(text: str) -> list[str]:
    found = []
    for sentence in HULL_CLAIM.findall(flat(prose(text))):
        if not re.search(r"exact arithmetic|rounding|round", sentence):
            found.append(sentence.strip()[:120])
    return found


OVERVIEWS = [ROOT / "chapters" / f"{p}.md" for p in ("prop1-weighted-average", "prop2-three-projections")]


@pytest.mark.parametrize("page", OVERVIEWS, ids=[p.name for p in OVERVIEWS])
def test_the_pages_goals_and_the_explorer_state_the_hulls_condition(page):
    text = page.read_text(encoding="utf-8")
    overview = text[text.index("## Overview"):text.index("```{code-cell}")]
    assert not unconditional_hull_claims(overview), unconditional_hull_claims(overview)
    if "never leaves the shaded region" in text:
        assert not [s for s in unconditional_hull_claims(text) if "shaded region" in s]
    assert re.search(r"hull[^.]*\((?:[^)]*)(?:exact arithmetic|rounding)", flat(overview))


def test_the_hull_rule_catches_the_old_sentence():
    old = ("## Overview\n\nthe output always lies inside the convex hull of the values (the smallest convex set "
           "containing them), and, when no mask is applied, shuffling changes nothing.\n")
    assert unconditional_hull_claims(old)


# ---------------------------------------------------------------------------------- 6. exact attention
def test_the_quadratic_work_is_said_of_exact_attention():
    text = flat(read("chapters/overview.md"))
    item = text[text.index("**Direct reading costs a quadratic matrix.**"):text.index("## How this book is built")]
    assert "For exact attention the work scales with that count" in item
    assert "approximations compute fewer scores" in item


# --------------------------------------------------------------------- 7. a glue names its own number
ENTRY_GLUE = re.compile(r"\{glue:text\}`(\w*?_w\d\d)(?::[^`]*)?`")


def repeated_entry_glues(text: str) -> list[str]:
    """A glued matrix entry (name ending in _wIJ) used twice in one sentence: one of the two names another entry."""
    found = []
    for sentence in re.split(r"(?<=[.;])\s", flat(prose(text))):
        names = ENTRY_GLUE.findall(sentence)
        found += sorted({n for n in names if names.count(n) > 1})
    return found


@pytest.mark.parametrize("page", MINE, ids=ids)
def test_a_glued_entry_is_not_reused_for_another_entry(page):
    assert not repeated_entry_glues(page.read_text(encoding="utf-8"))


def test_the_entry_rule_catches_the_old_sentence():
    old = ("Token 1 puts {glue:text}`self_w11:.3f` on itself, {glue:text}`self_w12:.3f` on token 2 and "
           "{glue:text}`self_w11:.3f` on token 3.")
    assert repeated_entry_glues(old) == ["self_w11"]


# ------------------------------------------------------------------- 8. the line example's maximum
def test_the_line_examples_farthest_point_is_ln_1_plus_sqrt3():
    def distance(c):
        o = attn.attention(np.array([[c]]), np.array([[2.0], [1.0], [0.0]]),
                           np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])).output[0]
        return float(np.linalg.norm(o))
    c_top = np.log(1 + np.sqrt(3))
    grid = np.linspace(0, 10, 20001)
    d = np.array([distance(c) for c in grid])
    assert abs(grid[d.argmax()] - c_top) < 1e-3
    assert np.isclose(distance(c_top), 1 / (3 + 2 * np.sqrt(3)), rtol=1e-12) and d.max() <= distance(c_top) + 1e-15
    text = flat(read("chapters/prop1-weighted-average.md"))
    assert "as far as {glue:text}`line_far" not in text
    assert "$c = \\ln(1 + \\sqrt3) \\approx$ {glue:text}`line_c_top" in text
    assert "of the values of $c$ in the cell, the farthest" in text


# ----------------------------------------------------------------------------- 9. the missing rows
def test_the_notation_table_has_rows_for_d_model_h_and_o():
    symbols = [sym for sym, _ in ROWS]
    assert "$d_{\\text{model}}$, $d'_{\\text{model}}$" in symbols and "$h$" in symbols and "$o_i$" in symbols
    codes = dict(ROWS)
    assert "`X.shape[1]`" in codes["$d_{\\text{model}}$, $d'_{\\text{model}}$"] and "`O[i]`" in codes["$o_i$"]


# ---------------------------------------------------------- 11. punctuation stays with its formula
INLINE = re.compile(r"(?<![\$\\])\$(?!\$)((?:[^\$\n]|\n(?!\s*\n))+?)(?<!\\)\$(?!\$)")


def mask_code_blocks(text: str) -> str:
    """Fenced blocks blanked out, line by line, except prf directives and glued figures (their bodies are prose)."""
    out, inside = [], None
    for line in text.split("\n"):
        if inside is None and line.startswith("```"):
            inside = "prose" if line.startswith(("```{prf:", "```{glue:figure}")) else "code"
            out.append("\x00" * len(line))
        elif inside is not None and line.strip() == "```":
            inside = None
            out.append("\x00" * len(line))
        else:
            out.append("\x00" * len(line) if inside == "code" else line)
    return "\n".join(out)


def detachable_punctuation(text: str) -> list[str]:
    """Inline formulas followed by , . ; : or ) (or opened by "(" just before them) in the prose: MathJax may break
    the line between the two. The first column of a table, code and directive options are not prose."""
    blank = lambda m: re.sub(r"[^\n]", "\x00", m.group(0))  # noqa: E731
    t = re.sub(r"\$\$.*?\$\$", blank, mask_code_blocks(text), flags=re.S)
    t = re.sub(r"`[^`\n]*`", blank, t)
    t = re.sub(r"^:[a-z-]+:.*$", blank, t, flags=re.M)
    t = re.sub(r"^\|[^|\n]*\|", blank, t, flags=re.M)
    found = []
    for m in INLINE.finditer(t):
        if t[m.end():m.end() + 1] in tuple(",.;:)") or (m.start() and t[m.start() - 1] == "("):
            found.append(text[max(0, m.start() - 20):m.end() + 2].replace("\n", " "))
    return found


# the notation table's rows other than the ones reader t1 named are left as they were (others add rows there)
TABLE_ROWS_LEFT = re.compile(r"^\| \$(?!\\operatorname\{softmax\}|\\operatorname\{lse\}|q_a|d_\{|o_i|h\$).*$", re.M)


@pytest.mark.parametrize("page", MINE, ids=ids)
def test_no_formula_is_followed_by_detachable_punctuation(page):
    text = page.read_text(encoding="utf-8")
    if page == NOTATION:
        text = TABLE_ROWS_LEFT.sub("", text)
    found = detachable_punctuation(text)
    assert not found, f"{page.name}: {found[:8]}"


def test_the_punctuation_rule():
    assert detachable_punctuation(r"keys $k_3 = (1, 1)$, three values")
    assert detachable_punctuation(r"is $T_q \times T_k$.") and detachable_punctuation(r"a ($T_q\times T_k$) matrix")
    assert not detachable_punctuation(r"keys $k_3 = (1, 1),$ three values $v$ and a $(T_q\times T_k)$ matrix")
    assert not detachable_punctuation("```{code-cell} ipython3\nx = '$a$,'\n```\n")
    # prose between two blocks is read (a closing fence is not an opening one)
    blocks = "```{prf:proof}\nIt is $a.$\n```\n\nThen $b$, and\n\n```{code-cell} ipython3\nx = 1\n```\n"
    found = detachable_punctuation(blocks)
    assert len(found) == 1 and found[0].endswith("Then $b$, ")


# --------------------------------------------------------------------------- 12. the intro's claims
def test_the_intro_says_which_pages_are_notebooks_and_which_have_sliders():
    intro = flat(read("intro.md"))
    assert "every page with code is a notebook" in intro
    assert "the explorers of the propositions' pages and of the theory page keep their live sliders" in intro
    toc = re.findall(r"file: (\S+)", read("_toc.yml"))
    for name in toc:
        text = read(f"{name}.md")
        if "```{code-cell}" in text:
            assert text.startswith("---\njupytext:"), f"{name} has code but is not a notebook"
    with_explorer = {n for n in toc if "show_explorer(" in read(f"{n}.md")}
    props = {n for n in toc if n.startswith("chapters/prop")}
    assert props <= with_explorer <= props | {"chapters/theory"}
    assert "```{code-cell}" not in read("intro.md")


# ------------------------------------------------------------------ 13. no machinery in shown cells
MACHINERY_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s+[^\n]*\b(?:glue_values|upper_bound|agreement|"
                              r"book_index|glue|Markdown)\b", re.M)


@pytest.mark.parametrize("page", MINE, ids=ids)
def test_shown_cells_import_no_book_machinery(page):
    shown = shown_machinery(page.read_text(encoding="utf-8"), MACHINERY_IMPORT)
    assert not shown, f"{page.name} shows machinery imports: {shown}"


def test_the_import_rule_catches_the_old_first_cell():
    old = ("```{code-cell} ipython3\nimport attn\nfrom attn.page import agreement, glue_values, show_explorer, "
           "upper_bound\n```\n")
    assert shown_machinery(old, MACHINERY_IMPORT)
    assert not shown_machinery(old.replace("ipython3\n", "ipython3\n:tags: [remove-cell]\n\n"), MACHINERY_IMPORT)


# ------------------------------------------------------------------------------- 14. the alt text
def test_prop1s_alt_text_says_roughly():
    text = read("chapters/prop1-weighted-average.md")
    alt = next(l for l in text.splitlines() if l.startswith(":alt:") and "query arrow" in l)
    assert "points roughly the same way" in alt
    # what "roughly" stands for: the heaviest key is not aligned with the query, but close
    q, K, _ = attn.examples.figure3()
    w = attn.attention(q, K, _).weights[0]
    k = K[w.argmax()]
    cos = float(k @ q[0] / np.linalg.norm(k) / np.linalg.norm(q[0]))
    assert 0.9 < cos < 0.99


# ------------------------------------------------------------------- 15. Proposition 2's parts
def test_proposition_2s_parts_are_results_and_the_rows_are_its_setup():
    text = read("chapters/prop2-three-projections.md")
    statement = text[text.index(":label: prop-three-projections"):]
    statement = statement[:statement.index("```")]
    setup, parts = statement.split("Then", 1)
    assert "q_t = x_t W_Q" in setup and "by the definition of a matrix product" not in parts
    numbers = re.findall(r"^(\d)\. ", parts, flags=re.M)
    assert numbers == ["1", "2", "3"]
    # each part the page cites exists, and the ones it calls the content are 1 and 2
    cited = {int(n) for n in re.findall(r"\b[Pp]arts? (\d)", prose(text))}
    assert cited <= {1, 2, 3}
    assert "the content of the proposition is in parts 1 and 2" in flat(text)
