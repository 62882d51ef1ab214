"""The claims of the Practice strand (chapters/practice-*.md), each as a unit test.

The naive implementations are written out here on purpose: they are the broken code the pages show.
"""
import re
import warnings

import numpy as np
import pytest

import attn


def attention_np(Q, K, V, mask=None, shift=True):
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    if shift:
        S = S - S.max(axis=-1, keepdims=True)
    W = np.exp(S)
    W = W / W.sum(axis=-1, keepdims=True)
    return W @ V, W


def jacobian_fro(w):
    J = w[:, :, None] * np.eye(w.shape[1]) - w[:, :, None] * w[:, None, :]
    return np.sqrt((J**2).sum(axis=(1, 2)))


# ---------------------------------------------------------------- 1. from scratch
def test_from_scratch_matches_attn():
    # practice-build §1: T_q and T_k drawn apart (cross-attention's rectangular case), random masks that leave
    # every row a key, and causal masks
    rng = np.random.default_rng(0)
    n_rect = 0
    for trial in range(150):
        T_q, T_k, d_k, d_v = rng.integers(1, 9, size=4)
        Q, K, V = rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))
        mask = [None, attn.causal_mask(T_k, T_k)[-T_q:] if T_q <= T_k else None, rng.random((T_q, T_k)) < 0.5][trial % 3]
        if mask is not None:
            mask[np.arange(T_q), rng.integers(0, T_k, size=T_q)] = True
        n_rect += T_q != T_k
        o1, w1 = attention_np(Q, K, V, mask)
        o2, w2 = attn.attention(Q, K, V, mask=mask)
        np.testing.assert_allclose(o1, o2, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-12)
    assert n_rect > 50


def test_a_row_with_no_key_has_no_weights_in_the_recipe():
    # practice-build §1, step 2: "every row must keep at least one key"
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = np.array([[True, False, False, False], [False] * 4])
    with pytest.warns(RuntimeWarning, match="invalid value"):
        _, w = attention_np(Q, K, V, mask)
    assert np.isclose(w[0].sum(), 1.0) and np.isnan(w[1]).all()


# ---------------------------------------------------------------- 3. no scale
def unscaled_and_scaled(d_k, seed=3, T_k=8, n=2000):
    rng = np.random.default_rng(seed)
    dots = (rng.standard_normal((n, 1, d_k)) * rng.standard_normal((n, T_k, d_k))).sum(-1)
    return dots, attn.softmax(dots), attn.softmax(dots / np.sqrt(d_k))


def test_unscaled_scores_saturate_and_kill_the_gradient():
    # The page's head width, 128: common in current models (64 in Vaswani et al.'s base model).
    d_k = 128
    dots, w_u, w_s = unscaled_and_scaled(d_k)
    assert 10.5 < dots.std() < 12.2  # ≈ √128 ≈ 11.3
    assert np.median(w_u.max(axis=1)) > 0.99  # a typical row is nearly one-hot
    assert 0.5 < np.mean(w_u.max(axis=1) > 0.99)  # the page's "typical row"
    assert np.median(w_s.max(axis=1)) < 0.6  # not saturated
    assert np.median(jacobian_fro(w_u)) < 0.1 * np.median(jacobian_fro(w_s))


def test_saturation_grows_with_the_head_width():
    ratios = []
    for d_k in (64, 128, 512):
        _, w_u, w_s = unscaled_and_scaled(d_k)
        ratios.append(np.median(jacobian_fro(w_s)) / np.median(jacobian_fro(w_u)))
    assert 1 < ratios[0] < ratios[1] < ratios[2]
    assert ratios[2] > 100 * ratios[0]  # "wider heads make it worse", by orders of magnitude


def backward_norms(d_k, seed=3, T_k=8, n=2000):
    """Median |dl/ds| and |dl/dq|, scaled and unscaled, for a standard normal upstream gradient dl/dw."""
    rng = np.random.default_rng(seed)
    q, K = rng.standard_normal((n, 1, d_k)), rng.standard_normal((n, T_k, d_k))
    dots = (q * K).sum(-1)
    g = rng.standard_normal((n, T_k))  # the page draws dl/dw after q and K, from the same generator
    out = {}
    for name, c in (("scaled", 1 / np.sqrt(d_k)), ("unscaled", 1.0)):
        w = attn.softmax(c * dots)
        g_s = w * g - w * (w * g).sum(1, keepdims=True)          # J g
        g_q = c * np.einsum("nkd,nk->nd", K, g_s)                # c Kᵀ (J g)
        out[name] = (np.median(np.linalg.norm(g_s, axis=1)), np.median(np.linalg.norm(g_q, axis=1)))
    return out


