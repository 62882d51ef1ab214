"""What the second expert read of the exercise pages (reader s5) found, each kind kept from coming back.

Each test is one kind of fault, checked on every page it can occur on (the finding's number in brackets):

- a bound in the prose ("within", "up to", "at most") glued from a number rounded to nearest, which can fall below
  the value it bounds (the rule of the book; E03's "sum to 0 up to", E04's differences), on every page;
- a display formula whose top line holds a transpose, set without a strut: the theme's box clips the ⊤'s crossbar
  at 1× (E02's central equation showed "QK|") [2];
- a permutation of the key–value pairs alone written P, the letter of the tokens' permutation (E04) [3];
- H (the entropy) for the stacked heads, X (the raw tokens) for the projected matrix that is split, and the
  head width d_model/h stated as if it were the definition rather than a choice (E09) [4, 5];
- γ (the scale of the scores) for a skewness (E07) and "the straight line through" four noisy points [6, 7];
- a fixed problem whose worked solution shows less of the hand computation than its variant's (B02–B04) [10-12];
- the coordinate index a of q_a k_a used where the notation page reserves a for heads [14];
- arrays printed as answers with no label saying which is which (V01–V04) [16];
- bookkeeping for the book's build (catching warnings) in a cell the reader is shown (E10) [17].
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(p for p in (ROOT / "exercises").glob("*.md") if p.name != "index.md")
IDS = [p.name for p in EXERCISES]
ALL_PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]", re.M)
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _cells(text: str):
    """(tags, source without the tag line) of every code cell."""
    for m in CELL.finditer(text):
        body = m["body"]
        tags = {t.strip() for g in TAGS.finditer(body) for t in g["tags"].split(",")}
        yield tags, TAGS.sub("", body)


def _prose(text: str) -> str:
    return CELL.sub("\n", text)


def _solution(name: str) -> str:
    return _text(ROOT / "exercises" / name).split("{solution-start}")[1]


def _statement(name: str) -> str:
    return _text(ROOT / "exercises" / name).split("{solution-start}")[0]


# -- a bound is glued rounded up: tests/pages/test_bounds_in_prose.py, on every page -------------------------------


# -- a transpose at the top of a display formula has room above it [2] -----------------------------------------
DISPLAY = re.compile(r"\$\$(?P<body>.*?)\$\$", re.S)
STRUT = re.compile(r"\\rule\{0pt\}|\\vphantom|\\strut|\\mathstrut")


def unstrutted_top_transposes(text: str) -> list[str]:
    found = []
    for m in DISPLAY.finditer(_prose(text)):
        body = re.sub(r"\\begin\{\w+\}", "", m["body"]).strip()
        top = body.split("\\\\")[0]
        if re.search(r"\\frac\{[^{}]*\^\\top", top) and not STRUT.search(top):
            found.append(" ".join(top.split())[:100])
    return found


@pytest.mark.parametrize("page", EXERCISES, ids=IDS)
def test_a_transpose_in_a_displayed_numerator_has_a_strut(page):
    """At 1× the theme's display box (overflow: auto, no padding on top) clips a numerator's ⊤ to "|"."""
    found = unstrutted_top_transposes(_text(page))
    assert not found, f"{page.name}: give the numerator a strut (\\rule{{0pt}}{{1.1em}}):\n" + "\n".join(found)


def test_the_strut_rule():
    bad = "$$\n\\operatorname{softmax}\\!\\Big(\\frac{Q K^\\top}{\\sqrt{d_k}} + B\\Big) V\n$$\n"
    assert unstrutted_top_transposes(bad)
    assert not unstrutted_top_transposes(bad.replace("{Q K", "{\\rule{0pt}{1.1em}Q K"))
    assert not unstrutted_top_transposes("$$\nJ = \\frac{1}{\\tau}\\big(\\operatorname{diag}(w) - ww^\\top\\big)\n$$\n")


# -- one letter, one thing ------------------------------------------------------------------------------------------
def test_e04_permutes_the_key_value_pairs_by_pi():
    """P reorders the tokens (T_q × T_q), Π the key–value pairs (T_k × T_k), as the notation page has it [3]."""
    invariance = _solution("e04-permutation.md").split("**Invariance.**")[1]
    assert "\\Pi K" in invariance and "\\Pi V" in invariance and "(QK^\\top)\\,\\Pi^\\top" in invariance
    assert not re.search(r"\(PK\)|(?<![\\\w])P\s*K(?!\w)|P\^\\top", invariance)
    equivariance = _solution("e04-permutation.md").split("**Equivariance.**")[1].split("**Invariance.**")[0]
    assert "PQ, PK, PV" in equivariance and "\\Pi" not in equivariance


def test_e09_splits_the_projected_queries_and_names_the_heads_not_h():
    """H is the entropy and X the raw tokens on the notation page: E09 splits Q = XW_Q into `heads` [4]."""
    text = _text(ROOT / "exercises" / "e09-heads.md")
    prose_math = " ".join(re.findall(r"\$[^$]+\$", _prose(text)))
    assert not re.search(r"(?<![\\\w{])H(?![\w}])", prose_math), "H is the entropy"
    assert "`split_heads(Q, h)`" in text and "`merge_heads(heads)`" in text
    assert "$Q = XW_Q$" in text
    code = "\n".join(src for _, src in _cells(text))
    assert not re.search(r"\bX\b|\bH\b", code), "the page's code splits Q and merges heads"


def test_e09_states_that_h_divides_and_that_d_model_over_h_is_a_choice():
    """d_k = d_model/h is Vaswani et al.'s choice, and reshape needs h to divide the columns [5]."""
    statement = " ".join(_statement("e09-heads.md").split())
    assert "commonly $d_k = d_{\\text{model}}/h$" in statement
    assert "whose number of columns $h$ divides" in statement
    from attn.grading import get_item

    assert any("h must divide the columns" in h for h in get_item("E09").hints)


