"""attn.multihead: split/merge heads and multi-head self-attention (Vaswani et al. 2017, §3.2.2)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attn
from attn import merge_heads, multi_head_attention, split_heads


def per_head_loop(X, W_Q, W_K, W_V, W_O, h, mask=None):
    """Independent reference: slice each head's columns, single-head attention, concatenate, W_O. No reshapes."""
    d_k, d_v = W_Q.shape[1] // h, W_V.shape[1] // h
    heads, weights = [], []
    for a in range(h):
        ck, cv = slice(a * d_k, (a + 1) * d_k), slice(a * d_v, (a + 1) * d_v)
        o, w = attn.attention(X @ W_Q[:, ck], X @ W_K[:, ck], X @ W_V[:, cv], mask=mask)
        heads.append(o)
        weights.append(w)
    return np.concatenate(heads, axis=1) @ W_O, np.stack(weights)


@st.composite
def problems(draw):
    h = draw(st.integers(1, 4))
    T = draw(st.integers(1, 6))
    d_model = draw(st.integers(1, 6))
    d_k = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 4))
    d_out = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    causal = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d_model))
    W_Q, W_K = rng.normal(size=(d_model, h * d_k)), rng.normal(size=(d_model, h * d_k))
    W_V, W_O = rng.normal(size=(d_model, h * d_v)), rng.normal(size=(h * d_v, d_out))
    return X, W_Q, W_K, W_V, W_O, h, (attn.causal_mask(T) if causal else None)


@given(problems())
def test_equals_per_head_loop(p):
    X, W_Q, W_K, W_V, W_O, h, mask = p
    out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, h, mask=mask)
    ref_out, ref_w = per_head_loop(X, W_Q, W_K, W_V, W_O, h, mask)
    assert out.shape == (X.shape[0], W_O.shape[1])
    assert w.shape == (h, X.shape[0], X.shape[0])
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)


@given(problems())
def test_one_head_is_single_head_attention_then_W_O(p):
    X, W_Q, W_K, W_V, W_O, h, mask = p
    # Re-cut the problem as one head of width h·d_k (a different problem, same matrices).
    W_O1 = W_O  # rows = h·d_v = width of W_V
    out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O1, 1, mask=mask)
    single = attn.attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)
    np.testing.assert_allclose(out, single.output @ W_O1, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(w[0], single.weights, rtol=1e-12, atol=1e-12)


@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_split_layout_and_round_trip(T, h, d_k, seed):
    X = np.random.default_rng(seed).normal(size=(T, h * d_k))
    H = split_heads(X, h)
    assert H.shape == (h, T, d_k)
    for a in range(h):
        for t in range(T):
            np.testing.assert_array_equal(H[a, t], X[t, a * d_k:(a + 1) * d_k])
    np.testing.assert_array_equal(merge_heads(H), X)


def test_direct_reshape_is_the_bug():
    """The wrong split mixes tokens and heads; the library's split does not."""
    X = 10 * np.arange(4)[:, None] + np.arange(6)[None, :]  # entry 10 t + f
    wrong = X.reshape(2, 4, 3)
    right = split_heads(X, 2)
    assert not np.array_equal(wrong, right)
    np.testing.assert_array_equal(wrong[0, 1], [3, 4, 5])  # second half of token 0 sits in "token 1"
    np.testing.assert_array_equal(right[0, 1], [10, 11, 12])  # first half of token 1


def test_causal_mask_holds_in_every_head():
    rng = np.random.default_rng(0)
    T, d_model, h = 6, 8, 2
    X = rng.normal(size=(T, d_model))
    Ws = [rng.normal(size=(d_model, d_model)) for _ in range(4)]
    mask = attn.causal_mask(T)
    out, w = multi_head_attention(X, *Ws, h=h, mask=mask)
    assert np.all(w[:, ~mask] == 0)
    X2 = X.copy()
    X2[-1] += 1.0
    out2, _ = multi_head_attention(X2, *Ws, h=h, mask=mask)
    np.testing.assert_array_equal(out2[:-1], out[:-1])


def test_float32_stays_float32():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 4)).astype(np.float32)
    W = rng.normal(size=(4, 4)).astype(np.float32)
    out, w = multi_head_attention(X, W, W, W, W, 2)
    assert out.dtype == np.float32 and w.dtype == np.float32


# ----------------------------------------------------------------------------- errors
def test_width_not_divisible_by_h():
    with pytest.raises(ValueError, match=r"width 6.*h = 4.*not divisible"):
        multi_head_attention(np.ones((2, 6)), np.ones((6, 6)), np.ones((6, 6)), np.ones((6, 6)), np.ones((6, 6)), 4)
    with pytest.raises(ValueError, match=r"Q has width 5, which h = 2"):
        split_heads(np.ones((3, 5)), 2)


