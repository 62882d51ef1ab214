"""Claims of the mathematics and practice pages that an independent read found stated too narrowly or checked
vacuously, each kept true here for more than the one case the page draws.

- Masking (mathematics-attention): overwriting, row by row, every key and value a query may not read leaves
  that query's output bit for bit unchanged; the same check fails on implementations that let masked keys in.
- The direct reshape (practice-build): each token fills h consecutive (head, row) slots; with the matching
  wrong merge the layer reads h diagonal blocks of T/h tokens; with the correct merge it reads the future.
  True for every h that divides T, not only the h = 2 the page draws.
  Why the matched wrong pair reads no future token, for every T and h: row r of head a holds a piece of token
  floor((aT + r)/h), which never decreases down a head, and the wrong merge builds output row t from the slots
  holding token t's pieces.
- Page rules: book machinery (``attn.book_index``) runs in hidden cells; formulas count heads from 1, as they
  count tokens (the notation page's convention; code counts from 0 and the prose says so where it names a code
  index).
- Proposition 1's centre of mass (prop1-weighted-average): as the query grows the best key's weight never
  falls, but the output need not approach its value steadily, and can start on it; a corner of the hull is
  returned almost exactly only with almost all the mass, a value inside the hull by a spread of weights; a
  mask breaks the invariance under shuffling unless its columns are shuffled too.
- Proposition 2 (prop2-three-projections): the weights see W_Q and W_K through W_Q W_Kᵀ only for a fixed head
  width; two factorisations of one W_QK with different d_k give different weights.
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


@pytest.mark.parametrize("T, h", [(4, 2), (5, 2), (6, 4), (7, 3), (9, 2)])
def test_why_the_matched_wrong_pair_reads_no_future_token(T, h):
    # Not only when h divides T: the page's reason holds for any T and h.
    d_k = 2
    token_of = np.repeat(np.arange(T)[:, None], h * d_k, axis=1)       # each entry holds its token's number
    slot_token = split_wrong(token_of, h)[:, :, 0]
    a, r = np.indices((h, T))
    np.testing.assert_array_equal(slot_token, (a * T + r) // h)       # floor((aT + r)/h)
    assert (np.diff(slot_token, axis=1) >= 0).all()                   # never decreasing down a head
    np.testing.assert_array_equal(merge_wrong(split_wrong(token_of, h)), token_of)
    rng = np.random.default_rng(T * 10 + h)
    X = rng.normal(size=(T, h * d_k))
    Ws = [rng.normal(size=(h * d_k, h * d_k)) / np.sqrt(h * d_k) for _ in range(4)]
    t, s = np.indices((T, T))
    assert not (dependencies(X, Ws, h, split_wrong, merge_wrong, rng) & (s > t)).any()


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


ZERO_BASED_HEADS = re.compile(r"\\text\{head\}_0\b|\\text\{head\}_\{h\s*-\s*1\}|W_\{[QKV],\s*0\}"
                              r"|\$a = 0, \\dots, h\s*-\s*1\$|counter \$0, \\dots, h\s*-\s*1\$")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_formulas_count_heads_from_one(page):
    # The notation page: formulas count tokens, queries, keys and heads from 1 (head_1, ..., head_h, W_{Q,a}
    # for a = 1, ..., h); code counts from 0, and the prose says "counting from 0" where it names a code index.
    assert ZERO_BASED_HEADS.findall(page.read_text()) == []


# ---------------------------------------------------------------- Proposition 1: the centre of mass
def _random_problem(rng, T_k=5, d_k=3, d_v=2):
    return rng.normal(size=(1, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))


@pytest.mark.parametrize("seed", range(20))
def test_the_best_keys_weight_never_falls_as_the_query_grows(seed):
    q, K, V = _random_problem(np.random.default_rng(seed))
    best = int(np.argmax(attn.scores(q, K)))
    w_best = [attn.attention(c * q, K, V).weights[0, best] for c in np.linspace(0, 20, 201)]
    assert all(a <= b + 1e-15 for a, b in zip(w_best, w_best[1:]))
    s = np.sort(attn.scores(q, K)[0])
    assert w_best[-1] >= 1 - (len(s) - 1) * np.exp(-20 * (s[-1] - s[-2])) - 1e-12   # and tends to 1


def test_the_output_need_not_approach_the_best_value_steadily():
    """The page's line example: v1 = (0, 0) between v2 = (1, 0) and v3 = (-1, 0), scores 2c, c, 0."""
    q, K = np.array([[1.0]]), np.array([[2.0], [1.0], [0.0]])
    V = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    dist = [float(np.linalg.norm(attn.attention(c * q, K, V).output[0] - V[0])) for c in (0, 0.5, 1, 2, 4, 30)]
    assert dist[0] == 0.0                          # at c = 0 the output is v1 exactly: not only in the limit
    assert dist[2] > dist[1] > dist[0] and dist[3] < dist[2] and dist[-1] < 1e-9   # away first, then back


