"""What the third expert read of the exercise pages (reader t5) found, each kind kept from coming back.

Each test is one kind of fault, checked everywhere it can occur (the finding's number in brackets):

- V01 broke for most seeds: tests/pages/test_variant_seeds.py runs every variant page on many seeds [2];
- c, the factor that multiplies a row of logits, used for a number added to them (E01) [3];
- "the largest exponent e^0 = 1": the exponent is 0, the exponential e^0 = 1 (E01 and its hint) [4];
- one row of scores written s on the temperature pages: the notation page now defines s, s_j and s_max [5];
- Σ naming a number in a formula where Σ is also the sum sign (E03 and its hint) [6];
- the raw dot products q·k (QKᵀ) called scores, in the exercise pages and in what the checker says [7];
- "Four steps" followed by five (E02) [8];
- a clause of the chapter's text kept with one word changed (E06) [9];
- downloaded learner notebooks with relative links: tests/pages/test_book_extensions.py [10];
- the identity w_j = 1/Σ_l e^{(s_l - s_j)/τ} stated as the limit τ → 0 (V02) [11];
- B01's worked weights without the sums the learner divides by [12].
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from book import raw_scores

import attn.page

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(p for p in (ROOT / "exercises").glob("*.md") if p.name != "index.md")
ALL_PAGES = sorted([*ROOT.glob("chapters/*.md"), *EXERCISES, ROOT / "intro.md"])
GRADING = sorted((ROOT / "src" / "attn" / "grading").glob("*.py")) + [ROOT / "src" / "attn" / "worked.py"]
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]", re.M)
GLUE_TEXT = re.compile(r"\{glue:text\}`(?P<name>\w+)(?::(?P<fmt>[^`]*))?`")


def _prose(page: Path) -> str:
    return CELL.sub("\n", page.read_text(encoding="utf-8"))


def grading_texts() -> list[tuple[str, str]]:
    """(file, text) of every string the checker can show a learner: hints, mistakes' messages, praise."""
    found = []
    for path in GRADING:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value:
                found.append((path.name, node.value))
            elif isinstance(node, ast.JoinedStr):
                found.append((path.name, "".join(v.value for v in node.values if isinstance(v, ast.Constant))))
    return found


def _texts():
    """Every exercise page's prose, and the texts of each file of the checker, as (where, texts)."""
    by_file: dict[str, list[str]] = {}
    for name, text in grading_texts():
        by_file.setdefault(name, []).append(text)
    return [(p.name, [_prose(p)]) for p in EXERCISES] + sorted(by_file.items())


TEXTS = _texts()
TEXT_IDS = [where for where, _ in TEXTS]


# -- the raw dot product is never a score [7] ----------------------------------------------------------------------


def test_the_raw_score_rule_catches_each_slip_t5_found():
    for bad in ("a standard deviation of 8:\nscores that far apart saturate a softmax",
                "the raw products $QK^\\top$ (the scores before the\n   $1/\\sqrt{d_k}$ scale",
                "The typical size of a raw\nscore is therefore", "which is why the scores are divided by √d_k",
                "Divide the scores by √d_k before the softmax.", "Your output comes from unscaled scores.",
                "These are the softmax of the unscaled Q Kᵀ.", "You divided the scores by d_k.",
                "Four steps: **scores** $QK^\\top$ (a matrix), **scale** by $1/\\sqrt{d_k}$"):
        assert raw_scores(bad), bad
    for good in ("the **scores** $S = QK^\\top/\\sqrt{d_k}$", "The scores Q Kᵀ / √d_k are then T_q × T_k",
                 "divide the scores by each temperature", "the raw dot products Q Kᵀ. Divide them by √d_k",
                 "mask the scores with $-\\infty$ *before* the softmax"):
        assert not raw_scores(good), good


@pytest.mark.parametrize("where, texts", TEXTS, ids=TEXT_IDS)
def test_the_raw_dot_products_are_never_called_scores(where, texts):
    found = [(raw_scores(t), t[:160]) for t in texts if raw_scores(t)]
    assert not found, (where, found)


# -- c multiplies; a shift has its own letter [3] ---------------------------------------------------------------------
C_SHIFT = re.compile(r"\$c\s*=\s*-|\b(?:add\w*|subtract\w*)\s+(?:the\s+same\s+(?:number|constant|amount)\s+)?\$c\$"
                     r"|\$x\s*[+-]\s*c\b|\bx_\w+\s*[+-]\s*c\$", re.I)


