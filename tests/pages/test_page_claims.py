"""Claims of the mathematics and practice pages that an independent read found stated too narrowly or checked
vacuously, each kept true here for more than the one case the page draws.

- Masking (mathematics-attention): overwriting, row by row, every key and value a query may not read leaves
  that query's output bit for bit unchanged; the same check fails on implementations that let masked keys in.
- The direct reshape (practice-build): each token fills h consecutive (head, row) slots; with the matching
  wrong merge the layer reads h diagonal blocks of T/h tokens; with the correct merge it reads the future.
  True for every h that divides T, not only the h = 2 the page draws.
- Page rules: book machinery (``attn.book_index``) runs in hidden cells; heads are counted from 0, as in code.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import attn

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), ROOT / "intro.md"])


# ---------------------------------------------------------------- masking, row by row
def forbidden_keys_ignored(attend, Q, K, V, mask) -> bool:
    """The page's check: for each query i, keys pointing at q_i (or away) and huge values where mask[i] is False."""
    out = attend(Q, K, V, mask)
    for i in range(Q.shape[0]):
        for sign in (1.0, -1.0):
            K_junk, V_junk = K.copy(), V.copy()
            K_junk[~mask[i]] = sign * 1e3 * Q[i]
            V_junk[~mask[i]] = 1e6
            if not np.array_equal(attend(Q, K_junk, V_junk, mask)[i], out[i]):
                return False
    return True


def _attn(Q, K, V, mask):
    return attn.attention(Q, K, V, mask=mask).output


def _mask_ignored(Q, K, V, mask):
    return attn.attention(Q, K, V).output


def _finite_penalty(Q, K, V, mask, L=30.0):
    S = attn.scores(Q, K) + np.where(mask, 0.0, -L)
    return attn.softmax(S) @ V


def _zeroed_after_softmax(Q, K, V, mask):
    """Zeroes the forbidden weights after an unmasked softmax: forbidden keys still set the denominator."""
    return (attn.softmax(attn.scores(Q, K)) * mask) @ V


def _random_masked_problem(seed):
    rng = np.random.default_rng(seed)
    T_q, T_k = 5, 7
    Q, K, V = rng.normal(size=(T_q, 4)), rng.normal(size=(T_k, 4)), rng.normal(size=(T_k, 3))
    mask = rng.random((T_q, T_k)) < 0.5
    for i in range(T_q):                                  # each row: at least one key readable, one forbidden
        readable, forbidden = rng.choice(T_k, 2, replace=False)
        mask[i, readable], mask[i, forbidden] = True, False
    return Q, K, V, mask


@pytest.mark.parametrize("seed", range(20))
def test_masking_check_passes_for_attn(seed):
    Q, K, V, mask = _random_masked_problem(seed)
    assert forbidden_keys_ignored(_attn, Q, K, V, mask)


@pytest.mark.parametrize("leaky", [_mask_ignored, _finite_penalty, _zeroed_after_softmax])
def test_masking_check_fails_when_masking_leaks(leaky):
    Q, K, V, mask = _random_masked_problem(0)
    assert not forbidden_keys_ignored(leaky, Q, K, V, mask)