@pytest.mark.parametrize("seed", range(10))
def test_a_weight_other_than_the_best_grows_while_its_score_is_above_the_weighted_mean(seed):
    """The page: the other weights do not shrink in step; one scoring above the weighted mean score grows for a
    while (dw_j/dc = w_j (s_j - sum_l w_l s_l))."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=6)
    for c in (0.0, 0.3, 1.0):
        w, h = attn.softmax(c * s), 1e-6
        slope = (attn.softmax((c + h) * s) - attn.softmax((c - h) * s)) / (2 * h)
        np.testing.assert_allclose(slope, w * (s - w @ s), atol=1e-8)
    # scores 3, 2, -5: the mean is 0, so the second key's weight grows at first, then falls to 0
    w2 = [attn.softmax(c * np.array([3.0, 2.0, -5.0]))[1] for c in np.linspace(0, 10, 101)]
    peak = int(np.argmax(w2))
    assert 0 < peak < 100 and w2[peak] > w2[0] and w2[-1] < 1e-4


def test_the_line_example_drifts_towards_v2_while_w2_falls():
    """Why the output moves away (the page's reason, s1 finding 1): not weight gained by v2, since w2 = u/(u² + u + 1)
    with u = e^c never rises for c >= 0, but w3 falling faster than w2 while the output (w2 - w3, 0) moves out."""
    q, K = np.array([[1.0]]), np.array([[2.0], [1.0], [0.0]])
    cs = np.linspace(0, 8, 801)
    W = np.array([attn.attention(c * q, K, np.eye(3)).weights[0] for c in cs])
    u = np.exp(cs)
    np.testing.assert_allclose(W[:, 1], u / (u**2 + u + 1), rtol=1e-12)
    assert (np.diff(W[:, 1]) <= 1e-16).all() and (np.diff(W[:, 2]) < 0).all() and (np.diff(W[:, 0]) > 0).all()
    x = W[:, 1] - W[:, 2]                          # the output's first coordinate, its distance from v1
    peak = int(np.argmax(x))
    assert 0 < peak < len(cs) - 1
    drop2, drop3 = -np.diff(W[:, 1]), -np.diff(W[:, 2])
    assert (drop3[:peak] > drop2[:peak]).all() and (drop2[peak:] > drop3[peak:]).all()


def _corner_and_gap(V, rng):
    """A corner of the values' hull (the furthest value along a random direction u) and its lead g along u."""
    u = rng.normal(size=V.shape[1])
    u /= np.linalg.norm(u)
    along = V @ u
    c = int(np.argmax(along))
    return c, float(along[c] - np.max(np.delete(along, c)))


@pytest.mark.parametrize("seed", range(20))
def test_a_corner_is_returned_almost_exactly_only_with_almost_all_the_mass(seed):
    """|o - v_c| >= (1 - w_c) g for a corner v_c that leads the other values by g along some direction."""
    rng = np.random.default_rng(seed)
    q, K, V = _random_problem(rng, T_k=6)
    c, g = _corner_and_gap(V, rng)
    for scale in (0.1, 1.0, 5.0, 30.0):
        o, w = attn.attention(scale * q, K, V)
        assert np.linalg.norm(o[0] - V[c]) >= (1 - w[0, c]) * g - 1e-12


def test_a_value_inside_the_hull_of_the_others_is_returned_by_a_spread_of_weights():
    V = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    w = np.array([0.2, 0.4, 0.4])
    np.testing.assert_allclose(w @ V, V[0], atol=1e-15)   # v1 exactly, with a fifth of the mass on it


@pytest.mark.parametrize("seed", range(10))
def test_a_mask_breaks_the_shuffle_unless_its_columns_move_with_the_pairs(seed):
    rng = np.random.default_rng(seed)
    T, d = 5, 3
    X = rng.normal(size=(T, d))
    mask = attn.causal_mask(T)
    perm = rng.permutation(T)
    while np.array_equal(perm, np.arange(T)):
        perm = rng.permutation(T)
    out = attn.attention(X, X, X, mask=mask).output
    pairs_only = attn.attention(X, X[perm], X[perm], mask=mask).output
    with_mask = attn.attention(X, X[perm], X[perm], mask=mask[:, perm]).output
    assert np.abs(pairs_only - out).max() > 1e-3
    np.testing.assert_allclose(with_mask, out, atol=1e-12)
    np.testing.assert_allclose(attn.attention(X, X[perm], X[perm]).output, attn.attention(X, X, X).output,
                               atol=1e-12)                                   # and without a mask, nothing moves


# ---------------------------------------------------------------- Proposition 2: W_QK and the head width
@pytest.mark.parametrize("seed", range(5))
def test_the_weights_see_the_head_width_as_well_as_W_QK(seed):
    rng = np.random.default_rng(seed)
    T, d_model, d_k = 5, 6, 4
    X, W_Q, W_K = rng.normal(size=(T, d_model)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k))
    W_V = rng.normal(size=(d_model, 3))
    zeros = np.zeros((d_model, d_k))
    W_Q2, W_K2 = np.hstack([W_Q, zeros]), np.hstack([W_K, zeros])
    np.testing.assert_array_equal(W_Q2 @ W_K2.T, W_Q @ W_K.T)                  # the same W_QK ...
    w, w2 = attn.self_attention(X, W_Q, W_K, W_V).weights, attn.self_attention(X, W_Q2, W_K2, W_V).weights
    assert np.abs(w - w2).max() > 1e-3                                           # ... other weights
    G = rng.normal(size=(d_k, d_k))
    w_G = attn.self_attention(X, W_Q @ G, W_K @ np.linalg.inv(G).T, W_V).weights  # the same W_QK and d_k
    np.testing.assert_allclose(w_G, w, atol=1e-10)
