"""Proposition 4: self- and cross-attention are one operation under two wirings (chapters/prop4-self-cross.md)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn.examples import two_sequences

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@st.composite
def block(draw, max_t=6, max_d=5):
    """Two sequences X (T_q, d), Y (T_k, d') and a block W_Q (d, d_k), W_K (d', d_k), W_V (d', d_v)."""
    T_q, T_k = draw(st.integers(1, max_t)), draw(st.integers(1, max_t))
    d, d2, d_k, d_v = (draw(st.integers(1, max_d)) for _ in range(4))
    X = draw(arrays(np.float64, (T_q, d), elements=finite))
    Y = draw(arrays(np.float64, (T_k, d2), elements=finite))
    W_Q = draw(arrays(np.float64, (d, d_k), elements=finite))
    W_K = draw(arrays(np.float64, (d2, d_k), elements=finite))
    W_V = draw(arrays(np.float64, (d2, d_v), elements=finite))
    return X, Y, W_Q, W_K, W_V


@st.composite
def square_block(draw, max_t=6, max_d=5):
    """One sequence X (T, d) and a block whose key and value projections also take width d."""
    T, d, d_k, d_v = draw(st.integers(1, max_t)), draw(st.integers(1, max_d)), draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    X = draw(arrays(np.float64, (T, d), elements=finite))
    Ws = [draw(arrays(np.float64, shape, elements=finite)) for shape in ((d, d_k), (d, d_k), (d, d_v))]
    return (X, *Ws)


# --- the remark: self-attention is cross-attention of X with itself, bit for bit -------------------------

@given(square_block())
def test_self_attention_is_cross_attention_with_itself(args):
    X, W_Q, W_K, W_V = args
    s_out, s_w = attn.self_attention(X, W_Q, W_K, W_V)
    c_out, c_w = attn.cross_attention(X, X, W_Q, W_K, W_V)
    np.testing.assert_array_equal(s_out, c_out)
    np.testing.assert_array_equal(s_w, c_w)


@given(square_block())
def test_causal_self_attention_is_cross_attention_with_the_causal_mask(args):
    X, W_Q, W_K, W_V = args
    T = X.shape[0]
    s = attn.self_attention(X, W_Q, W_K, W_V, causal=True)
    c = attn.cross_attention(X, X, W_Q, W_K, W_V, mask=attn.causal_mask(T))
    np.testing.assert_array_equal(s.output, c.output)
    np.testing.assert_array_equal(s.weights, c.weights)


# --- part 1: shapes ------------------------------------------------------------------------------------

@given(block())
def test_cross_attention_shapes_and_rows(args):
    X, Y, W_Q, W_K, W_V = args
    T_q, T_k, d_v = X.shape[0], Y.shape[0], W_V.shape[1]
    out, w = attn.cross_attention(X, Y, W_Q, W_K, W_V)
    assert attn.scores(X @ W_Q, Y @ W_K).shape == w.shape == (T_q, T_k)
    assert out.shape == (T_q, d_v)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
    V = Y @ W_V  # every output row lies in the box spanned by the value rows (convex combination)
    tol = 1e-9 * (1 + np.abs(V).max())
    assert np.all(out >= V.min(axis=0) - tol) and np.all(out <= V.max(axis=0) + tol)


def test_worked_shapes_T_q_5_T_k_7():
    X, Y, W_Q, W_K, W_V = two_sequences()
    out, w = attn.cross_attention(X, Y[:7], W_Q, W_K, W_V)
    assert w.shape == (5, 7) and out.shape == (5, 3)


# --- part 2: row i of cross-attention depends on X only through x_i -----------------------------------

@given(block(), st.data())
def test_cross_attention_row_depends_only_on_its_own_query(args, data):
    X, Y, W_Q, W_K, W_V = args
    l = data.draw(st.integers(0, X.shape[0] - 1))
    X2 = X.copy()
    X2[l] = data.draw(arrays(np.float64, X.shape[1], elements=finite))
    a = attn.cross_attention(X, Y, W_Q, W_K, W_V)
    b = attn.cross_attention(X2, Y, W_Q, W_K, W_V)
    others = np.arange(X.shape[0]) != l
    np.testing.assert_array_equal(a.output[others], b.output[others])  # exactly, not approximately
    np.testing.assert_array_equal(a.weights[others], b.weights[others])


def test_self_attention_rows_all_move_when_one_token_changes():
    X, _, W_Q, W_K, W_V = two_sequences()
    X2 = X.copy()
    X2[0] += 1.0
    d = np.abs(attn.self_attention(X2, W_Q, W_K, W_V).output - attn.self_attention(X, W_Q, W_K, W_V).output)
    assert np.all(d.max(axis=1) > 1e-3)


@given(square_block(), st.data())
def test_causal_self_attention_row_depends_only_on_earlier_tokens(args, data):
    """Part 2, under a causal mask: changing token l leaves the rows i < l exactly as they were."""
    X, W_Q, W_K, W_V = args
    l = data.draw(st.integers(0, X.shape[0] - 1))
    X2 = X.copy()
    X2[l] = data.draw(arrays(np.float64, X.shape[1], elements=finite))
    a = attn.self_attention(X, W_Q, W_K, W_V, causal=True)
    b = attn.self_attention(X2, W_Q, W_K, W_V, causal=True)
    np.testing.assert_array_equal(a.output[:l], b.output[:l])
    np.testing.assert_array_equal(a.weights[:l], b.weights[:l])


@pytest.mark.parametrize("seed", range(5))
def test_appending_a_token_leaves_the_earlier_causal_rows_and_moves_the_unmasked_ones(seed):
    """Part 2: appending a token to X changes no earlier row under a causal mask, and every row without one."""
    rng = np.random.default_rng(seed)
    X, W_Q, W_K, W_V = rng.normal(size=(6, 5)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    X_more = np.vstack([X, rng.normal(size=(1, 5))])
    causal = attn.self_attention(X, W_Q, W_K, W_V, causal=True).output
    causal_more = attn.self_attention(X_more, W_Q, W_K, W_V, causal=True).output
    np.testing.assert_allclose(causal_more[:6], causal, rtol=0, atol=1e-12)
    plain = attn.self_attention(X, W_Q, W_K, W_V).output
    plain_more = attn.self_attention(X_more, W_Q, W_K, W_V).output
    assert np.all(np.abs(plain_more[:6] - plain).max(axis=1) > 0)  # without a mask every earlier row moves


# --- the T_q x T_k score matrix ---------------------------------------------------------------------------

@given(block())
def test_cross_scores_are_a_bilinear_form(args):
    X, Y, W_Q, W_K, W_V = args
    d_k = W_Q.shape[1]
    S = attn.scores(X @ W_Q, Y @ W_K)
    M = W_Q @ W_K.T  # (d, d'), rank <= d_k
    np.testing.assert_allclose(S, X @ M @ Y.T / np.sqrt(d_k), atol=1e-9 * (1 + np.abs(S).max()))
    assert np.linalg.matrix_rank(M) <= d_k


def test_cross_scores_entry_by_entry_by_hand():
    # d_k = 4, scale 1/2; q_1 = (2, 0, 0, 0) against k_1 = (1, 1, 0, 0) and k_2 = (0, 0, 0, 3)
    Q = np.array([[2.0, 0, 0, 0]])
    K = np.array([[1.0, 1, 0, 0], [0, 0, 0, 3.0], [-1.0, 0, 0, 0]])
    np.testing.assert_array_equal(attn.scores(Q, K), [[1.0, 0.0, -1.0]])


# --- causal masks when T_q != T_k ------------------------------------------------------------------------

def test_causal_mask_refuses_to_guess_the_alignment():
    with pytest.raises(ValueError, match="ambiguous"):
        attn.causal_mask(3, 7)


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (1, 5), (3, 7), (4, 4), (6, 9)])
def test_aligned_causal_mask_is_the_tail_of_the_square_one(T_q, T_k):
    np.testing.assert_array_equal(attn.causal_mask(T_q, T_k, offset=T_k - T_q), attn.causal_mask(T_k)[-T_q:])