def test_without_the_scale_the_query_loses_far_less_gradient_than_the_scores():
    # The missing 1/sqrt(d_k) gives back sqrt(d_k) between the scores and the query (practice-break §3):
    # at d_k = 128 the scores lose tens of times, the query only a few; at 512 the query starves too.
    # The page reports each ratio as a range over five draws (seeds 3 to 7): the claims hold in every draw.
    for seed in range(3, 8):
        r = backward_norms(128, seed)
        s_ratio, q_ratio = r["scaled"][0] / r["unscaled"][0], r["scaled"][1] / r["unscaled"][1]
        assert s_ratio > 10 and 1 < q_ratio < 10
        assert 0.5 * np.sqrt(128) < s_ratio / q_ratio < 2 * np.sqrt(128)
        wide = backward_norms(512, seed)
        assert wide["scaled"][1] / wide["unscaled"][1] > 30 * q_ratio


def test_one_hot_softmax_has_zero_jacobian():
    w = np.array([[0.0, 1.0, 0.0]])
    assert jacobian_fro(w)[0] == 0.0


# ---------------------------------------------------------------- 4. empty row
def test_empty_row_naive_nan_attn_error_or_zero():
    rng = np.random.default_rng(4)
    T = 4
    Q, K, V = rng.normal(size=(T, 3)), rng.normal(size=(T, 3)), rng.normal(size=(T, 3))
    mask = attn.causal_mask(T) & np.array([False, True, True, True])[None, :]
    with pytest.warns(RuntimeWarning, match="invalid value"):
        out, _ = attention_np(Q, K, V, mask)
    assert np.isnan(out[0]).all() and np.isfinite(out[1:]).all()
    with pytest.warns(RuntimeWarning, match="invalid value"):
        out_noshift, _ = attention_np(Q, K, V, mask, shift=False)
    assert np.isnan(out_noshift[0]).all()
    with pytest.raises(ValueError, match=r"row\(s\) \[0\] may read no key"):
        attn.attention(Q, K, V, mask=mask)
    out_z, w_z = attn.attention(Q, K, V, mask=mask, empty_rows="zero")
    assert np.all(out_z[0] == 0) and np.all(w_z[0] == 0)
    np.testing.assert_allclose(out_z[1:], out[1:], rtol=1e-12)


# ---------------------------------------------------------------- 5. float16
def test_float16_overflow_threshold():
    threshold = np.log(np.finfo(np.float16).max)
    assert 11.0 < threshold < 11.1
    assert np.isfinite(np.exp(np.float16(11.0)))
    with pytest.warns(RuntimeWarning, match="overflow"):
        assert np.isinf(np.exp(np.float16(11.1)))


