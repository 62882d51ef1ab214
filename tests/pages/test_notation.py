"""The notation page and the code agree: every name in its "in the code" column exists, with those parameters."""
import importlib
import inspect
import re
import typing
from pathlib import Path

import numpy as np
import pytest

import attn
from book import raw_scores

PAGE = Path(__file__).resolve().parents[2] / "chapters" / "notation.md"

# The symbols the chapter's notation list names (seed page), plus the ones this book adds.
REQUIRED_SYMBOLS = [r"$Q$", r"$K$", r"$V$", r"$d_k$", r"$d_v$", r"$T$", r"$T_q$", r"$T_k$", r"$q$", r"$k$",
                    r"$\tau$", r"$\operatorname{softmax}$", r"$\operatorname{Var}$", r"$\nabla$", r"$S$", r"$W$",
                    r"$W_Q$", r"$W_K$", r"$W_V$", r"$M$"]
NO_CODE: set[str] = set()  # symbols allowed to have no checkable name in the code column

SNIPPET = re.compile(r"`([^`]+)`")
CALL = re.compile(r"^(attn|np)((?:\.\w+)+)(?:\(([^()]*)\))?((?:\.\w+)*)$")


# The table has three columns, symbol | shape | meaning; each meaning ends with the symbol's name in the code after
# CODE_MARK. (It had a fourth column for the code, which made the table wider than the text column at 1280 px
# and cut that column off behind a horizontal scroll bar: reader s1, finding 11.)
HEADER = "| symbol | shape | meaning, and its name in the code |"
CODE_MARK = "**Code:**"