def test_value_width_not_divisible_by_h():
    with pytest.raises(ValueError, match=r"W_V has width 3"):
        multi_head_attention(np.ones((2, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 3)), np.ones((3, 4)), 2)


def test_width_message_names_the_matrix_own_per_head_width():
    # What must hold is W_Q's width = h·d_k and W_V's = h·d_v; X's width d_model need not be h·d_k, so the
    # message never says "d_model" (the practice page prints it, and draws d_model apart from h·d_k).
    def message(*args):
        with pytest.raises(ValueError) as caught:
            multi_head_attention(*args)
        return str(caught.value)

    m_q = message(np.ones((2, 5)), np.ones((5, 6)), np.ones((5, 6)), np.ones((5, 8)), np.ones((8, 5)), 4)
    m_v = message(np.ones((2, 5)), np.ones((5, 4)), np.ones((5, 4)), np.ones((5, 3)), np.ones((3, 5)), 2)
    assert "W_Q has width 6" in m_q and "h · d_k" in m_q and "d_v" not in m_q
    assert "W_V has width 3" in m_v and "h · d_v" in m_v and "d_k" not in m_v
    with pytest.raises(ValueError) as caught:
        split_heads(np.ones((3, 5)), 2)
    m_x = str(caught.value)
    assert "h times the per-head width" in m_x and "d_k" not in m_x
    assert not any("d_model" in m for m in (m_q, m_v, m_x))
    # and the shapes that pass: d_model unrelated to h·d_k
    out, _ = multi_head_attention(np.ones((2, 5)), np.ones((5, 8)), np.ones((5, 8)), np.ones((5, 6)),
                                  np.ones((6, 7)), 2)
    assert out.shape == (2, 7)


@pytest.mark.parametrize(
    "shapes, pattern",
    [
        (((2, 5), (6, 6), (6, 6), (6, 6), (6, 6)), r"X has shape \(2, 5\) and W_Q has shape \(6, 6\)"),
        (((2, 6), (6, 6), (6, 4), (6, 6), (6, 6)), r"W_Q has shape \(6, 6\) and W_K has shape \(6, 4\)"),
        (((2, 6), (6, 6), (6, 6), (6, 6), (4, 6)), r"W_V has shape \(6, 6\) and W_O has shape \(4, 6\)"),
        (((6,), (6, 6), (6, 6), (6, 6), (6, 6)), r"X must be a matrix.*shape \(6,\)"),
    ],
)
def test_shape_errors_name_the_shapes(shapes, pattern):
    args = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError, match=pattern):
        multi_head_attention(*args, h=2)


def test_bad_h_and_bad_mask():
    X, W = np.ones((3, 4)), np.ones((4, 4))
    with pytest.raises(ValueError, match="at least 1"):
        multi_head_attention(X, W, W, W, W, 0)
    with pytest.raises(TypeError, match="integer"):
        multi_head_attention(X, W, W, W, W, 2.0)
    with pytest.raises(ValueError, match=r"mask has shape \(2, 2\)"):
        multi_head_attention(X, W, W, W, W, 2, mask=np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match=r"row\(s\) \[0\] may read no key"):
        multi_head_attention(X, W, W, W, W, 2, mask=np.tril(np.ones((3, 3), dtype=bool), k=-1))
    with pytest.raises(ValueError, match="must be finite"):
        multi_head_attention(np.full((3, 4), np.nan), W, W, W, W, 2)
    with pytest.raises(ValueError, match=r"heads must be 3-dimensional.*shape \(3, 4\)"):
        merge_heads(np.ones((3, 4)))


def test_a_token_no_query_reads_has_no_influence_bit_for_bit():
    """Its value row is zeroed before the weighted sum, so it cannot even set the scale that sum uses near the
    subnormal range (here every value is subnormal but the unread token's, once it is made large)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4, 4))
    W = rng.normal(size=(4, 4))
    W_V = W * 1e-310  # values in float64's subnormal range
    mask = np.ones((4, 4), dtype=bool)
    mask[:, 2] = False  # no query reads token 2 (it still reads the others as a query)
    out = multi_head_attention(X, W, W, W_V, np.eye(4), 2, mask=mask).output
    X2 = X.copy()
    X2[2] *= 1e20  # token 2's value is now out of the subnormal range, every other value in it
    out2 = multi_head_attention(X2, W, W, W_V, np.eye(4), 2, mask=mask).output
    rows = [0, 1, 3]  # query 2 itself changed; the others read the same keys and values
    assert np.array_equal(out2[rows], out[rows])