def test_c_is_never_a_shift_of_the_logits():
    assert C_SHIFT.search("Adding the same number $c$ to every logit") and C_SHIFT.search("Choosing $c = -\\max_j x_j$")
    assert not C_SHIFT.search("Subtracting the same number $m$ from every logit; $\\operatorname{softmax}(c\\,x)$")
    for page in ALL_PAGES:
        found = C_SHIFT.findall(_prose(page))
        assert not found, (page.name, found)


# -- the exponent is 0; the exponential is e^0 = 1 [4] --------------------------------------------------------------
EXPONENT_IS_E0 = re.compile(r"\bexponent\s+(?:is\s+|becomes\s+)?(?:\$e\^\{?0|exp\(0\)|e\^0|1\b)", re.I)


@pytest.mark.parametrize("where, texts", TEXTS, ids=TEXT_IDS)
def test_the_largest_exponent_is_0_not_e0(where, texts):
    found = [t[:160] for t in texts if EXPONENT_IS_E0.search(t)]
    assert not found, (where, found)


def test_the_exponent_rule():
    assert EXPONENT_IS_E0.search("makes the\nlargest exponent $e^0 = 1$")
    assert EXPONENT_IS_E0.search("the largest exponent becomes exp(0) = 1, nothing overflows.")
    assert not EXPONENT_IS_E0.search("the largest exponent is 0, so the largest exponential is $e^0 = 1$")


# -- Σ is the sum sign, never a number [6] ---------------------------------------------------------------------------
SIGMA_NUMBER = re.compile(r"\\Sigma\s*=|/\s*\\Sigma\b|\{\\Sigma(?:\^2)?\}|\bΣ\s*=\s*Σ|/\s*Σ(?!_)")


@pytest.mark.parametrize("where, texts", TEXTS, ids=TEXT_IDS)
def test_sigma_is_only_the_sum_sign(where, texts):
    found = [(SIGMA_NUMBER.findall(t), t[:160]) for t in texts if SIGMA_NUMBER.search(t)]
    assert not found, (where, found)


def test_the_sigma_rule():
    for bad in ("$\\Sigma = \\sum_l u_l$", "$w_i = u_i/\\Sigma$", "\\frac{u_i}{\\Sigma^2}", "w_i = u_i / Σ with",
                "Σ = Σ_l u_l"):
        assert SIGMA_NUMBER.search(bad), bad
    assert not SIGMA_NUMBER.search("exp(x_i) / Σ_j exp(x_j), and $Z = \\sum_l u_l$, $w_i = u_i/Z$")


# -- one row of scores, s, is the notation page's [5] -----------------------------------------------------------------
def test_the_notation_page_defines_the_row_of_scores_the_temperature_pages_write():
    notation = " ".join((ROOT / "chapters" / "notation.md").read_text(encoding="utf-8").split())
    assert "$s = (s_1, \\dots, s_{T_k})" in notation and "$s_{\\max} = s_{j^*}$" in notation
    assert "$\\operatorname{softmax}(s/\\tau)$" in notation and "$s^{(2)}$" in notation
    users = [p.name for p in EXERCISES if re.search(r"s_\{\\max\}|softmax\}\(s/|s\^\{\(\d\)\}", _prose(p))]
    assert {"b02-temperature.md", "v02-temperature.md", "e08-temperature.md"} <= set(users)
    for page in users:  # and they use s_max for the largest score only, never for another letter's maximum
        assert "x_{\\max}" not in _prose(ROOT / "exercises" / page), page


# -- "N steps" lists N [8] ---------------------------------------------------------------------------------------------
NUMBER = {"Two": 2, "Three": 3, "Four": 4, "Five": 5, "Six": 6}
STEPS = re.compile(r"\b(?P<n>Two|Three|Four|Five|Six) steps\b(?P<rest>.*?)\.\s+(?=[A-Z])", re.S)


def steps_counted_right(m: re.Match) -> bool:
    """As many bold steps as the number says, and no step added after the last one ("…, then multiply by V")."""
    bold = list(re.finditer(r"\*\*[^*]+\*\*", m["rest"]))
    tail = m["rest"][bold[-1].end():] if bold else m["rest"]
    return len(bold) == NUMBER[m["n"]] and not re.search(r"\bthen\s+\w+", tail)