def table_rows():
    """(symbol cell, code part of the meaning cell) for each row of the page's symbol table."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(HEADER))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 3, f"a notation row has 3 cells, symbol | shape | meaning (with {CODE_MARK}): {line}"
        assert cells[2].count(CODE_MARK) == 1, f"a notation row gives its code once, after {CODE_MARK}: {line}"
        rows.append((cells[0], cells[2].split(CODE_MARK)[1]))
    return rows


def snippets(code_cell):
    """The checkable code in a cell: backticked ``attn.…`` or ``np.…`` names, calls and attributes."""
    return [m for s in SNIPPET.findall(code_cell) if (m := CALL.match(s.strip()))]


ROWS = table_rows()
CHECKS = [(sym, m.group(0)) for sym, code in ROWS for m in snippets(code)]


def test_table_names_every_symbol():
    symbols = " ".join(sym for sym, _ in ROWS)
    missing = [s for s in REQUIRED_SYMBOLS if s not in symbols]
    assert not missing, f"notation table lacks {missing}"


def test_every_row_but_the_exempt_names_code():
    bare = [sym for sym, code in ROWS if not snippets(code) and sym not in NO_CODE]
    assert not bare, f"rows with no attn/np name to check: {bare}"


def _resolve(root, dotted):
    obj = root
    for part in dotted.strip(".").split("."):
        if not hasattr(obj, part) and inspect.ismodule(obj):  # a submodule not imported yet: attn.derivatives
            try:
                importlib.import_module(f"{obj.__name__}.{part}")
            except ModuleNotFoundError:
                pass
        assert hasattr(obj, part), f"{getattr(obj, '__name__', obj)!s} has no attribute {part!r}"
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("symbol,snippet", CHECKS, ids=[f"{s} {c}" for s, c in CHECKS])
def test_code_name_exists_with_its_parameters(symbol, snippet):
    module, dotted, args, after = CALL.match(snippet).groups()
    obj = _resolve(attn if module == "attn" else np, dotted)
    if args is None:
        return
    assert callable(obj), f"{snippet}: {dotted} is not callable"
    if module == "np":  # NumPy's ufuncs have no inspectable signature; existence is what we check
        return
    params = inspect.signature(obj).parameters
    for arg in filter(None, (a.strip() for a in args.split(","))):
        name = arg.split("=")[0].strip()
        assert name in params, f"{snippet}: {dotted}() has no parameter {name!r}; it has {list(params)}"
    if after:  # attributes of the result, e.g. attn.attention(...).weights
        returned = typing.get_type_hints(obj)["return"]
        _resolve(returned, after)


def test_page_uses_the_package_row_convention():
    """The shapes the page prints are those the functions return (a guard against a drifting table)."""
    O, W = attn.attention(np.ones((2, 4)), np.ones((5, 4)), np.ones((5, 3)))
    assert W.shape == (2, 5) and O.shape == (2, 3)
    assert attn.scores(np.ones((2, 4)), np.ones((5, 4))).shape == (2, 5)


# -- every page uses the notation page's symbols for what it reserves them for -----------------------------
# The notation page reserves: S, s_ij for scores; W, w_ij, w for weights (never A, p or s); Attention(Q, K, V)
# for the attention map (not A, not Attn) and SelfAttention(X) for self-attention (not SA); M for the boolean
# mask (the product W_Q W_K^T is W_QK, the additive mask B); X, Y for sequences (random variables are xi, eta;
# an output is O); q_i, k_i for rows of Q and K (the entries of one vector are q_a, k_a); d_model, d'_model for
# the widths of token sequences (not a bare d or d' in a shape). Each rule below is one of those reservations, written as a pattern that a misuse matches inside
# the math of a page's prose (captions and figure text included; code is not checked).
ROOT = PAGE.parents[1]
# every page but the notation page itself, which names the forbidden spellings in order to forbid them
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
PAGES.remove(PAGE)
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(?:---\n(?P<meta>.*?)\n---\n)?.*?\n```\n", re.S)
MATH_SPAN = re.compile(r"\$\$.*?\$\$|\$[^$]+?\$", re.S)   # inline math may run over a line break
RESERVED = [
    ("the weights are W or w: not A, p or s",
     re.compile(r"(?<![\\\w{])(?:A|p|s)(?:_\{?[\w*]+\}?)?(?:\([^()]*\))?\s*=\s*\\operatorname\{softmax\}")),
    ("the softmax Jacobian is diag(w) - ww^T: not of s or p",
     re.compile(r"\\operatorname\{diag\}\((?:s|p)\)|(?<![\\\w])(?:s\s*s|p\s*p)\^\\top")),
    ("the letter A is not a matrix of the book (the weights are W, the attention map Attention)",
     re.compile(r"(?<![\\\w{])A(?![\w}])")),
    ("the attention map is Attention(Q, K, V) and self-attention SelfAttention(X), as on the notation page",
     re.compile(r"\\operatorname\{Attn\}|\\mathrm\{SA\}|\\operatorname\{SA\}")),
    ("M is the boolean mask: the product W_Q W_K^T is W_{QK}, the additive mask B, a maximum x_max",
     re.compile(r"(?<![\\\w])M\s*=\s*(?:W_Q|\\max)|(?<![\\\w])M_\{?ij\}?\s*=\s*\\begin\{cases\}\s*0|(?<![\\\w])X\s*\\?,?\s*M\s*\\?,?\s*[XY]\^\\top")),
    ("X and Y are sequences: a random variable is xi or eta, an output O",
     re.compile(r"\\operatorname\{(?:Var|Cov)\}\(\s*c?\s*[XY](?![\w_^{])|\\mathbb\{E\}\s*\[?\(?\s*[XY](?![\w_^{])|\\bar\s*X|(?<![\\\w])Y\s*=\s*\\operatorname\{Attention\}")),
    ("q_i and k_i are rows i of Q and K: the entries of one query or key are q_a and k_a",
     re.compile(r"(?<![\\\w])q_i\s*k_i|(?<![\\\w])[qk]_i\^2|\\mathbb\{E\}\[[qk]_i")),
    ("s is a score: a step size along a direction D is epsilon, not s",
     re.compile(r"(?<![\\\w])s\s*(?:\\,)?\s*(?:D|E|W[A-Z]?)(?![\w])|\+\s*s\s*(?:\\,)?\s*[A-Z]")),
    ("E is the positional encoding: a direction in which a matrix is moved is D (reader s1, finding 7)",
     re.compile(r"W_\{?[QKV]\}?\s*\+\s*(?:\\varepsilon\s*(?:\\,)?\s*)?E(?![\w_^{])|\\varepsilon\s*(?:\\,)?\s*E(?![\w_^{])"
                r"|WXE(?![\w_])")),
    ("nabla is the gradient of a scalar function: the derivative of the weights or an output is a Jacobian, J or a "
     "partial derivative (reader s1, finding 10)",
     re.compile(r"\\nabla(?:_\{?\w+\}?)?\s*(?:\\operatorname\{softmax\}|[wWoO](?![\w_]))")),
    ("the score s_ij has no temperature in it: the logits are x = s / tau",
     re.compile(r"(?<![\\\w])s_\{?\w*\}?\s*=\s*[^$=]*\\tau")),
    ("a token width is d_model or d'_model, not a bare d' ",
     re.compile(r"(?<![\\\w])d(?:'|\^\\prime)(?!_)")),
    ("a token width in a shape is d_model, not a bare d (a bare d is for generic vectors, as in R^d)",
     re.compile(r"\\mathbb\{R\}\^\{[^{}]*\\times\s*d(?![_\w'])|\\mathbb\{R\}\^\{(?<![\\\w])d\s*\\times")),
    ("B is the additive mask only: the attention block is AttentionBlock(X_q, X_s), not B(., .)",
     re.compile(r"(?<![\\\w{])B\s*\(|(?<![\\\w{])B\s*=\s*(?!0|-\s*\\infty|\\begin\{cases\})")),
    ("the additive mask's entries are B_ij, not b_j (b is the block size of Proposition 5)",
     re.compile(r"(?<![\\\w{])b_\{?\w+\}?\s*=\s*(?:0|-\s*\\infty)|\+\s*b\s*\)|(?<![\\\w{])b(?![\w}])\s*\\?,?\s*bytes|T_qT_k\s*\\?,?\s*b(?![\w}])|\\cdot\s*b(?![\w}])|(?<![\\\w{])b\s*\\cdot")),
    ("R is the range of a row of scores: an invertible matrix is G, the keys a query may read are those with M_ij true",
     re.compile(r"(?<![\\\w{])R\^\{?-|W_Q\s*R(?![\w}])|\\(?:not)?in\s*R(?![\w}])|(?<![\\\w{])R\s*\\subseteq|R\s*=\s*\\emptyset")),
    ("an unsubscripted W is the weight matrix: a projection of X or Y (or of a token x_t) is W_Q, W_K, W_V",
     re.compile(r"(?<![\\\w{])(?:[XY]|[xy]_\{?\w+\}?)\s*W(?![_\w^{])|\\mathbb\{E\}_\{?W(?![_\w])")),
    ("a mask in a formula is the additive B (or M_ij in words around it), not a word inside the softmax",
     re.compile(r"\\operatorname\{softmax\}\s*(?:\\!\s*)?(?:\\[Bb]ig[lr]?\s*)?\((?:[^()$]|\([^()$]*\))*\\text\{\s+[a-z]")),
    ("the index of the largest logit of a row is j^* (z_{j^*}, e_{j^*}, w_max = w_{j^*}): not m, which is the row's "
     "maximum value, nor a bare *",
     re.compile(r"(?<![\\\w{])e_\{?m\}?(?![\w}])|(?<![\\\w{])[xz]_\{?\*\}?(?![\w])|\\ne\s*\*|_\{\s*\*\s*\}")),
    ("a Hessian is the Jacobian of a gradient (J for lse): the notation page defines no nabla^2 (reader t3, finding 10)",
     re.compile(r"\\nabla\s*\^")),
    ("a bar is a plain mean: a mean under the weights is E_w[.], as E_w[k] = sum_j w_j k_j (reader t3, finding 14)",
     re.compile(r"\\bar\s*\{?\s*[a-zA-Z]\s*\}?\s*=\s*\\sum_\{?[a-z]\}?\s*w_")),
    ("a bare d is the width of generic vectors, not a vector (reader t3, finding 9)",
     re.compile(r"(?<![\\\w{_'])d\s*=\s*(?![\d\s$])")),
    ("D is a direction in which a projection matrix is moved (W_V + eps D), never defined as another matrix "
     "(reader t3, finding 3)",
     re.compile(r"(?<![\\\w{_])D\s*=")),
    ("h is the number of heads: d_h would read as a head's width; a recurrent state's width is d_state "
     "(reader t3, finding 4)",
     re.compile(r"(?<![\\{])d_\{?h\}?(?![\w}])")),
]


def prose_math(text: str) -> list[str]:
    """The math spans a reader sees: the page's prose and its code cells' captions, not the code."""
    metas = [m.group("meta") or "" for m in CODE_CELL.finditer(text)]
    prose = CODE_CELL.sub("\n", text)
    return [m.group(0) for part in [prose, *metas] for m in MATH_SPAN.finditer(part)]


def misuses(text: str) -> list[str]:
    return [f"{why}: {span[:90]!r}" for span in prose_math(text) for why, rule in RESERVED if rule.search(span)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_pages_use_symbols_as_the_notation_page_reserves_them(page):
    found = misuses(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", [
    r"$A = \operatorname{softmax}(QK^\top/\sqrt{d_k})$",          # the weights named A
    r"$p = \operatorname{softmax}(s/\tau)$",                       # the weights named p
    r"$s = \operatorname{softmax}(x)$",                            # the weights named s
    r"$$J = \operatorname{diag}(s) - ss^\top$$",                   # a Jacobian of s
    r"$\operatorname{diag}(p) - pp^\top$",
    r"$A(Q, K, V) = \operatorname{softmax}(cQK^\top)V$",           # the attention map named A
    r"$W_K\in\mathbb{R}^{d'\times d_k}$",                          # d' for d'_model
    r"$X\in\mathbb{R}^{T\times d}$",                               # d for d_model in a shape
    r"$\operatorname{Attn}(Q, K, V)$",                              # the map under a second name
    r"$\mathrm{SA}(PX) = P\,\mathrm{SA}(X)$",                       # self-attention under a second name
    r"$M = W_Q W_K^\top$",                                         # M is the mask
    r"$S = \frac{X\,M\,Y^\top}{\sqrt{d_k}}$",
    r"$M_{ij} = \begin{cases} 0 & \text{may read}\end{cases}$",   # an additive mask named M
    r"$M = \max_l x_l$",
    r"$\operatorname{Var}(X) = \mathbb{E}[X^2]$",                  # a random variable named X
    r"$\operatorname{Cov}(X, Y)$", r"$\operatorname{sd}((X - \bar X)^2)$",
    r"$Y = \operatorname{Attention}(X, X, X)$",                   # an output named Y
    r"$\operatorname{Var}(q_i k_i)$", r"$\mathbb{E}[q_i^2]$",       # entries of one vector as q_i, k_i

    r"$B(X_{\mathrm q}, X_{\mathrm s}) = \operatorname{softmax}(S)V$",  # the block named B, the mask's letter
    r"$\operatorname{CrossAttention}(X, Y) = B(X, Y)$", r"$B = XW_V$",
    r"$b_j = 0$ for readable keys", r"$\operatorname{softmax}(s + b)$",  # the mask's entries named b
    r"takes $T_qT_k\,b$ bytes", r"$\gamma\, q\cdot b$", r"$\gamma\, b\cdot k_j$",  # a key shift named b
    r"$W_Q R$ and $W_K R^{-\top}$", r"$j\in R$", r"$R\subseteq\{1,\dots,n\}$", r"$R = \emptyset$",
    r"Row $t$ of $XW$",                                               # a bare W as a projection
    r"$q_i = x_iW$ and $k_j = x_jW$", r"$\mathbb{E}_W[q_i\cdot k_j]$",      # a bare W projecting tokens
    r"$W_V + sD$", r"$O + s\,WXD$",                                # a step size named s
    r"$O(W_V + E) = O(W_V) + WXE$", r"$W_Q + \varepsilon E$",      # a direction named E, the encoding's letter
    r"$\nabla_x \operatorname{softmax}(x)$", r"$\nabla_q o$",        # a Jacobian written as a gradient
    r"$s_j = q_i\cdot k_j/(\sqrt{d_k}\,\tau)$",                   # a score with the temperature folded in
    r"$O = \operatorname{softmax}(QK^\top/\sqrt{d_k} \text{ masked})\,V$",  # a word for the mask B
    r"$\nabla^2 \operatorname{lse}(x) = \operatorname{diag}(w) - ww^\top$",  # a Hessian as nabla^2
    r"$\bar k = \sum_j w_j k_j$",                                 # a weighted mean under a bar
    r"$d = \tau\bigl(\log\operatorname{softmax}(y/\tau) - \log w\bigr)$",  # a vector named d
    r"Let $D = E - PE$",                                           # D for a difference of encodings
    r"a state of width $d_h =$ 1024", r"$4Td_h$ bytes",            # d_h for a recurrent state
])
def test_the_rules_catch_each_misuse(bad):
    assert misuses(f"Some prose {bad} more prose.\n"), f"no rule caught {bad}"


@pytest.mark.parametrize("good", [
    r"$W = \operatorname{softmax}(S/\tau)$", r"$w = \operatorname{softmax}(x/\tau)$",
    r"$J = \operatorname{diag}(w) - ww^\top$", r"$\operatorname{Attention}(PQ, K, V)$",
    r"$\operatorname{SelfAttention}(PX) = P\,\operatorname{SelfAttention}(X)$", r"$W_{QK} = W_QW_K^\top$",
    r"$S = XW_{QK}Y^\top/\sqrt{d_k}$", r"$M_{ij}$ true", r"$\operatorname{Var}(\xi) = \mathbb{E}[\xi^2]$",
    r"$\operatorname{Var}(q\cdot k) = d_k$", r"$\mathbb{E}[q_a^2]\,\mathbb{E}[k_a^2]$", r"$q_i\cdot k_j$",
    r"$Y\in\mathbb{R}^{T_k\times d'_{\text{model}}}$", r"$\operatorname{Var}(q_a k_a)$",
    r"$W_K\in\mathbb{R}^{d'_{\text{model}}\times d_k}$", r"$u, v \in \mathbb{R}^d$",
    r"$O = WV$ with $s_{ij} = q_i\cdot k_j/\sqrt{d_k}$", r"$\mathcal{A}$",

    r"$\operatorname{softmax}(S + B)V$", r"$B_{ij} = 0$", r"$B_{ij} = -\infty$", r"$B\in\mathbb{R}^{T_q\times T_k}$",
    r"$\operatorname{AttentionBlock}(X, Y)$", r"$W_Q G$ and $W_K G^{-\top}$", r"$e^{R/\tau} - 1$",
    r"$R = \max_j s_j - \min_j s_j$", r"blocks of $b$ keys, $T\times b$", r"$XW_Q$", r"$q_i = x_iW_Q$",
    r"$\mathbb{E}_{W_Q}[q_i\cdot k_j]$", r"$x_tW_Q\cdot x_tW_K$", r"$Q_a = X W_{Q,a}$", r"$Q_a = X W^Q_a$",
    r"$\gamma\, q\cdot u$",
    r"$\operatorname{softmax}(s_{i\cdot} + B_{i\cdot})$",
    r"$W_V + \varepsilon D$", r"$O + \varepsilon\,WXD$", r"$x_j = s_{ij}/\tau$", r"$s_{tt} \ge 0$",
    r"$\operatorname{SelfAttention}(PX + E)$", r"$X + E$", r"$\nabla\operatorname{lse}(x) = w$",
    r"$\nabla_q \ell = c\sum_j w_j$", r"$g = \nabla_o\ell$", r"$\partial o/\partial q$",
    r"$\operatorname{softmax}(QK^\top/\sqrt{d_k} + B)\,V$", r"$\operatorname{softmax}(\cos\theta_j/\tau_{\text{eff}})$",
    r"$\mathbb{E}_w[k] = \sum_j w_j k_j$", r"$\bar v = \frac{1}{T_k}\sum_j v_j$", r"$u\in\mathbb{R}^d$, $d = 3$",
    r"$W_V + \varepsilon D$", r"$G = E - PE$", r"$4Td_{\text{state}}$", r"$d_{\text{model}}/h$", r"$d_k = d_v$",
    r"$J = \operatorname{diag}(w) - ww^\top$, the Hessian of $\operatorname{lse}$",
])
def test_the_rules_pass_the_notation(good):
    assert not misuses(f"Some prose {good} more prose.\n"), f"a rule rejects the book's own notation: {good}"


# One letter, one thing on a page: the notation page writes a token (row t of X) as x_t and, where a page studies
# the softmax on its own, a row of logits as x. A page that needs both (Proposition 3: tokens in the tied
# projections, logits in the calculus) writes the logits z, so that x_i never means a logit and a token at once.
# a token row times a projection: x_t W_Q, or a bare x (or x') W_Q as a page once wrote its tokens
TOKEN_ROW = re.compile(r"(?<![\\\w{])x(?:_\{?\w+\}?|'|\^\\prime)?\s*W_")
X_LOGITS = re.compile(r"\\operatorname\{softmax\}\(x|\\partial\s*x(?![_\w])|e\^\{x_|(?<![\\\w{])x\s*\\in\s*\\mathbb\{R\}\^|\\Delta\(x\)")


def logits_and_tokens_both_x(text: str) -> list[str]:
    spans = prose_math(text)
    if not any(TOKEN_ROW.search(span) for span in spans):
        return []
    return [span[:90] for span in spans if X_LOGITS.search(span)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_page_with_token_rows_calls_its_logits_z(page):
    found = logits_and_tokens_both_x(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)} writes tokens x_t and logits x: write the logits z\n" + "\n".join(found)


def test_the_logit_rule_needs_both_meanings():
    both = "Tokens $q_i = x_iW_Q$. The weights $w = \\operatorname{softmax}(x)$, with $e^{x_i}$.\n"
    assert logits_and_tokens_both_x(both)
    assert not logits_and_tokens_both_x(both.replace("(x)", "(z)").replace("e^{x_i}", "e^{z_i}"))
    assert not logits_and_tokens_both_x("The weights $w = \\operatorname{softmax}(x)$ of logits $x \\in \\mathbb{R}^n$.\n")
    # tokens written as bare x and x' beside logits x (the first Mathematics page once did); rows X_{i.} pass
    bare = "Tokens $x$ and $x'$, $q = xW_Q$, $k = x'W_K$. Logits $x \\in \\mathbb{R}^n$.\n"
    assert logits_and_tokens_both_x(bare)
    assert not logits_and_tokens_both_x(bare.replace("xW_Q", "X_{i\\cdot}W_Q").replace("x'W_K", "X_{j\\cdot}W_K"))


# Proposition 3 counts keys: T_k of them, and a row of logits studied on its own has n entries (the notation
# page's names); a bare T, the sequence length, is not used there for either.
def bare_T(text: str) -> list[str]:
    return [span[:90] for span in prose_math(text) if re.search(r"(?<![\\\w{^])T(?![_\w])", span)]


def test_proposition_3_counts_keys_as_T_k():
    found = bare_T((ROOT / "chapters" / "prop3-scaling.md").read_text(encoding="utf-8"))
    assert not found, "chapters/prop3-scaling.md: a bare T where the keys are T_k (or a row's length n):\n" + "\n".join(found)


def test_the_T_rule():
    assert bare_T("one query against $T$ keys, $k_1, \\dots, k_T$\n")
    assert not bare_T("against $T_k$ keys, $QK^\\top$, $x \\in \\mathbb{R}^n$, $2(T_k-1)$\n")


# Figure titles, labels and widget captions are drawn by code: their mathtext ($...$ inside a string) and the plain
# words around it are what a reader sees in the figure, so the reservations hold there too.
WIDGETS = sorted((ROOT / "src" / "attn" / "widgets").glob("*.py"))
CODE_STRING = re.compile(r"""(?P<q>['"])(?P<s>(?:(?!(?P=q)).)*)(?P=q)""")
FIGURE_RULES = RESERVED + [
    ("B is the additive mask only: in a figure the attention block is AttentionBlock(X, Y), not B(X, Y)",
     re.compile(r"(?<![\\\w{])B\s*\(\s*\$?\s*X")),
]


def code_text(text: str) -> list[str]:
    """The strings in a page's code cells (or in a module) that a figure or widget may show."""
    bodies = [m.group(0) for m in CODE_CELL.finditer(text)] if "```{code-cell}" in text else [text]
    return [m.group("s") for body in bodies for line in body.splitlines() for m in CODE_STRING.finditer(line)]


def figure_misuses(text: str) -> list[str]:
    found = []
    for s in code_text(text):
        spans = [m.group(0) for m in MATH_SPAN.finditer(s)]
        found += [f"{why}: {s[:90]!r}" for span in spans for why, rule in RESERVED if rule.search(span)]
        found += [f"{why}: {s[:90]!r}" for why, rule in FIGURE_RULES[len(RESERVED):] if rule.search(s)]
    return found


@pytest.mark.parametrize("source", [*PAGES, *WIDGETS], ids=[str(p.relative_to(ROOT)) for p in [*PAGES, *WIDGETS]])
def test_figure_text_uses_symbols_as_the_notation_page_reserves_them(source):
    found = figure_misuses(source.read_text(encoding="utf-8"))
    assert not found, f"{source.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", ['ax.set_title("self-attention $B(X, X)$")', "title='cross-attention B(X, Y)'",
                                 'ax.set_title("$W_Q R$ and $W_K R^{-T}$")'])
def test_the_figure_rules_catch_each_misuse(bad):
    page = f"Prose.\n```{{code-cell}} ipython3\n{bad}\n```\n"
    assert figure_misuses(page), bad


# -- what the exercise pages add keeps the same notation (review 5) ------------------------------------------
# The output is O = WV (not the word "weights" times V); log is the natural logarithm (not \ln); an exponential
# of a logit is u_l, summed over l (k is a key, and e_k reads as a basis vector); a target weight is w* (the
# weights are never p). A page that writes the outer product ww^T says that w is a column vector there, and a
# page that writes Kronecker's delta says what it is.
EXERCISE_PAGES = sorted((ROOT / "exercises").glob("*.md"))
EXERCISE_RULES = [
    ("the output is O = WV, not the word weights times V", re.compile(r"\\text\{weights\}")),
    ("log is the natural logarithm, as on the notation page: not \\ln", re.compile(r"\\ln(?![A-Za-z])")),
    ("an exponential of a logit is u_l: e_k reads as a basis vector", re.compile(r"(?<![\\\w])e_\{?[a-z]\}?\s*=\s*\\exp")),
    ("k is a key: a sum over the logits runs over l", re.compile(r"\\sum_\{?k(?![\w])")),
    ("a target weight is w*, not p", re.compile(r"(?<![\\\w])p\s*/\s*\(\s*1\s*-\s*p|\(\s*1\s*-\s*p\s*\)\s*/\s*p")),
    ("formulas count from 1: no score, query, key, value, weight or logit is numbered 0",
     re.compile(r"(?<![\\\w])[sqkvwx](?:\^\{\(\d\)\})?_\{?0(?![\d.])")),
]
OUTER_PRODUCT = re.compile(r"(?<![\\\w])w\s*w\^\\top")
DELTA = re.compile(r"\\delta_")
DELTA_DEFINED = re.compile(r"\\delta_\{?\w+\}?\s*=\s*1\b|\\delta_\{?\w+\}?\s+is\s+1\b")


def exercise_misuses(text: str) -> list[str]:
    spans = prose_math(text)
    found = [f"{why}: {span[:90]!r}" for span in spans for why, rule in EXERCISE_RULES if rule.search(span)]
    prose = CODE_CELL.sub("\n", text)
    if any(OUTER_PRODUCT.search(s) for s in spans) and "column vector" not in prose:
        found.append("writes the outer product ww^T without saying that w is a column vector there")
    if any(DELTA.search(s) for s in spans) and not DELTA_DEFINED.search(" ".join(spans)):
        found.append("writes Kronecker's delta without defining it (delta_ij = 1 if i = j, else 0)")
    return found


@pytest.mark.parametrize("page", EXERCISE_PAGES, ids=[p.name for p in EXERCISE_PAGES])
def test_exercise_pages_keep_the_notation_in_what_they_add(page):
    found = exercise_misuses(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", [
    r"Compute the output $\text{weights}\; V$.", r"$\tau = \Delta/\ln(3)$", r"Write $e_k = \exp(x_k/\tau)$.",
    r"$\Sigma = \sum_k u_k$", r"odds $p/(1-p)$", r"$e^{-\Delta/\tau} = (1-p)/p$",
    r"$J = \operatorname{diag}(w) - ww^\top$", r"$\partial u_l/\partial x_j = \delta_{lj} u_j$",
    r"$\Delta = s^{(2)}_0 - s^{(2)}_1$", r"$w_0 + w_1$",
])
def test_the_exercise_rules_catch_each_misuse(bad):
    assert exercise_misuses(f"Some prose {bad} more prose.\n"), bad


