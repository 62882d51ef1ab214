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


# ================================================================ the second read of these pages (reader s3)
# What a second read of the theory page and the two Mathematics pages found, by kind, each checked on those three
# pages (the rules are general; the other pages' wording is their owners'):
# - one letter, one thing on a page: no Kronecker delta beside a gap delta, no variable Sigma beside the summation
#   sign, no shift t (t numbers tokens), c only as the factor on the logits (never an unnamed rate in e^{-c sqrt d_k}),
#   self-attention as SelfAttention (not a second name f), a score s before the temperature (s = gamma K q);
# - what a shown cell holds: the computation the text is about, not book machinery (glue_values and the rounding
#   helpers are imported in hidden cells) nor asserts or comments that only keep the prose or an alt text true;
# - a number in e-notation is glued as math ({glue:md} with $3.9\times10^{-7}$), never as "3.9e-07", which reads
#   as code and breaks across lines at its hyphen;
# - a shown comment types no computed number (it says where the number is, or the cell prints it);
# - the Mathematics pages' sections come in the order of the strand's numbered list;
# - conditions the claims need: the exponential fall of the Jacobian is that of a fixed row (the mean over random
#   rows falls like a power); blocked_attention is a forward pass only.
OWN = [ROOT / "chapters" / f"{name}.md" for name in ("theory", "mathematics-softmax", "mathematics-attention")]
OWN_IDS = [p.name for p in OWN]
KRONECKER = re.compile(r"\\delta_\{?[a-z]{2}\}?")
OTHER_DELTA = re.compile(r"\\delta(?!_\{?[a-z]{2}\}?)(?![a-zA-Z])")
OWN_MATH_RULES = [
    ("Sigma is not a variable beside the summation sign: name the sum with a plain letter",
     re.compile(r"\\Sigma(?![a-zA-Z])")),
    ("t numbers tokens: a shift of a row is another letter (kappa)", re.compile(r"(?<![\\\w])t\s*\\mathbb\{1\}")),
    ("c is the factor on the logits: a rate is named (delta_med), not c", re.compile(r"e\^\{-c\s*\\sqrt")),
    ("self-attention is SelfAttention(X), not a second name",
     re.compile(r"(?<![\\\w])[a-zA-Z]\((?:P\s*)?X\)\s*=\s*(?:P\s*)?\\operatorname\{Attention\}"
                r"|(?<![\\\w])f\(P\s*X\)")),
    ("a score s is before the temperature: s = gamma K q, w = softmax(s / tau)",
     re.compile(r"(?<![\\\w])s(?:_\{?\w*\}?)?\s*=\s*c\s*(?:\\,)?\s*[KQq]")),
]


def own_math_misuses(text: str) -> list[str]:
    spans = prose_math(text)
    found = [f"{why}: {span[:80]!r}" for span in spans for why, rule in OWN_MATH_RULES if rule.search(span)]
    if any(KRONECKER.search(span) for span in spans):
        found += [f"delta is the Kronecker delta on this page, not also a gap: {span[:80]!r}"
                  for span in spans if OTHER_DELTA.search(span)]
    return found


@pytest.mark.parametrize("page", OWN, ids=OWN_IDS)
def test_one_letter_one_thing_on_the_theory_and_mathematics_pages(page):
    found = own_math_misuses(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", [
    r"with entries $w_i(\delta_{ij} - w_j)$; later the gap $\delta$ between the two largest",
    r"$w_{\max} = 1/(1+\Sigma)$ with $\Sigma = \sum_{j\neq j^*} e^{-(s_{j^*}-s_j)/\tau}$",
    r"every shift $t\in\mathbb{R}$, $\operatorname{softmax}((x + t\mathbb{1})/\tau)$",
    r"the median falls like $e^{-c\sqrt{d_k}}$",
    r"for $f(X) = \operatorname{Attention}(XW_Q, XW_K, XW_V)$, $f(PX) = P f(X)$",
    r"$q \mapsto s = cKq \mapsto w = \operatorname{softmax}(s)$",
])
def test_the_own_letter_rules_catch_each_slip(bad):
    assert own_math_misuses(f"Prose {bad} prose.\n"), bad


@pytest.mark.parametrize("good", [
    r"$\frac{\partial w_i}{\partial x_j} = \frac{1}{\tau} w_i(\delta_{ij} - w_j)$ and $\mathbb{E}[q_aq_b] = \delta_{ab}$",
    r"the gap $\delta$, the median gap $\delta_{\text{med}}$, $e^{-\delta_{\text{med}}\sqrt{d_k}}$, $d\delta$",
    r"$w_{\max} = 1/(1+u)$ with $u = \sum_{j\neq j^*} e^{-(s_{j^*}-s_j)/\tau}$",
    r"$\operatorname{softmax}((x + \kappa\mathbb{1})/\tau)$, $\operatorname{softmax}(c\,x)$",
    r"$\operatorname{SelfAttention}(PX) = P\,\operatorname{SelfAttention}(X)$",
    r"$q \mapsto s = \gamma Kq \mapsto w = \operatorname{softmax}(s/\tau)$, $c = \gamma/\tau$",
])
def test_the_own_letter_rules_pass_the_notation(good):
    assert not own_math_misuses(f"Prose {good} prose.\n"), good