def test_the_step_count_rule():
    old_e02 = ("Four steps, in this order: **scores** M (a M matrix), **scale** by M, **mask** the scores, and "
               "**softmax along each row** (`axis=-1`), then multiply the weights by M. Counting")
    assert not steps_counted_right(STEPS.search(old_e02))
    assert steps_counted_right(STEPS.search("Four steps: **a** (x), **b**, **c** and **d** M. Counting"))


def test_a_count_of_steps_counts_its_bold_steps():
    checked = 0
    for page in EXERCISES:
        prose = re.sub(r"\$[^$]*\$", "M", _prose(page))  # math spans hold dots that end no sentence
        for m in STEPS.finditer(prose):
            assert steps_counted_right(m), (page.name, m.group(0))
            checked += 1
    assert checked >= 1  # E02's


# -- no clause of the chapter's text kept with one word changed [9] ---------------------------------------------------
def test_e06_opens_in_its_own_words():
    seed = (ROOT.parent / "shared" / "seed" / "chapter-II.3-attention.txt")
    clause = re.compile(r"every pair of (?:positions|tokens) gets a score", re.I)
    for page in EXERCISES:
        assert not clause.search(" ".join(_prose(page).split())), page.name
    if seed.is_file():
        assert clause.search(" ".join(seed.read_text(encoding="utf-8").split()))  # the clause is the seed's


# -- an identity at every τ is not its limit [11] ----------------------------------------------------------------------
LIMIT_AS_IDENTITY = re.compile(r"As \$\\tau \\to (?:0|\\infty)\$, (?:each|every|the) weights? (?:is|are|equals?)\s*\$",
                               re.I)


def test_an_identity_is_not_stated_as_a_limit():
    assert LIMIT_AS_IDENTITY.search("As $\\tau \\to 0$, each weight is\n$1/\\sum_l e^{(s_l - s_j)/\\tau}$".replace("\n", " "))
    for page in ALL_PAGES:
        prose = " ".join(_prose(page).split())
        assert not LIMIT_AS_IDENTITY.search(prose), page.name
    v02 = " ".join(_prose(ROOT / "exercises" / "v02-temperature.md").split())
    assert "At every $\\tau$, each weight is $w_j = 1/\\sum_l e^{(s_l - s_j)/\\tau}$; as $\\tau \\to 0$" in v02


# -- B01 shows the sums its weights divide by [12] ----------------------------------------------------------------------
def run_page(page: Path, monkeypatch) -> tuple[dict, str]:
    """The page's executed code run here, its glued values collected, and its solution's prose filled in."""
    text = page.read_text(encoding="utf-8")
    cells = []
    for m in CELL.finditer(text):
        tags = {t.strip() for g in TAGS.finditer(m["body"]) for t in g["tags"].split(",")}
        if "skip-execution" not in tags:
            cells.append(TAGS.sub("", m["body"]))
    glued: dict = {}
    monkeypatch.setattr(attn.page, "glue_values", lambda **kw: glued.update(kw))
    exec(compile("\n".join(cells), page.name, "exec"), {"__name__": "__page__"})
    prose = CELL.sub("\n", text.split("{solution-start}")[1])
    prose = GLUE_TEXT.sub(lambda m: format(glued[m["name"]], m["fmt"] or ""), prose)
    return glued, " ".join(prose.split())


def test_b01_shows_each_rows_exponentials_and_their_sum(monkeypatch):
    _, prose = run_page(ROOT / "exercises" / "b01-three-tokens.md", monkeypatch)
    e = np.exp([[0.5, 0.5, 1.0], [1.0, 0.0, 0.0]])  # B01's first two rows of scores, by hand
    assert f"which add up to {e[0].sum():.4f}" in prose and f"{e[0].sum():.4f}" == "6.0157"
    assert f"$e^{{s_{{21}}}} \\approx$ {e[1, 0]:.4f} and $e^{{s_{{22}}}} = e^{{s_{{23}}}} =$ 1" in prose
    assert f"which add up to {e[1].sum():.4f}" in prose and f"{e[1].sum():.4f}" == "4.7183"
    w = e / e.sum(axis=1, keepdims=True)
    assert f"the weights are {w[1, 0]:.2f}, {w[1, 1]:.2f} and {w[1, 2]:.2f}" in prose