@pytest.mark.parametrize("T_new", [1, 2, 3, 7])
def test_kv_cache_reproduces_the_last_rows_of_causal_self_attention(T_new):
    _, _, W_Q, W_K, W_V = two_sequences()
    T_all = 7
    Z = np.random.default_rng(1).normal(size=(T_all, W_Q.shape[0]))
    full = attn.self_attention(Z, W_Q, W_K, W_V, causal=True)
    mask = attn.causal_mask(T_new, T_all, offset=T_all - T_new)
    cached = attn.cross_attention(Z[-T_new:], Z, W_Q, W_K, W_V, mask=mask)
    np.testing.assert_allclose(cached.output, full.output[-T_new:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(cached.weights, full.weights[-T_new:], rtol=0, atol=1e-12)


def test_wrong_offset_gives_wrong_numbers():
    _, _, W_Q, W_K, W_V = two_sequences()
    Z = np.random.default_rng(1).normal(size=(7, W_Q.shape[0]))
    full = attn.self_attention(Z, W_Q, W_K, W_V, causal=True)
    wrong = attn.cross_attention(Z[-3:], Z, W_Q, W_K, W_V, mask=attn.causal_mask(3, 7, offset=0))
    assert np.abs(wrong.output - full.output[-3:]).max() > 0.01


# --- the basics page: self_attention and cross_attention are attention_block with its two sequences ------

@given(block())
def test_cross_attention_is_the_attention_block_bit_for_bit(args):
    X, Y, W_Q, W_K, W_V = args
    c, b = attn.cross_attention(X, Y, W_Q, W_K, W_V), attn.attention_block(X, Y, W_Q, W_K, W_V)
    np.testing.assert_array_equal(c.output, b.output)
    np.testing.assert_array_equal(c.weights, b.weights)


@given(square_block())
def test_self_attention_is_the_attention_block_with_x_twice_bit_for_bit(args):
    X, W_Q, W_K, W_V = args
    s, b = attn.self_attention(X, W_Q, W_K, W_V), attn.attention_block(X, X, W_Q, W_K, W_V)
    np.testing.assert_array_equal(s.output, b.output)
    np.testing.assert_array_equal(s.weights, b.weights)


def test_the_three_wirings_run_the_same_code(monkeypatch):
    """'All three run the same code': each of the three calls one function, with its two sequences."""
    import attn.wiring as wiring

    calls = []
    real = wiring._attend

    def spy(X_query, X_source, *rest, **kwargs):
        calls.append((X_query, X_source))
        return real(X_query, X_source, *rest, **kwargs)

    monkeypatch.setattr(wiring, "_attend", spy)
    X, Y = np.ones((2, 3)), np.arange(12.0).reshape(4, 3)
    W_Q = W_K = np.eye(3)
    W_V = np.ones((3, 2))
    attn.self_attention(X, W_Q, W_K, W_V)
    attn.cross_attention(X, Y, W_Q, W_K, W_V)
    attn.attention_block(X, Y, W_Q, W_K, W_V)
    assert [(a is X, b is X, b is Y) for a, b in calls] == [(True, True, False), (True, False, True),
                                                           (True, False, True)]