# ---------------------------------------------------------------- what a shown cell holds
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```", re.S)
TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]|^\s*tags:\s*\[(?P<tags2>[^\]]*)\]", re.M)
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
MACHINERY_IMPORT = re.compile(r"^\s*from attn\.page import [^\n]*\b(?:glue_values|upper_bound|agreement)\b", re.M)
PROSE_GUARD = re.compile(r"#.*\b(?:prose|alt text|caption|the text|the page says|glued?)\b", re.I)


def shown_cells(text: str) -> list[str]:
    found = []
    for m in CELL.finditer(text):
        body = m.group("body")
        tags = {t.strip() for g in TAGS.finditer(body) for t in (g.group("tags") or g.group("tags2")).split(",")}
        if not tags & HIDDEN:
            found.append(body)
    return found


def shown_bookkeeping(text: str) -> list[str]:
    found = []
    for body in shown_cells(text):
        found += [f"book machinery imported in a shown cell: {m.group(0).strip()}" for m in MACHINERY_IMPORT.finditer(body)]
        found += [f"a comment that keeps the prose true, in a shown cell: {line.strip()}"
                  for line in body.splitlines() if PROSE_GUARD.search(line)]
    return found


@pytest.mark.parametrize("page", OWN, ids=OWN_IDS)
def test_a_shown_cell_shows_the_computation_not_the_books_upkeep(page):
    found = shown_bookkeeping(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}:\n" + "\n".join(found)


def test_the_upkeep_rule_catches_imports_and_guards_and_passes_hidden_cells():
    shown = ("```{code-cell} ipython3\nfrom attn.page import glue_values, show_explorer\n"
             "# the curve rises at first (the alt text says so)\nassert y > 0\n# the case the text quotes\n```\n")
    assert len(shown_bookkeeping(shown)) == 3
    hidden = shown.replace("ipython3\n", "ipython3\n:tags: [remove-cell]\n\n", 1)
    assert shown_bookkeeping(hidden) == []
    assert shown_bookkeeping("```{code-cell} ipython3\nfrom attn.page import show_explorer\n# the l1 distance\n```\n") == []


# ---------------------------------------------------------------- numbers in e-notation are math
E_FORMAT = re.compile(r"\{glue:text\}`[\w\-]+:[^`]*[eE]`")


def _glued_e_notation(text: str) -> list[str]:
    """Glued values that a {glue:text} would show in e-notation: an e-format f-string, or an upper_bound()/agreement()
    with an e format (theirs by default), not wrapped in as_math()."""
    import ast

    from book import code_cell_trees

    def e_format(node) -> bool:
        if isinstance(node, ast.JoinedStr):
            return any(isinstance(v, ast.FormattedValue) and v.format_spec is not None
                       and ast.unparse(v.format_spec).rstrip("'\"").endswith(("e", "E")) for v in node.values)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("upper_bound", "agreement"):
            fmt = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "fmt"), None)
            return fmt is None or (isinstance(fmt, ast.Constant) and str(fmt.value).endswith(("e", "E")))
        return False

    found = []
    for tree in code_cell_trees(text):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glue_values":
                found += [f"{k.arg}={ast.unparse(k.value)[:60]}" for k in node.keywords if e_format(k.value)]
    return found


def e_notation_in_prose(text: str) -> list[str]:
    return [m.group(0) for m in E_FORMAT.finditer(CODE_CELL.sub("\n", text))] + _glued_e_notation(text)


