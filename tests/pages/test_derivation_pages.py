"""What a read of the theory and Mathematics pages found, kept from coming back: each test is one kind of slip,
checked on every page of the book.

- The chapter has five Propositions; the supporting results of the companion pages are Lemmas, so that
  "Proposition n" always means one of the chapter's five.
- The winner of a row of weights is j* and its weight w_max (= w_{j*}, said once where it is defined): not
  w_*, w_{i*}, w_top.
- The factor that multiplies a row of logits is c (softmax(c x), c = gamma / tau); a, b are the indices of
  entries (q_a k_a).
- Log-sum-exp is lse, the notation table's name, not a second letter L (which a section may use for a finite
  mask penalty).
- A row of the positional encoding E is E_{t.}: e_j is the j-th basis (one-hot) vector.
- Code names the softmax's output w (or W), as the formulas do: never s, p or A.
- The temperature explorer writes its row of scores as x; the theory page says so, and must stop saying so if
  the explorer changes.
- A figure that draws a bound capped at 1 says so in its label.
- A causal mask alone carries position (the page shows it): with equal scores, query i weights its i keys 1/i.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import attn
from attn.book_index import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
IDS = [str(p.relative_to(ROOT)) for p in PAGES]
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```", re.S)
MATH_SPAN = re.compile(r"\$\$.*?\$\$|\$[^$]+?\$", re.S)


def prose_math(text: str) -> list[str]:
    return [m.group(0) for m in MATH_SPAN.finditer(CODE_CELL.sub("\n", text))]


def code(text: str) -> str:
    return "\n".join(m.group("body") for m in CODE_CELL.finditer(text))


# ---------------------------------------------------------------- the chapter's five Propositions
CHAPTER_PROPOSITIONS = set(next(s for s in SECTIONS if s.name == "propositions").expected)
PROPOSITION = re.compile(r"^(?:`{3,}|:{3,})\{prf:proposition\}[^\n]*\n(?::[a-z]+:[^\n]*\n)*?:label:\s*(\S+)", re.M)
UNLABELLED = re.compile(r"^(?:`{3,}|:{3,})\{prf:proposition\}", re.M)


def propositions(text: str) -> tuple[int, list[str]]:
    """How many prf:proposition directives a page has, and their labels."""
    return len(UNLABELLED.findall(text)), PROPOSITION.findall(text)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_only_the_chapters_five_claims_are_propositions(page):
    count, labels = propositions(page.read_text(encoding="utf-8"))
    assert count == len(labels), f"{page.name}: a prf:proposition without a label"
    others = [label for label in labels if label not in CHAPTER_PROPOSITIONS]
    assert not others, (f"{page.name}: {others} would be numbered after the chapter's five Propositions; "
                        "state a supporting result as a prf:lemma")


def test_the_book_states_each_chapter_proposition_once():
    labels = [label for page in PAGES for label in propositions(page.read_text(encoding="utf-8"))[1]]
    assert sorted(labels) == sorted(CHAPTER_PROPOSITIONS)


def test_the_proposition_rule_reads_labels():
    page = "```{prf:proposition} A\n:label: prop-scaling\n\nText.\n```\n```{prf:proposition} B\n:label: thm-x\n```\n"
    assert propositions(page) == (2, ["prop-scaling", "thm-x"])


# ---------------------------------------------------------------- one symbol per thing
MATH_RULES = [
    ("the winner's weight is w_max (w_max = w_{j*} where it is defined), its index j*",
     re.compile(r"w_\*|w_\{i\^\*\}|w_\{?\\text\{top\}|(?<!w_\{\\max\} = )w_\{j\^\*\}")),
    ("the factor on the logits is c, not a (a is an entry index)",
     re.compile(r"\\operatorname\{softmax\}\(a\s*x\)|(?<![\\\w])[Jw]\(a\)|e\^\{-a\\Delta\}|(?<![\\\w])a\s*x\b")),
    ("log-sum-exp is lse: no second letter L for it",
     re.compile(r"(?<![\\\w])L\(x|\\nabla\s*L\b|(?<![\\\w])L\s*=\s*\\operatorname\{lse\}")),
    ("a row of the positional encoding is E_{t.}; e_j is a basis vector",
     re.compile(r"\+\s*e_\{?[it]\}?(?![\w^])")),
]
PROSE_RULES = [
    ("the factor on the logits is c, not a", re.compile(r"\bscale \$a\$")),
]
CODE_RULES = [
    ("the softmax's output is w (or W) in code, never s, p or A",
     re.compile(r"^\s*(?:s|p|A)\s*=\s*(?:attn\.)?softmax\(", re.M)),
    ("the winner's weight is w_max in code comments and names too",
     re.compile(r"\bw_top\b|\bw_j\*")),
]


def misuses(text: str) -> list[str]:
    found = [f"{why}: {span[:80]!r}" for span in prose_math(text) for why, rule in MATH_RULES if rule.search(span)]
    prose = CODE_CELL.sub("\n", text)
    found += [f"{why}: {m.group(0)!r}" for why, rule in PROSE_RULES for m in rule.finditer(prose)]
    found += [f"{why}: {m.group(0)!r}" for why, rule in CODE_RULES for m in rule.finditer(code(text))]
    return found


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_one_symbol_per_thing(page):
    found = misuses(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", [
    r"the mass $1 - w_{j^*}$ off the winner", r"$w_* = w_{i^*}$", r"$1 - w_*$",
    r"$w(a) = \operatorname{softmax}(a x)$", r"$\lVert J(a)\rVert_2$", r"$2(n-1)e^{-a\Delta}$",
    r"$\nabla L(x) = w$", r"$\tau L(x/\tau)$",
    r"the rows $x_{\pi(i)} + e_i$",
    "with a scale $a$, as shown",
    "```{code-cell} ipython3\ns = attn.softmax(x, tau=tau)\n```",
    "```{code-cell} ipython3\n# 1 - w_top rounds to 0\n```",
])
def test_the_symbol_rules_catch_each_slip(bad):
    assert misuses(f"Prose {bad} prose.\n"), bad


@pytest.mark.parametrize("good", [
    r"$w_{\max} = w_{j^*}$ its weight", r"$1 - w_{\max}$", r"$\operatorname{softmax}(c\,x)$", r"$J(c)$",
    r"$\sum_{a=1}^{d_k} q_ak_a$", r"$\operatorname{lse}(x) = \log\sum_j e^{x_j}$", r"a penalty $-L$",
    r"$x_{\pi(i)} + E_{i\cdot}$", r"the one-hot vector $e_{j^*}$", r"$s_{j^*} - \max_{j\neq j^*}s_j$",
    "```{code-cell} ipython3\nw = attn.softmax(x, tau=tau)\ns = attn.scores(q, K)[0]\n```",
])
def test_the_symbol_rules_pass_the_notation(good):
    assert not misuses(f"Prose {good} prose.\n"), good


# ---------------------------------------------------------------- what the theory page says of its explorer and figure
THEORY = ROOT / "chapters" / "theory.md"


def test_the_explorer_names_its_row_as_the_theory_page_says():
    """The theory page may say what the temperature explorer calls its row of scores only if its titles do."""
    text = THEORY.read_text(encoding="utf-8")
    said = re.findall(r"It names the row of scores \$(\w)\$", text)
    python = (ROOT / "src" / "attn" / "widgets" / "temperature.py").read_text(encoding="utf-8")
    js = (ROOT / "src" / "attn" / "widgets" / "js" / "temperature.js").read_text(encoding="utf-8")
    titles = set(re.findall(r"set_title\(f?\"softmax\((\w) / τ\)", python)) | set(
        re.findall(r"title[^\n]*softmax\((\w) / τ\)", js))
    assert set(said) <= titles, f"theory.md says the explorer names its row {said}; its titles name {titles or 'none'}"


def test_a_capped_bound_is_labelled_as_capped():
    """A curve drawn as np.minimum(bound, 1) carries min(1, ...) in its legend label."""
    for page in PAGES:
        for call in re.findall(r"\.(?:loglog|semilogy|plot)\(([^()]*np\.minimum\([^()]*\)[^\n]*\n?[^\n]*)",
                               code(page.read_text(encoding="utf-8"))):
            assert r"\min(1" in call or "min(1" in call, f"{page.name}: a capped curve's label hides the cap: {call}"


# ---------------------------------------------------------------- what the Mathematics page shows of a causal mask
@pytest.mark.parametrize("T", [1, 2, 5, 17])
def test_with_equal_scores_a_causal_mask_weights_query_i_by_one_over_i(T):
    rng = np.random.default_rng(T)
    X = rng.normal(size=(T, 3))
    W_Q, W_V = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    W = attn.self_attention(X, W_Q, np.zeros((3, 2)), W_V, causal=True).weights
    i = np.arange(1, T + 1)[:, None]
    np.testing.assert_allclose(W, np.where(attn.causal_mask(T), 1 / i, 0), atol=1e-15)