def test_the_head_rule_catches_zero_based_heads():
    assert ZERO_BASED_HEADS.findall(r"[\text{head}_0, \dots, \text{head}_{h-1}]")
    assert ZERO_BASED_HEADS.findall(r"a plain counter $0, \dots, h-1$") and ZERO_BASED_HEADS.findall(r"$W_{Q,0}$")
    assert not ZERO_BASED_HEADS.findall(r"[\text{head}_1, \dots, \text{head}_h]")
    assert not ZERO_BASED_HEADS.findall(r"head `a`, counting from 0, is `W_Q[:, a*d_k:(a+1)*d_k]`")


# ---------------------------------------------------------------- how the prose quotes a computed number
GLUED_AGREEMENT = re.compile(r"\b([A-Za-z_][\w\-]*)=agreement\(")
CODE_FENCE = re.compile(r"```\{code-cell\}.*?\n```", re.S)


def dangling_agreements(text: str) -> list[str]:
    """Glued agreement() words ("exactly", "to within 3e-16") standing where a noun is missing.

    The words are adverbial: "they agree exactly". After a possessive or a determiner ("the library's
    exactly", "with the exactly") the sentence has lost its noun.
    """
    names = set(GLUED_AGREEMENT.findall(text))
    prose = CODE_FENCE.sub("", text)
    found = []
    for name in names:
        for m in re.finditer(rf"(\S+)\s+\{{glue:text\}}`{re.escape(name)}`", prose):
            before = m.group(1).lower().strip("*_")
            if before.endswith(("'s", "’s")) or before in {"the", "a", "an", "its", "their", "of", "with"}:
                found.append(m.group(0))
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_an_agreement_is_said_of_a_noun(page):
    assert dangling_agreements(page.read_text(encoding="utf-8")) == []