@pytest.mark.parametrize("page", OWN, ids=OWN_IDS)
def test_numbers_in_e_notation_are_glued_as_math(page):
    found = e_notation_in_prose(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: glue these with as_math() and {{glue:md}}`name:myst`:\n" + "\n".join(found)


def test_the_e_notation_rule():
    assert e_notation_in_prose("They agree to {glue:text}`err:.1e`.\n")
    for glued in ('gap=agreement(d, ".1e")', "gap=upper_bound(d)", 'gap=f"{d:.2e}"'):
        assert e_notation_in_prose(f"```{{code-cell}} ipython3\nglue_values({glued})\n```\n"), glued
    for glued in ('gap=as_math(agreement(d, ".1e"))', 'gap=upper_bound(d, ".2f")', 'gap=f"{d:.3g}"', "gap=d"):
        assert not e_notation_in_prose(f"```{{code-cell}} ipython3\nglue_values({glued})\n```\n"), glued
    assert not e_notation_in_prose("They agree {glue:md}`err:myst`, {glue:text}`n:d` times, {glue:text}`w:.3f`.\n")


# ---------------------------------------------------------------- a shown comment types no computed number
DECIMAL = re.compile(r"(?<![\w.^{])\d+\.\d+(?:e[+-]?\d+)?(?![\w.])|(?<![\w.^{])\d+e[+-]?\d+(?![\w.])")


def typed_numbers_in_comments(text: str) -> list[str]:
    """Decimals and e-notation numbers in the comments of shown cells that are no literal of the cell's own code."""
    import io
    import tokenize

    found = []
    for body in shown_cells(text):
        source = "\n".join(line for line in body.splitlines() if not line.startswith((":", "%", "!")) and line != "---")
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue
        literals = {float(tok.string.replace("_", "")) for tok in tokens
                    if tok.type == tokenize.NUMBER and not tok.string.endswith(("j", "J"))}
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                found += [f"{tok.string.strip()}" for m in DECIMAL.finditer(tok.string) if float(m.group(0)) not in literals]
    return found


@pytest.mark.parametrize("page", OWN, ids=OWN_IDS)
def test_a_shown_comment_types_no_computed_number(page):
    found = typed_numbers_in_comments(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: a comment types a number the code computes (print it instead):\n" + "\n".join(found)


def test_the_comment_rule():
    bad = "```{code-cell} ipython3\nreach = 25\n# the error is about eps·e^{cΔ}: 1e-5 here\nr = eps * np.exp(reach)\n```\n"
    assert typed_numbers_in_comments(bad) == ["# the error is about eps·e^{cΔ}: 1e-5 here"]
    good = "```{code-cell} ipython3\n# overflow: exp(1e4) = inf\nbig = np.array([1e4, -1e4])\n```\n"
    assert typed_numbers_in_comments(good) == []


# ---------------------------------------------------------------- the items in the order of their numbers
ITEM_ROW = re.compile(r"^\| (\d+) \| \{ref\}`[^`<]*<([\w\-]+)>` \| this page \|$", re.M)


def items_out_of_order(text: str) -> list[str]:
    rows = sorted((int(n), label) for n, label in ITEM_ROW.findall(text))
    where = [(n, label, text.find(f"({label})=")) for n, label in rows]
    missing = [label for n, label, at in where if at < 0]
    order = [n for n, label, at in sorted(where, key=lambda r: r[2]) if at >= 0]
    return missing + ([f"sections in the order {order}, the table numbers them {sorted(order)}"]
                      if order != sorted(order) else [])


@pytest.mark.parametrize("page", OWN[1:], ids=OWN_IDS[1:])
def test_a_mathematics_page_takes_its_items_in_the_order_of_their_numbers(page):
    text = page.read_text(encoding="utf-8")
    assert len(ITEM_ROW.findall(text)) >= 7, "the table of items is no longer read"
    found = items_out_of_order(text)
    assert not found, f"{page.name}: " + "; ".join(found)


def test_the_item_order_rule():
    table = "| 2 | {ref}`A <sec-a>` | this page |\n| 3 | {ref}`B <sec-b>` | this page |\n"
    assert items_out_of_order(table + "(sec-b)=\n## B\n(sec-a)=\n## A\n")
    assert not items_out_of_order(table + "(sec-a)=\n## A\n(sec-b)=\n## B\n")


# ---------------------------------------------------------------- conditions the claims need
MATH_SOFTMAX = ROOT / "chapters" / "mathematics-softmax.md"


def _paragraph_with(text: str, words: str) -> str:
    prose = CODE_CELL.sub("\n", text)
    paragraphs = [p for p in re.split(r"\n\s*\n", prose) if words in " ".join(p.split())]
    assert paragraphs, f"no paragraph says {words!r} any more"
    return " ".join(paragraphs[0].split())


def test_the_exponential_fall_is_said_of_a_fixed_row():
    """The lemma is about one row with a fixed gap; over random rows the mean falls only like d_k^{-1/2}
    (tests/pages/test_theory.py holds that rate on attn)."""
    text = MATH_SOFTMAX.read_text(encoding="utf-8")
    intro = _paragraph_with(text, "makes \"saturates\" quantitative")
    assert "fixed row" in intro and "unique maximum" in intro, intro
    attention = _paragraph_with(text, "without the divisor, about 1 with it")
    assert "fixed row" in attention and r"d_k^{-1/2}" in attention and "<theory-scaling-gradients>`" in attention


def test_blocked_attention_is_said_to_be_the_forward_pass_only():
    import attn.blocked

    text = (ROOT / "chapters" / "theory.md").read_text(encoding="utf-8")
    said = _paragraph_with(text, "`attn.blocked_attention`")
    assert "forward" in said and "does the same" not in said, said
    backward = [name for name in vars(attn.blocked) if re.search(r"backward|grad|vjp", name, re.I)]
    assert not backward, f"attn.blocked now has {backward}: say on the theory page what it implements"


def test_the_theory_overview_names_what_each_limit_is_bounded_by():
    text = (ROOT / "chapters" / "theory.md").read_text(encoding="utf-8")
    overview = _paragraph_with(text, "how fast the weights approach one-hot")
    lemma = re.search(r"\{prf:lemma\} How fast the limits are reached.*?```", text, re.S).group(0)
    assert r"e^{-\Delta/\tau}" in lemma and r"e^{R/\tau}" in lemma       # part 1 by the gap, part 2 by the range
    assert "gap to the runner-up" in overview and "range of the scores" in overview, overview