def test_float16_naive_softmax_nan_stable_survives():
    s = np.array([12.0, 10.0, 4.0], dtype=np.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = np.exp(s)
        naive = e / e.sum()
    assert {str(w.message) for w in caught} >= {"overflow encountered in exp", "invalid value encountered in divide"}
    assert np.isnan(naive[0]) and np.all(naive[1:] == 0)
    e = np.exp(s - s.max())
    stable = e / e.sum()
    exact = attn.softmax(s.astype(np.float64))
    assert stable.dtype == np.float16 and np.isfinite(stable).all()
    np.testing.assert_allclose(stable.astype(np.float64), exact, atol=2 * np.finfo(np.float16).eps)
    lib = attn.softmax(s)
    assert lib.dtype == np.float16
    np.testing.assert_allclose(lib.astype(np.float64), exact, atol=2 * np.finfo(np.float16).eps)


def test_attn_softmax_float16_weights_are_within_one_step_and_here_the_nearest():
    # practice-break §5: attn.softmax widens float16 to float32 and rounds the weights to float16 at the end, so
    # each is within one float16 step of the float64 answer; for the page's scores each is the nearest float16,
    # and the float16 max-shifted softmax is one float16 step off in one weight.
    s = np.array([12.0, 10.0, 4.0], dtype=np.float16)
    exact = attn.softmax(s.astype(np.float64))
    lib = attn.softmax(s)
    np.testing.assert_array_equal(lib, attn.softmax(s.astype(np.float32)).astype(np.float16))
    np.testing.assert_array_equal(lib, exact.astype(np.float16))
    e = np.exp(s - s.max())
    shifted = e / e.sum()
    assert np.flatnonzero(shifted != lib).tolist() == [1]
    assert shifted[1] - lib[1] == np.spacing(lib[1])


def test_rounding_twice_can_miss_the_nearest_float16_by_one_step():
    # practice-break §5: "nearest is usual but not guaranteed" (the reader's counterexample, and the page's count)
    s = np.array([-1.577, 1.782, -0.603], dtype=np.float16)
    lib, nearest = attn.softmax(s), attn.softmax(s.astype(np.float64)).astype(np.float16)
    assert lib[1] != nearest[1] and abs(int(lib.view(np.int16)[1]) - int(nearest.view(np.int16)[1])) == 1
    rows = (np.random.default_rng(12).normal(size=(20000, 3)) * 4).astype(np.float16)
    off = np.abs(attn.softmax(rows).view(np.int16).astype(int)
                 - attn.softmax(rows.astype(np.float64)).astype(np.float16).view(np.int16).astype(int))
    assert off.max() == 1 and 0 < (off > 0).any(axis=1).sum() < 200
    # the cause the page gives: each missed weight's exact value is on the near side of a float16 midpoint, and
    # its float32 result on that midpoint or past it; both happen in this draw
    r, j = np.nonzero(off)
    far = attn.softmax(rows)[r, j].astype(np.float64)
    exact = attn.softmax(rows.astype(np.float64))[r, j]
    near = exact.astype(np.float16).astype(np.float64)
    w32 = attn.softmax(rows.astype(np.float32))[r, j].astype(np.float64)
    mid, side = (far + near) / 2, np.sign(far - near)
    assert np.all(side * (exact - mid) < 0) and np.all(side * (w32 - mid) >= 0)
    assert (w32 == mid).any() and (side * (w32 - mid) > 0).any()


def test_the_overflow_threshold_is_named_before_it_is_used():
    # practice-break §5 once spoke of "the line" without saying which
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "chapters" / "practice-break.md").read_text(encoding="utf-8")
    section = text[text.index("## 5. Overflow in float16"):text.index("## 6.")]
    assert " the line" not in section
    defined = section.index("*overflow threshold*")
    assert "pf_threshold" in section[max(0, defined - 300):defined]
    assert all(m.start() > defined for m in re.finditer(r"(?<!\*)overflow threshold|above the threshold", section))


def test_the_max_shift_alone_keeps_float16_rows_finite():
    rng = np.random.default_rng(5)
    d_k, T_k, n = 64, 8, 5000
    raw = (rng.standard_normal((n, 1, d_k)) * rng.standard_normal((n, T_k, d_k))).sum(-1).astype(np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(raw) / np.exp(raw).sum(1, keepdims=True)
    e = np.exp(raw - raw.max(1, keepdims=True))
    assert np.isnan(naive).any(axis=1).mean() > 0.3
    assert np.isfinite(e / e.sum(1, keepdims=True)).all()


# ---------------------------------------------------------------- 6. polarity
def test_flipped_polarity_reads_only_the_future():
    rng = np.random.default_rng(6)
    T = 5
    Q, K, V = rng.normal(size=(T, 4)), rng.normal(size=(T, 4)), rng.normal(size=(T, 4))
    flipped = ~attn.causal_mask(T)
    with pytest.raises(ValueError, match=rf"row\(s\) \[{T - 1}\] may read no key"):
        attn.attention(Q, K, V, mask=flipped)
    _, w = attn.attention(Q, K, V, mask=flipped, empty_rows="zero")
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert np.all(w[~future] == 0)  # nothing on the past or the diagonal
    assert w[0, 0] == 0 and np.isclose(w[0, 1:].sum(), 1.0)
    assert np.all(w[T - 1] == 0)
    # The one-line test that catches it: weights above the diagonal must vanish.
    _, w_good = attn.attention(Q, K, V, mask=attn.causal_mask(T))
    assert np.all(w_good[future] == 0) and w[future].max() > 0


# ---------------------------------------------------------------- 7. causal shift
def causality_report(mask, seed=9):
    """(kind, detail): 'error' with the message, 'leaks' with (t, r) pairs (row t moved when token r > t was
    edited), or 'pass'."""
    T = mask.shape[0]
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=(T, 4)) for _ in range(3))
    try:
        base = attn.attention(Q, K, V, mask=mask).output
    except ValueError as err:
        return "error", str(err)
    leaks = []
    for r in range(T):
        Q2, K2, V2 = Q.copy(), K.copy(), V.copy()
        for copy in (Q2, K2, V2):
            copy[r] += 1.0
        moved = np.abs(attn.attention(Q2, K2, V2, mask=mask).output - base).max(axis=1) > 1e-12
        leaks += [(t, r) for t in range(r) if moved[t]]
    return ("leaks", leaks) if leaks else ("pass", None)