def test_the_agreement_rule_catches_a_missing_noun():
    cell = "```{code-cell} ipython3\nglue_values(gap=agreement(d))\n```\n"
    assert dangling_agreements(cell + "and they agree with the library's {glue:text}`gap`.\n")
    assert not dangling_agreements(cell + "and they agree with the library's weights {glue:text}`gap`.\n")


# The practice pages (their reader's findings): a bound in the prose is an upper_bound()/agreement() string,
# never a number rounded to nearest ("to within 2e-16" of 2.2e-16 is false); a shown cell carries no assert or
# comment that only guards the prose (those sit in hidden cells); shown code binds no bare width d; and a section
# that names a row, token or head by its code index says that it counts from 0.
PRACTICE = sorted(ROOT.glob("chapters/practice*.md"))
BOUND_ROUNDED = re.compile(r"\b(?:within|below|under|at most|up to|less than|more than|at least)\s+"
                           r"\{glue:text\}`[\w\-]+:[^`]*`")
PROSE_GUARD = re.compile(r"#\s*[\"“']|#.*\b(?:as the (?:text|prose|page) says|the prose|the caption)\b", re.I)
BARE_D = re.compile(r"^(?! )(?:[\w ,]*, *)?d *(?:,[\w ,]*)?=(?!=)", re.M)   # top level: a helper's generic d may stay
CODE_INDEX = re.compile(r"\b(?:row|rows|token|tokens|query|key|head|position|entry|column) "
                        r"(?:\d+|\{glue:text\})", re.I)