@pytest.mark.parametrize("good", [
    r"Compute $O = WV$.", r"$\tau = \Delta/\log(3)$", r"Write $u_l = \exp(x_l/\tau)$ and $\Sigma = \sum_l u_l$.",
    r"$w^*/(1-w^*)$", r"taken as a column vector, $J = \operatorname{diag}(w) - ww^\top$",
    r"$\Delta = s^{(2)}_1 - s^{(2)}_2$", r"$H[0, t], H[1, t]$", r"$10^{-9}$",
    r"With $\delta_{lj} = 1$ if $l = j$ and 0 otherwise, $\partial u_l/\partial x_j = \delta_{lj} u_j$",
])
def test_the_exercise_rules_pass_the_notation(good):
    assert not exercise_misuses(f"Some prose {good} more prose.\n"), good


def test_inline_math_over_a_line_break_is_checked():
    assert misuses("The Jacobian $J = \\operatorname{diag}(s)\n - ss^\\top$ of the weights.\n")


def test_code_is_not_checked():
    page = "Prose.\n```{code-cell} ipython3\nA = attn.softmax(S)  # $A = \\operatorname{softmax}(S)$\n```\n"
    assert not misuses(page)


# -- the feedback a learner reads keeps the same notation --------------------------------------------------
# Hints, praise and mistake messages are plain text (no TeX), so the rules are spelled as the text spells them.
FEEDBACK_RULES = [
    ("the entries of one query or key are q_a, k_a (q_i is row i of Q)", re.compile(r"\bq_i\s*k_i\b|\b[qk]_i²|E\[[qk]_i")),
    ("a random variable is ξ or η (X is a sequence)", re.compile(r"Var\(c?\s*X\)|Cov\(X")),
    ("E04's self-attention output is O (Y is the second sequence)", re.compile(r"\bY\[perm\]|\bY = attn\.attention|rows of Y\b|\bIt is Y\b")),
    ("the weights are w, not s", re.compile(r"diag\(s\)|\bs sᵀ|\bssᵀ")),
    ("log is the natural logarithm, as on the notation page: not ln", re.compile(r"\bln\(")),
    ("an exponential of a logit is u_i: e_i reads as a basis vector", re.compile(r"\be_[a-z]\s*=\s*exp")),
    ("a target weight is w*, as on the E08 page", re.compile(r"(?<![\w*])w/\(1\s*[−-]\s*w\)")),
]