GAMMA_NOT_A_SCALE = re.compile(r"\\gamma(?!\s*(?:Q|q|\\,\s*q|=\s*1/\\sqrt))")


@pytest.mark.parametrize("page", EXERCISES, ids=IDS)
def test_gamma_is_the_scale_of_the_scores_only(page):
    """The notation page's γ is the scale of the scores, S = γQKᵀ; E07 once used it for a skewness [6]."""
    spans = re.findall(r"\$\$.*?\$\$|\$[^$]+\$", _prose(_text(page)), re.S)
    found = [s for s in spans if GAMMA_NOT_A_SCALE.search(s)]
    assert not found, f"{page.name}: γ for something other than the scale of the scores: {found}"


def test_e07_asks_for_the_least_squares_slope():
    """Four noisy points do not lie on one line: the slope asked for is that of the least-squares fit [7]."""
    statement = " ".join(_statement("e07-variance.md").split())
    assert "least-squares line fitted to the four points" in statement and "straight line through" not in statement
    import numpy as np

    from attn.grading import exercises as ex, get_item

    rng = np.random.default_rng(0)
    ns = get_item("E07").context()
    for _ in range(20):  # the checker's slope is np.polyfit's, the fit the statement names
        v = np.exp(rng.normal(size=4)) * np.asarray(ex.E07_DKS)
        assert float(ex._log_log_slope(ns, v)) == pytest.approx(np.polyfit(np.log(ex.E07_DKS), np.log(v), 1)[0])


def test_the_notation_page_names_the_coordinate_index():
    """q_a k_a (B05, E07, Proposition 3) counts coordinates; the notation page says so next to the heads' a [14]."""
    rows = [line for line in _text(ROOT / "chapters" / "notation.md").splitlines() if line.startswith("| $q_a$")]
    assert len(rows) == 1 and "coordinates" in rows[0] and "heads" in rows[0]
    users = [p.name for p in EXERCISES if re.search(r"q_a\s*k_a", _text(p))]
    assert users, "no exercise page writes q_a k_a any more: the row may go"