def test_causal_shift_caught():
    T = 8
    ones = np.ones((T, T), dtype=bool)
    assert causality_report(np.tril(ones)) == ("pass", None)
    kind, msg = causality_report(np.tril(ones, k=-1))
    assert kind == "error" and "row(s) [0]" in msg
    kind, leaks = causality_report(np.tril(ones, k=1))
    assert kind == "leaks" and leaks == [(t, t + 1) for t in range(T - 1)]
    np.testing.assert_array_equal(attn.causal_mask(T, T, offset=1), np.tril(ones, k=1))
    with pytest.raises(ValueError, match="offset must lie in"):
        attn.causal_mask(T, T, offset=-1)


def test_shifted_mask_lets_a_next_token_predictor_cheat():
    rng = np.random.default_rng(8)
    T, n_sym, beta = 12, 10, 8.0
    symbols = rng.integers(0, n_sym, size=T)
    X = np.concatenate([np.eye(n_sym)[symbols], np.eye(T)], axis=1)
    W_Q = np.zeros((n_sym + T, T))
    W_Q[n_sym:] = beta * np.eye(T, k=1)
    W_K = np.zeros((n_sym + T, T))
    W_K[n_sym:] = beta * np.eye(T)
    W_V = np.zeros((n_sym + T, n_sym))
    W_V[:n_sym] = np.eye(n_sym)
    peek = attn.self_attention(X, W_Q, W_K, W_V, mask=attn.causal_mask(T, T, offset=1)).output
    fair = attn.self_attention(X, W_Q, W_K, W_V, causal=True).output
    assert np.mean(peek.argmax(1)[:-1] == symbols[1:]) == 1.0
    assert np.mean(fair.argmax(1)[:-1] == symbols[1:]) < 0.5


# ---------------------------------------------------------------- 9. lookup
def test_lookup_layer_finds_the_entry_by_content():
    letters, n_let, n_dig = "ABCDE", 5, 10
    d_model = 2 * n_let + n_dig

    def embed(tokens):
        X = np.zeros((len(tokens), d_model))
        for t, tok in enumerate(tokens):
            if tok[0] == "?":
                X[t, n_let + n_dig + letters.index(tok[1])] = 1.0
            else:
                X[t, letters.index(tok[0])] = 1.0
                X[t, n_let + int(tok[1])] = 1.0
        return X

    W_Q = np.zeros((d_model, n_let))
    W_Q[n_let + n_dig:] = 4.0 * np.eye(n_let)
    W_K = np.zeros((d_model, n_let))
    W_K[:n_let] = 4.0 * np.eye(n_let)
    W_V = np.zeros((d_model, n_dig))
    W_V[n_let:n_let + n_dig] = np.eye(n_dig)
    rng = np.random.default_rng(11)
    for _ in range(100):
        digits = rng.integers(0, n_dig, size=n_let)
        entries = [f"{letters[k]}{digits[k]}" for k in rng.permutation(n_let)]
        asked = int(rng.integers(n_let))
        out, w = attn.self_attention(embed(entries + [f"?{letters[asked]}"]), W_Q, W_K, W_V, causal=True)
        assert out[-1].argmax() == digits[asked]
        assert w[-1, entries.index(f"{letters[asked]}{digits[asked]}")] > 0.99
    # The weight on the match is e^score / (e^score + n0), n0 the visible tokens of score 0: distance plays no part.
    score = 4.0 ** 2 / np.sqrt(n_let)
    tokens = ["A3", "B7", "C1", "?B", "D4", "?E", "E0", "?E", "?A"]
    _, w = attn.self_attention(embed(tokens), W_Q, W_K, W_V, causal=True)
    for t, entry in ((3, 1), (8, 0)):
        np.testing.assert_allclose(w[t, entry], np.exp(score) / (np.exp(score) + t))
    # Earlier questions count in n0 too (their keys are 0), wherever they stand (practice-papers §9's tasks).
    for seq in (["?C", "A3", "B7", "?A"], ["A3", "?C", "B7", "?A"], ["B7", "A3", "?D", "?A"]):
        _, w = attn.self_attention(embed(seq), W_Q, W_K, W_V, causal=True)
        np.testing.assert_allclose(w[-1, seq.index("A3")], np.exp(score) / (np.exp(score) + 3), rtol=1e-12)
    # A question before its entry finds nothing: uniform weights over what it can see.
    out, w = attn.self_attention(embed(["A3", "?E", "E0"]), W_Q, W_K, W_V, causal=True)
    np.testing.assert_allclose(w[1, :2], 0.5)