def feedback_texts():
    from attn import grading  # noqa: F401  (registers every item)
    from attn.grading.items import REGISTRY

    for item in REGISTRY.values():
        for i, hint in enumerate(item.hints):
            yield f"{item.id} hint {i + 1}", hint
        for part in item.parts:
            yield f"{item.id}.{part.name} praise", part.praise
            for mistake in part.mistakes:
                yield f"{item.id}.{part.name} {mistake.key}", mistake.hint


def test_feedback_uses_the_notation():
    found = [f"{where} ({why}): {text[:90]!r}" for where, text in feedback_texts() for why, rule in FEEDBACK_RULES
             if text and rule.search(text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("bad", ["Each product q_i k_i has variance σ_q² σ_k².", "Var(c X) = c² Var(X).",
                                 "It is Y[perm]: the outputs move.", "median ‖diag(s) − s sᵀ‖",
                                 "so τ = Δ / ln(w/(1 − w)).", "Write w_i = e_i / Σ with e_i = exp(x_i/τ)."])
def test_the_feedback_rules_catch_each_misuse(bad):
    assert any(rule.search(bad) for _, rule in FEEDBACK_RULES), bad


# -- per-head projections ------------------------------------------------------------------------------------
# The chapter writes W_Q, W_K, W_V, W_O with subscripts, and head a's projections W_{Q,a}, W_{K,a}, W_{V,a} (the
# notation page's row). Vaswani et al.'s superscripts W^Q_i, W^O are quoted on the papers' page only, and never
# in one formula with the chapter's subscripted W's; no page spells a per-head projection "W_Q of head a".
QUOTES_VASWANI = {"chapters/practice-papers.md"}
SUPERSCRIPT_W = re.compile(r"W\^\{?[QKVO]")
SUBSCRIPT_W = re.compile(r"W_\{?[QKVO]")
OF_HEAD = re.compile(r"\$W_\{?[QKV]\}?\$(?:, \$W_\{?[QKV]\}?\$)*(?:,? and \$W_\{?[QKV]\}?\$)? of head")


def per_head_misuses(text: str, quotes: bool) -> list[str]:
    spans = prose_math(text)
    found = [f"superscript W outside a quotation of Vaswani et al.: {m!r}" for m in spans
             if not quotes and SUPERSCRIPT_W.search(m)]
    found += [f"superscript and subscript W in one formula: {m!r}" for m in spans
              if SUPERSCRIPT_W.search(m) and SUBSCRIPT_W.search(m)]
    found += [f"a per-head projection is W_{{Q,a}}, not 'W_Q of head a': {m.group(0)!r}"
              for m in OF_HEAD.finditer(text)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_per_head_projections_use_the_chapter_symbols(page):
    found = per_head_misuses(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)) in QUOTES_VASWANI)
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


def test_the_notation_page_defines_the_per_head_symbols():
    symbols = " ".join(sym for sym, _ in ROWS)
    assert "$W_{Q,a}$" in symbols and "$W_{K,a}$" in symbols and "$W_{V,a}$" in symbols


def test_the_per_head_rules_catch_each_misuse():
    assert per_head_misuses(r"where $Q_a = X W^Q_a$ with $W^Q_a \in \mathbb{R}^{d\times d_k}$.", quotes=False)
    assert per_head_misuses(r"Stacking gives $W_Q = [W^Q_1, \dots, W^Q_h]$.", quotes=True)
    assert per_head_misuses(r"| $W_Q$, $W_K$, $W_V$ of head $a$, and $W_O$ |", quotes=True)
    assert not per_head_misuses(r"(Vaswani; $W^Q_i$), here $W_{Q,a}$ and $W_O$.", quotes=True)


# -- one symbol per thing on the notation page itself (reader s1, findings 8-10) ------------------------------
def test_the_softmax_jacobian_has_one_symbol():
    """J is the softmax's Jacobian; nabla is kept for gradients of scalar functions, so its row names no Jacobian."""
    rows = [sym for sym, code in ROWS if "softmax_jacobian(" in code]
    assert rows == ["$J$"], f"rows naming attn.derivatives.softmax_jacobian: {rows}"
    nabla = next(line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| $\\nabla$ |"))
    assert "scalar function" in nabla and "Jacobian" in nabla and "not $\\nabla$" in nabla


def test_the_head_number_is_told_apart_from_the_papers_alignment_subscript():
    """W_a (Luong's score matrix, a for "alignment") and W_{Q,a} (head a) share a letter; the page says which is which
    where it defines each."""
    text = PAGE.read_text(encoding="utf-8")
    head_row = next(line for line in text.splitlines() if line.startswith("| $W_{Q,a}$"))
    assert "Luong" in head_row and "$W_a$" in head_row
    papers = text[text.index("**Symbols of the papers.**"):text.index("**Counting operations.**")]
    assert "not an index" in papers and "$W_{Q,a}$" in papers
    # any other page that writes both says the same
    for page in PAGES:
        spans = prose_math(page.read_text(encoding="utf-8"))
        if any(re.search(r"W_a(?![\w}])", s) for s in spans) and any("W_{Q,a}" in s for s in spans):
            prose = " ".join(page.read_text(encoding="utf-8").split())
            assert "not the *alignment*" in prose or "not an index" in prose, page.name


def test_c_is_a_factor_of_scores_as_the_propositions_use_it():
    """Propositions 1 and 2 scale the query, or stretch W_Q, by c >= 0 (c = 0 included): the row says so."""
    row = next(line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| $c$ |"))
    assert "\\ge 0" in row and "prop-weighted-average" in row and "prop-three-projections" in row
    prop1 = (ROOT / "chapters" / "prop1-weighted-average.md").read_text(encoding="utf-8")
    assert "$c \\ge 0$" in prop1 and "$c = 0$" in prop1


# Proposition 3 to 5, the score-matrix page and the apparatus (their reader's round s2): a score is s = q·k/√d_k,
# as the notation page defines it, so the raw dot product q·k is never called a score (it was divided by √d_k
# "twice"); and the centred dot is the dot product of two vectors, never a product of matrices.
# Found first on those pages, and checked on every page of the book since.
S2_PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])
MATRIX_CDOT = re.compile(r"\\cdot\s*(?:[A-Z](?![a-z])(?!_\{\w\\cdot\})|\\(?:Big|big)?\)|\\operatorname)|(?:\\Big\)|\\big\)|\\right\))\s*\\cdot|\\\\\s*&?\s*(?:\\q?quad)?\s*\\cdot")


def s2_misuses(text: str) -> list[str]:
    prose = CODE_CELL.sub("\n", text)
    found = [f"the raw dot product called a score: {m!r}" for m in raw_scores(prose)]
    found += [f"a centred dot between matrices: {span[:90]!r}" for span in prose_math(text) if MATRIX_CDOT.search(span)]
    return found


@pytest.mark.parametrize("page", S2_PAGES, ids=[p.name for p in S2_PAGES])
def test_scores_and_dots_mean_one_thing(page):
    found = s2_misuses(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}:\n" + "\n".join(found)


def test_the_score_and_dot_rules_catch_each_misuse():
    assert s2_misuses("then $P\\,W P^\\top \\cdot PV = P\\,(WV)$ because")
    assert not s2_misuses("$\\beta_j = D_{j\\cdot}\\cdot D_{r\\cdot}$, the dot product of two rows")
    assert not s2_misuses("By hand: divide the scores by each temperature, exponentiate and normalise.")
    assert s2_misuses("Scaled dot-product attention divides every score by $\\sqrt{d_k}$.")
    assert s2_misuses("Leaving the divisor out means $\\tau = 1$ on scores whose spread is $\\sqrt{d_k}$.")
    assert s2_misuses("print the raw scores above")
    assert s2_misuses("$$\\operatorname{softmax}\\!\\Big(\\frac{QK^\\top}{\\sqrt{d_k}}\\Big)\\\\ &\\qquad\\cdot X W_V$$")
    assert s2_misuses("then $P\\,W P^\\top \\cdot PV = P\\,(WV)$")
    assert not s2_misuses("the dot products $q\\cdot k_j$ and the scores $s_j = q\\cdot k_j/\\sqrt{d_k}$")
    assert not s2_misuses("the dot products $x_iW_Q\\cdot x_jW_K$ of two tokens")


def test_the_largest_logit_rule_catches_m_and_a_bare_star():
    for bad in (r"$w \approx e_m$", r"let $z_*$ be the largest logit", r"$\sum_{j\ne *} e^{z_j}$"):
        assert misuses(bad), bad
    for good in (r"$w \approx e_{j^*}$", r"$\sum_{j\ne j^*} e^{z_j - z_{j^*}}$", r"$m = \max_j x_j$", r"$w^*$"):
        assert not misuses(good), good


# -- letters a page may not reuse for something else (reader t2, findings 4, 5 and 6) ------------------------------
# A row of W is W_{i.} (as X_{t.}, E_{t.}): w_j is an entry of one row, so w_i V writes an entry where a row is meant.
# D is the direction of a perturbation W_V + eps D, and h the number of heads: a recurrence's state and its tanh
# derivative take local letters (rho_t, Lambda_t on Proposition 5's page). The papers' page quotes Luong et al.'s
# h_t, a paper's own letter, which the notation page allows there.
ROW_AS_ENTRY = re.compile(r"(?<![\\\w{])w_\{?[a-z]\}?\s*V(?![\w_])")
D_INDEXED = re.compile(r"(?<![\\\w{])D_\{?(?:[tT]|\d)(?![\w])")
H_STATE = re.compile(r"(?<![\\\w{])h_(?:\{?[tT](?![\w])|\{t\s*[-+])")
PAPERS_PAGE = ROOT / "chapters" / "practice-papers.md"


def reused_letters(text: str, papers: bool = False) -> list[str]:
    found = []
    for span in prose_math(text):
        if ROW_AS_ENTRY.search(span):
            found.append(f"a row of W is W_{{i\\cdot}}, not w_i: {span[:80]!r}")
        if D_INDEXED.search(span):
            found.append(f"D is a perturbation's direction, not an indexed matrix D_t: {span[:80]!r}")
        if not papers and H_STATE.search(span):
            found.append(f"h is the number of heads, not a state h_t: {span[:80]!r}")
    # a hatted sigma reads as an estimate of the sigma on the same page
    math = "".join(prose_math(text))
    if re.search(r"\\hat\s*\\sigma", math) and re.search(r"(?<!\\hat)(?<!\\hat )\\sigma(?![a-zA-Z])", math.replace(r"\hat\sigma", "")):
        found.append("a page writes a sample variance as \\hat\\sigma^2 and a different variance as \\sigma^2")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_page_does_not_reuse_the_tables_letters(page):
    found = reused_letters(page.read_text(encoding="utf-8"), papers=page == PAPERS_PAGE)
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.parametrize("bad", [
    r"row $i$ of the output is $w_iV = \sum_j w_{ij}v_j$",
    r"$D_t = \operatorname{diag}(1 - r_t^2)$", r"$F\,D_1\,(U D_2)$",
    r"$h_t = \tanh(h_{t-1}U + x_tF)$",
    r"a sample variance $\hat\sigma^2$ and entries of variance $\sigma^2$",
])
def test_the_reused_letter_rules_catch_each_misuse(bad):
    assert reused_letters(f"Prose {bad} prose.\n")


@pytest.mark.parametrize("good", [
    r"$W_{i\cdot}V = \sum_j w_{ij}v_j$", r"$W_V + \varepsilon D$", r"$\Lambda_t = \operatorname{diag}(1 - r_t^2)$",
    r"$d_{\text{model}}\times hd_k$", r"a sample variance $\hat v$ and entries of variance $\sigma^2$",
])
def test_the_reused_letter_rules_pass_the_notation(good):
    assert not reused_letters(f"Prose {good} prose.\n")


# The code keeps the table's letters too: h is the number of heads (split_heads(Q, h)), so a finite-difference step
# is `step` or `eps`, not `h` (reader t2, finding 5: Proposition 5's page used h for both a step and a state).
H_AS_STEP = re.compile(r"\bh\s*=\s*1e-|\(2\s*\*\s*h\)|[+-]\s*h\s*\*\s*e")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_code_does_not_call_a_finite_difference_step_h(page):
    rel = str(page.relative_to(ROOT))
    code = "\n".join(m.group(0) for m in CODE_CELL.finditer(page.read_text(encoding="utf-8")))
    found = [line.strip() for line in code.splitlines() if H_AS_STEP.search(line)]
    assert not found, f"{rel}: a finite-difference step named h (the number of heads):\n" + "\n".join(found)


def test_the_step_rule_catches_h():
    assert H_AS_STEP.search("h = 1e-6") and H_AS_STEP.search("(f(x + h * e) - f(x - h * e)) / (2 * h)")
    assert not H_AS_STEP.search("Q_heads = attn.split_heads(Q, h)") and not H_AS_STEP.search("step = 1e-6")