# ---------------------------------------------------------------- the reshape that mixes tokens and heads
def split_right(M, h):
    T, D = M.shape
    return M.reshape(T, h, D // h).transpose(1, 0, 2)


def merge_right(H):
    h, T, d = H.shape
    return H.transpose(1, 0, 2).reshape(T, h * d)


def split_wrong(M, h):
    T, D = M.shape
    return M.reshape(h, T, D // h)


def merge_wrong(H):
    h, T, d = H.shape
    return H.reshape(T, h * d)


def mha_np(X, Ws, h, mask, split, merge):
    W_Q, W_K, W_V, W_O = Ws
    Q, K, V = split(X @ W_Q, h), split(X @ W_K, h), split(X @ W_V, h)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    S = np.where(mask, S, -np.inf)
    W = np.exp(S - S.max(axis=-1, keepdims=True))
    return merge((W / W.sum(axis=-1, keepdims=True)) @ V) @ W_O


def dependencies(X, Ws, h, split, merge, rng):
    T, d_model = X.shape
    causal = attn.causal_mask(T)
    base = mha_np(X, Ws, h, causal, split, merge)
    reads = np.zeros((T, T), dtype=bool)
    for s in range(T):
        X_edit = X.copy()
        X_edit[s] += rng.normal(size=d_model)
        reads[:, s] = np.abs(mha_np(X_edit, Ws, h, causal, split, merge) - base).max(axis=1) > 1e-9
    return reads


@pytest.mark.parametrize("T, h", [(4, 2), (6, 2), (6, 3), (8, 4), (9, 3)])
def test_direct_reshape_puts_each_token_in_h_consecutive_slots(T, h):
    d_k = 3
    X_lab = 100 * np.arange(T)[:, None] + np.arange(h * d_k)[None, :]   # entry 100 t + f
    slots = (split_wrong(X_lab, h)[:, :, 0] // 100).ravel()           # source token of each (head, row) slot
    np.testing.assert_array_equal(slots, np.repeat(np.arange(T), h))
    for a in range(h):                                                # head a holds tokens aT/h .. (a+1)T/h - 1
        assert set((split_wrong(X_lab, h)[a] // 100).ravel()) == set(range(a * T // h, (a + 1) * T // h))


@pytest.mark.parametrize("T, h", [(6, 2), (6, 3), (8, 4)])
def test_wrong_split_dependencies_for_any_h_dividing_T(T, h):
    rng = np.random.default_rng(T * 10 + h)
    d_model = 2 * h
    X = rng.normal(size=(T, d_model))
    Ws = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    t, s = np.indices((T, T))
    allowed = s <= t
    assert np.array_equal(dependencies(X, Ws, h, split_right, merge_right, rng), allowed)
    blocks = allowed & (s // (T // h) == t // (T // h))                # h lower triangles on the diagonal
    assert np.array_equal(dependencies(X, Ws, h, split_wrong, merge_wrong, rng), blocks)
    assert (dependencies(X, Ws, h, split_wrong, merge_right, rng) & ~allowed).any()   # reads the future


# ---------------------------------------------------------------- page rules
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
HIDDEN = re.compile(r"^:tags:\s*\[[^\]]*\b(remove-cell|remove-input|hide-input|hide-cell)\b", re.M)


def visible_book_machinery(text: str) -> list[str]:
    return [cell.split("\n")[0][:70] for cell in CELL.findall(text)
            if re.search(r"\bbook_index\.", cell) and not HIDDEN.search(cell)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_book_machinery_runs_in_hidden_cells(page):
    assert visible_book_machinery(page.read_text()) == []


def test_the_machinery_rule_catches_a_visible_cell():
    shown = "```{code-cell} ipython3\nlabels = book_index.find_labels()\n```\n"
    hidden = "```{code-cell} ipython3\n:tags: [remove-cell]\n\nlabels = book_index.find_labels()\n```\n"
    assert visible_book_machinery(shown) and not visible_book_machinery(hidden)


ONE_BASED_HEADS = re.compile(r"\\text\{head\}_1\b|\\text\{head\}_h\b|\\text\{head\}_\{h\}")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_heads_are_counted_from_zero(page):
    # Code and prose say "head 0" and slice columns a·d_k … (a+1)·d_k − 1: formulas count heads the same way.
    assert ONE_BASED_HEADS.findall(page.read_text()) == []


def test_the_head_rule_catches_one_based_heads():
    assert ONE_BASED_HEADS.findall(r"[\text{head}_1, \dots, \text{head}_h]")
    assert not ONE_BASED_HEADS.findall(r"[\text{head}_0, \dots, \text{head}_{h-1}]")


# ---------------------------------------------------------------- history in the order it happened
# Proposition 4's page once called the Neural Turing Machine "older" than attention in translation. Its arXiv
# version (1410.5401) is dated 20 October 2014, seven weeks after Bahdanau, Cho and Bengio (1409.0473, 1 September
# 2014). The page mentions the works in the order of their first versions, and the sentence that calls selective
# reading older than translation's attention names only works that came before it.
HISTORY = [  # (how the page names the work, date of its first arXiv version)
    ("Graves (2013", "2013-08-04"),                 # arXiv:1308.0850
    ("Mnih, Heess, Graves and Kavukcuoglu", "2014-06-24"),  # arXiv:1406.6247
    ("Bahdanau, Cho and\nBengio", "2014-09-01"),   # arXiv:1409.0473
    ("Neural Turing Machine", "2014-10-20"),        # arXiv:1410.5401
    ("Vaswani et al. (2017", "2017-06-12"),         # arXiv:1706.03762
]


def _normalise(text: str) -> str:
    return " ".join(text.split())


def test_prop4_history_is_told_in_order():
    text = _normalise((ROOT / "chapters" / "prop4-self-cross.md").read_text(encoding="utf-8"))
    where = [text.find(_normalise(name)) for name, _ in HISTORY]
    assert all(w >= 0 for w in where), dict(zip([n for n, _ in HISTORY], where))
    assert where == sorted(where), "the works are not mentioned in the order of their dates"
    older = text[text.index("Learned, selective reading is older"):text.index("In translation, the model of Bahdanau")]
    bahdanau = dict(HISTORY)["Bahdanau, Cho and\nBengio"]
    for name, date in HISTORY:
        if _normalise(name) in older:
            assert date < bahdanau, f"{name!r} ({date}) is called older than Bahdanau et al. ({bahdanau})"


# ---------------------------------------------------------------- a printout names what it prints
# Proposition 4's page printed the weights' shape as "scores (5, 7)": the two have the same shape, so nothing
# failed, but the scores are S and the weights W. A printed label "scores" must not introduce a weights variable.
PRINT_SCORES_OF_WEIGHTS = re.compile(r"\bscores?\b[^{\"]{0,12}\{(?:w|W)(?:_\w+|\b)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_printed_scores_are_scores(page):
    found = [line.strip() for line in page.read_text(encoding="utf-8").splitlines()
             if "print(" in line and PRINT_SCORES_OF_WEIGHTS.search(line)]
    assert not found, f"{page.relative_to(ROOT)}: a weights variable printed as scores:\n" + "\n".join(found)


def test_the_print_rule():
    assert PRINT_SCORES_OF_WEIGHTS.search('print(f"T_q = {T_q}: scores {w_c.shape}, output {out_c.shape}")')
    assert not PRINT_SCORES_OF_WEIGHTS.search('print(f"scores S {S_c.shape}, weights W {w_c.shape}")')


# ---------------------------------------------------------------- a printed result is computed
# The score-matrix page printed "rows 1 and 5 of S equal: True; columns equal: True": the Trues were typed in the
# f-string, not computed (asserts above kept them honest). A True or False in a print's literal text is a result
# typed by hand; a legend such as "(True = may read)" is not.
def typed_booleans(text: str) -> list[str]:
    import ast

    found = []
    for m in re.finditer(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```", text, re.S):
        body = "\n".join(line for line in m.group("body").splitlines()
                         if not line.startswith((":", "%", "!")) and line != "---")
        try:
            tree = ast.parse(body)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                for arg in node.args:
                    parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                    literal = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
                    if re.search(r"\b(?:True|False)\b(?!\s*=)", literal):
                        found.append(ast.unparse(node)[:100])
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_printed_booleans_are_computed(page):
    found = typed_booleans(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}: a result typed into a print:\n" + "\n".join(found)


def test_the_boolean_rule():
    typed = '```{code-cell} ipython3\nprint(f"rows {a + 1} and {b + 1} of S equal: True")\n```\n'
    computed = '```{code-cell} ipython3\nprint(f"rows equal: {np.array_equal(S[a], S[b])}")\n```\n'
    legend = '```{code-cell} ipython3\nprint("intended (True = may read):", M)\n```\n'
    assert typed_booleans(typed) and not typed_booleans(computed) and not typed_booleans(legend)