# -- a fixed problem shows the hand computation its variant shows [10-12] ------------------------------------------
ROUTES = {"b02-temperature.md": "temperature_route", "b03-causal-mask.md": "causal_route",
          "b04-cross-attention.md": "attention_route"}


@pytest.mark.parametrize("name, route", sorted(ROUTES.items()))
def test_a_problem_glues_the_worked_route_its_variant_glues(name, route):
    problem = _solution(name)
    variant = _solution("v" + name[1:])
    for text in (problem, variant):
        assert f"from attn.worked import {route}" in text and "```{glue:md}" in text, name


def test_the_problem_routes_show_the_hand_numbers():
    """The numbers the reader asked for: B02's 0.87/0.12/0.02, B03's row 3 output, B04's (1.40, 0.94)."""
    import numpy as np

    from attn.grading import get_item
    from attn.worked import attention_route, causal_route, temperature_route

    b02 = get_item("B02").context()
    assert "so the weights are 0.87, 0.12, 0.02." in temperature_route(b02.s, b02.taus)
    b03 = get_item("B03").context()
    row3 = causal_route(b03.S, b03.V).split("\n")[2]
    assert "weights 0.79, 0.11, 0.11" in row3 and "\\approx (1.68, 0.32)$" in row3
    b04 = get_item("B04").context()
    routes = [attention_route(i, b04.Q, b04.K, b04.V) for i in range(len(b04.Q))]
    assert "\\approx (1.40, 0.94)$" in routes[0] and "\\approx (0.89, 1.69)$" in routes[1]
    assert np.allclose(b04.output.round(2), [[1.40, 0.94], [0.89, 1.69]])


# -- printed answers say which is which [16] --------------------------------------------------------------------
def unlabelled_prints(text: str) -> list[str]:
    found = []
    for tags, src in _cells(text):
        if tags & HIDDEN:
            continue
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                values = [a for a in node.args if not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
                labels = [a for a in node.args if isinstance(a, (ast.Constant, ast.JoinedStr))]
                if len(node.args) > 1 and not labels or len(values) > 1:
                    found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("page", EXERCISES, ids=IDS)
def test_printed_answers_carry_labels(page):
    found = unlabelled_prints(_text(page))
    assert not found, f"{page.name}: print one labelled array per call: {found}"


def test_the_print_rule():
    cell = "```{code-cell} ipython3\n:tags: [solution]\n\n%s\n```\n"
    assert unlabelled_prints(cell % 'print(S_sol, W_sol.round(2), sep="\\n\\n")')
    assert not unlabelled_prints(cell % 'print("S =", S_sol, sep="\\n")')
    assert not unlabelled_prints(cell % 'print(broken_attention(Q, K, V, mask))')


# -- the reader is shown the lesson, not the book's bookkeeping [17] ------------------------------------------------
BOOKKEEPING = re.compile(r"\bwarnings\.(?:catch_warnings|simplefilter|filterwarnings)\b")


@pytest.mark.parametrize("page", EXERCISES, ids=IDS)
def test_catching_warnings_is_hidden(page):
    shown = [src for tags, src in _cells(_text(page)) if BOOKKEEPING.search(src) and not tags & HIDDEN]
    assert not shown, f"{page.name} shows warnings bookkeeping: {shown}"


def test_e10_shows_the_broken_call_and_the_warning():
    text = _text(ROOT / "exercises" / "e10-nan.md")
    cells = list(_cells(text))
    shown_call = [tags for tags, src in cells if src.strip() == "print(broken_attention(Q, K, V, mask))"]
    assert shown_call == [{"remove-output"}]  # its output (and warning) shown by the book-only cell after it
    replay = [tags for tags, src in cells if "catch_warnings" in src]
    assert replay == [{"remove-input", "book-only"}]
