"""The notation page and the code agree: every name in its "in the code" column exists, with those parameters."""
import importlib
import inspect
import re
import typing
from pathlib import Path

import numpy as np
import pytest

import attn

PAGE = Path(__file__).resolve().parents[2] / "chapters" / "notation.md"

# The symbols the chapter's notation list names (seed page), plus the ones this book adds.
REQUIRED_SYMBOLS = [r"$Q$", r"$K$", r"$V$", r"$d_k$", r"$d_v$", r"$T$", r"$T_q$", r"$T_k$", r"$q$", r"$k$",
                    r"$\tau$", r"$\operatorname{softmax}$", r"$\operatorname{Var}$", r"$\nabla$", r"$S$", r"$W$",
                    r"$W_Q$", r"$W_K$", r"$W_V$", r"$M$"]
NO_CODE: set[str] = set()  # symbols allowed to have no checkable name in the code column

SNIPPET = re.compile(r"`([^`]+)`")
CALL = re.compile(r"^(attn|np)((?:\.\w+)+)(?:\(([^()]*)\))?((?:\.\w+)*)$")


def table_rows():
    """(symbol cell, code cell) for each row of the page's symbol table."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| symbol | shape | meaning | in the code |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"a notation row must have 4 cells: {line}"
        rows.append((cells[0], cells[3]))
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
# The notation page reserves: S, s_ij for scores; W, w_ij, w for weights (never A, p or s); Attn(Q, K, V) for
# the attention map (not A); d_model, d'_model for the widths of token sequences (not a bare d or d' in a
# shape). Each rule below is one of those reservations, written as a pattern that a misuse matches inside
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
    ("the letter A is not a matrix of the book (the weights are W, the attention map Attn)",
     re.compile(r"(?<![\\\w{])A(?![\w}])")),
    ("a token width is d_model or d'_model, not a bare d' ",
     re.compile(r"(?<![\\\w])d(?:'|\^\\prime)(?!_)")),
    ("a token width in a shape is d_model, not a bare d (a bare d is for generic vectors, as in R^d)",
     re.compile(r"\\mathbb\{R\}\^\{[^{}]*\\times\s*d(?![_\w'])|\\mathbb\{R\}\^\{(?<![\\\w])d\s*\\times")),
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
])
def test_the_rules_catch_each_misuse(bad):
    assert misuses(f"Some prose {bad} more prose.\n"), f"no rule caught {bad}"


@pytest.mark.parametrize("good", [
    r"$W = \operatorname{softmax}(S/\tau)$", r"$w = \operatorname{softmax}(x/\tau)$",
    r"$J = \operatorname{diag}(w) - ww^\top$", r"$\operatorname{Attn}(PQ, K, V)$",
    r"$W_K\in\mathbb{R}^{d'_{\text{model}}\times d_k}$", r"$u, v \in \mathbb{R}^d$",
    r"$O = WV$ with $s_{ij} = q_i\cdot k_j/\sqrt{d_k}$", r"$\mathcal{A}$",
])
def test_the_rules_pass_the_notation(good):
    assert not misuses(f"Some prose {good} more prose.\n"), f"a rule rejects the book's own notation: {good}"


def test_inline_math_over_a_line_break_is_checked():
    assert misuses("The Jacobian $J = \\operatorname{diag}(s)\n - ss^\\top$ of the weights.\n")


def test_code_is_not_checked():
    page = "Prose.\n```{code-cell} ipython3\nA = attn.softmax(S)  # $A = \\operatorname{softmax}(S)$\n```\n"
    assert not misuses(page)