CELL_BODY = re.compile(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```", re.S)
HIDDEN_TAG = re.compile(r"^:tags:\s*\[[^\]]*\b(?:remove-cell|remove-input|hide-input|hide-cell)\b", re.M)


def practice_faults(text: str) -> list[str]:
    found = [f"a rounded bound: {m.group(0)}" for m in BOUND_ROUNDED.finditer(text)]
    for m in CELL_BODY.finditer(text):
        body = m.group("body")
        if HIDDEN_TAG.search(body):
            continue
        found += [f"a prose guard in a shown cell: {line.strip()}" for line in body.splitlines()
                  if PROSE_GUARD.search(line)]
        found += [f"a bare width d in shown code: {b.group(0)}" for b in BARE_D.finditer(body)]
    for section in re.split(r"^## ", CODE_FENCE.sub("", text), flags=re.M)[1:]:
        prose = re.sub(r"\$[^$]*\$|`[^`{]*`(?!`)", "", section)
        if CODE_INDEX.search(prose) and "from 0" not in section:
            found.append(f"section {section.splitlines()[0]!r} names {CODE_INDEX.search(prose).group(0)!r} "
                         "without saying it counts from 0")
    return found


@pytest.mark.parametrize("page", PRACTICE, ids=[p.name for p in PRACTICE])
def test_practice_pages_keep_their_readers_rules(page):
    found = practice_faults(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}:\n" + "\n".join(found)


def test_the_practice_rules_catch_each_fault():
    assert practice_faults("## 1. A\n\nThey agree to within {glue:text}`gap:.0e`.\n")
    assert practice_faults("## 1. A\n\n```{code-cell} ipython3\n# as the text says\nassert x\n```\n")
    assert practice_faults("## 1. A\n\n```{code-cell} ipython3\nT, d = 4, 3\n```\n")
    assert practice_faults("## 1. A\n\nRow 0 of the matrix is empty.\n")
    assert not practice_faults("## 1. A\n\nCounting from 0, row 0 is empty; they agree {glue:text}`gap`.\n"
                               "```{code-cell} ipython3\n:tags: [remove-cell]\n\n# as the text says\n```\n")
    assert not practice_faults("## 1. A\n\n```{code-cell} ipython3\nT, d_k = 4, 3\ndef merge(H):\n    h, T, d = H.shape\n```\n")


# ---------------------------------------------------------------- the basics page and the intro (reader s1)
# The basics page promises that no definition leans on a word defined later (finding 6: the similarity's definition
# named "scaled dot-product attention", five definitions on); the cosine's scores lie in [-1, 1], which bounds the
# ratio of any two weights by e^2 at tau = 1 but does not keep the softmax close to uniform (finding 5); the intro
# promises a check for every result, not for every statement (finding 16).
BASICS = ROOT / "chapters" / "basics.md"
DEFINITION = re.compile(r"^```\{prf:definition\} (?P<title>[^\n]+)\n:label: (?P<label>[\w\-]+)\n(?P<body>.*?)^```$",
                        re.S | re.M)


def definitions_using_later_words(text: str) -> list[str]:
    defs = [(m.group("title").strip().lower(), m.group("body")) for m in DEFINITION.finditer(text)]
    found = []
    for i, (title, body) in enumerate(defs):
        words = re.sub(r"\$[^$]*\$", "", body).lower()
        for later, _ in defs[i + 1:]:
            # a compound defined earlier ("attention score") is its own word, not a use of "attention"
            spans = [m for m in re.finditer(rf"(?<![\w-]){re.escape(later)}(?![\w-])", words)
                     if not any(words[m.start():].startswith(e) for e, _ in defs[:i + 1] if e.startswith(later))]
            if spans:
                found.append(f"{title!r} uses {later!r}, defined later")
    return found


def test_no_basics_definition_leans_on_a_later_word():
    text = BASICS.read_text(encoding="utf-8")
    assert len(DEFINITION.findall(text)) >= 11
    assert definitions_using_later_words(text) == []


def test_the_later_word_rule_catches_a_forward_reference():
    early = "```{prf:definition} Similarity\n:label: a\n\nScaled dot-product attention uses the dot product.\n```\n"
    late = "```{prf:definition} Scaled dot-product attention\n:label: b\n\nIt is softmax(QK)V.\n```\n"
    assert definitions_using_later_words(early + late)
    assert not definitions_using_later_words(early.replace("Scaled dot-product attention uses", "We use") + late)


@pytest.mark.parametrize("seed", range(20))
def test_cosine_scores_bound_the_ratio_of_weights_not_their_spread(seed):
    rng = np.random.default_rng(seed)
    T_k = int(rng.integers(2, 50))
    q, K = rng.normal(size=(1, 6)), rng.normal(size=(T_k, 6))
    w = attn.softmax(attn.cosine_similarity(q, K)[0])
    assert w.max() / w.min() <= np.e**2 * (1 + 1e-12) and w.max() <= np.e**2 / (np.e**2 + T_k - 1) * (1 + 1e-12)
    # and yet far from uniform when a key points at the query and another away from it
    w2 = attn.softmax(np.array([1.0, -1.0]))
    assert w2[0] > 0.85


def test_the_intro_promises_a_check_for_every_result_not_every_statement():
    intro = " ".join((ROOT / "intro.md").read_text(encoding="utf-8").split())
    assert "Every result is followed by a computation that checks it" in intro
    assert "Every statement" not in intro


# ---------------------------------------------------------------- where position enters
# "A mask is the one way position can enter" is false as a general statement: a positional encoding added to X
# makes the queries and keys depend on position, and relative-position biases add to the scores (reader s1,
# finding 4). A sentence that makes a mask the only thing reading the index says that it speaks of the attention
# operation, or its paragraph says how position can still come in through a positional encoding.
MASK_ONLY = re.compile(r"[^.]*\bmask[^.]{0,100}?\b(?:the one way|the only way|the one thing|the only thing)\b[^.]*",
                       re.I)


def mask_only_claims(text: str) -> list[str]:
    found = []
    for para in re.split(r"\n\s*\n", CODE_FENCE.sub("", text)):
        flat = " ".join(para.split())
        for m in MASK_ONLY.finditer(flat):
            if "operation" not in m.group(0) and "positional" not in flat:
                found.append(m.group(0).strip()[:120])
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_mask_is_the_only_reader_of_positions_only_inside_the_operation(page):
    assert mask_only_claims(page.read_text(encoding="utf-8")) == []


def test_the_mask_rule_catches_the_general_claim():
    assert mask_only_claims("(A mask is the one way position can enter: a causal mask ...)\n")
    assert not mask_only_claims("Inside the attention operation, a mask is the only thing that reads the index.\n")
    assert not mask_only_claims("A mask is the one way position can enter, unless a positional encoding is added.\n")


def test_a_positional_encoding_brings_position_into_the_weights():
    """Two tokens with the same content get the same weight row without an encoding, different rows with one."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=4)
    X = np.vstack([x, x, rng.normal(size=(3, 4))])            # tokens 1 and 2 identical
    W_Q, W_K, W_V = rng.normal(size=(3, 4, 4))
    W = attn.self_attention(X, W_Q, W_K, W_V).weights
    assert np.array_equal(W[0], W[1])
    W_pos = attn.self_attention(X + attn.sinusoidal_encoding(5, 4), W_Q, W_K, W_V).weights
    assert not np.allclose(W_pos[0], W_pos[1])


# ---------------------------------------------------------------- the exercise index
def test_the_exercise_index_names_each_item_once():
    # Each page's title starts with its item's id ("II.3.B01 Attention on three tokens, by hand"), and {ref}
    # shows that title: a line that also writes the id shows it twice.
    titles = {}
    for page in (ROOT / "exercises").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        label = re.search(r"^\(([\w\-]+)\)=\n# (II\.3\.[BVE]\d\d)\b", text, re.M)
        if label:
            titles[label.group(1)] = label.group(2)
    assert len(titles) >= 19
    index = (ROOT / "exercises" / "index.md").read_text(encoding="utf-8")
    for line in index.splitlines():
        for label in re.findall(r"\{ref\}`([\w\-]+)`", line):
            item = titles[label]
            shown = re.sub(rf"\{{ref\}}`{label}`", item, line)
            assert shown.count(item) == 1, f"{item} twice: {line}"
    listed = set(re.findall(r"\{ref\}`([\w\-]+)`", index))
    assert listed == set(titles), set(titles) ^ listed


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

    from book import code_cell_trees

    found = []
    for tree in code_cell_trees(text):
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


def test_proposition_3s_title_claims_only_what_the_page_proves():
    """Reader t1, finding 4: the title said the divisor "stops the softmax from saturating", which the overview
    denies (trained queries and keys can still saturate it). The page proves that the divisor keeps the scores of
    random queries and keys at unit variance whatever d_k, and the title (also the sidebar's, the strands table's
    and Proposition 2's Next link) says that much and no more."""
    page = (ROOT / "chapters" / "prop3-scaling.md").read_text(encoding="utf-8")
    title = next(line for line in page.splitlines() if line.startswith("# "))
    assert not re.search(r"\b(?:stops?|prevents?|avoids?|keeps?\b[^.]*\bfrom)\b[^.]*saturat", title, re.I), title
    assert "unit variance" in title and "random" in title, title
    overview = (ROOT / "chapters" / "overview.md").read_text(encoding="utf-8")
    assert "does not stop trained queries and keys" in overview   # the caveat the title must not contradict


# Reader t2, findings 11 and 13: "the query of one token and the key of another are independent" holds only for
# distinct, independent random tokens and untied projections (W_K drawn independently of W_Q): for one word met
# twice, or W_Q = W_K, Proposition 3's own check gives a larger variance. Wherever a page says it, the sentence
# names both conditions.
ANOTHER_TOKEN = re.compile(r"key (?:\$k\$ )?of (?:another|a distinct)\b(?P<rest>[^.]{0,160})", re.S)


def independence_claims_missing_a_condition(text: str) -> list[str]:
    prose = " ".join(text.split())
    found = []
    for m in ANOTHER_TOKEN.finditer(prose):
        before = prose[max(0, m.start() - 400):m.start()]
        sentence = before[before.rfind(". ") + 1:] + m.group(0)
        untied = re.search(r"untied|drawn independently|independently\s+drawn", sentence)
        token_words = re.split(r"\btoken\b|\bare\b", m.group("rest"))[0]   # what qualifies the other token
        if "independent" not in token_words or not untied:
            found.append(sentence[-200:])
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_query_and_another_tokens_key_are_independent_only_under_both_conditions(page):
    found = independence_claims_missing_a_condition(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)


def test_the_independence_rule_catches_the_old_sentences():
    old_apparatus = ("which is what a freshly initialised layer gives for the query of one token and the key of another "
                     "({prf:ref}`prop-scaling`).")
    old_score = ("At initialisation with untied projections, the query of one token and the key of another are "
                 "independent, each of mean 0.")
    assert independence_claims_missing_a_condition(old_apparatus)
    assert independence_claims_missing_a_condition(old_score)
