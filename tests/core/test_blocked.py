"""blocked_attention (the online softmax) against attn.attention, the reference."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn import BlockedAttention, blocked_attention

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, masked=True):
    T_q = draw(st.integers(1, 12))
    T_k = draw(st.integers(1, 12))
    d_k = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 4))
    Q = draw(arrays(np.float64, (T_q, d_k), elements=finite))
    K = draw(arrays(np.float64, (T_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (T_k, d_v), elements=finite))
    mask = draw(arrays(np.bool_, (T_q, T_k))) if masked and draw(st.booleans()) else None
    return Q, K, V, mask


block = st.integers(1, 15)
query_block = st.one_of(st.none(), st.integers(1, 15))
taus = st.floats(0.25, 4.0)


def scaled_scores(Q, K, tau, scale=None):
    scale = 1 / np.sqrt(Q.shape[1]) if scale is None else scale
    return (Q @ K.T) * scale / tau  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)


# --- the same result as attention -------------------------------------------------

@given(problems(), block, query_block, taus)
def test_same_output_as_attention(p, b, qb, tau):
    Q, K, V, mask = p
    ref = attn.attention(Q, K, V, mask=mask, tau=tau, empty_rows="zero").output
    out = blocked_attention(Q, K, V, mask=mask, tau=tau, block_size=b, query_block_size=qb, empty_rows="zero")
    assert out.shape == ref.shape and out.dtype == np.float64
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@given(problems(), block, query_block, taus)
def test_lse_is_the_logsumexp_of_the_readable_scores(p, b, qb, tau):
    Q, K, V, mask = p
    res = blocked_attention(Q, K, V, mask=mask, tau=tau, block_size=b, query_block_size=qb,
                            empty_rows="zero", return_lse=True)
    assert isinstance(res, BlockedAttention) and res.lse.shape == (Q.shape[0],)
    S = scaled_scores(Q, K, tau)
    readable = np.ones(S.shape, bool) if mask is None else mask
    for i in range(Q.shape[0]):
        if readable[i].any():
            np.testing.assert_allclose(res.lse[i], attn.logsumexp(S[i, readable[i]]), rtol=1e-12, atol=1e-12)
            # lse rebuilds the weights: exp(s / tau - lse) are attention's weights
            w = attn.attention(Q, K, V, mask=mask, tau=tau, empty_rows="zero").weights[i]
            np.testing.assert_allclose(np.where(readable[i], np.exp(S[i] - res.lse[i]), 0), w, atol=1e-12)
        else:
            assert res.lse[i] == -np.inf


@given(problems(masked=False), st.floats(0.01, 10.0), block)
def test_explicit_scale(p, scale, b):
    Q, K, V, _ = p
    ref = attn.attention(Q, K, V, scale=scale).output
    np.testing.assert_allclose(blocked_attention(Q, K, V, scale=scale, block_size=b), ref, rtol=1e-12, atol=1e-12)


def test_one_query_equal_keys_is_the_mean_of_the_values():
    # by hand: every key scores the same, so each weight is 1/3 and the output is the mean of V's rows
    Q = np.array([[1.0, 0.0]])
    K = np.array([[0.0, 1.0], [0.0, 2.0], [0.0, -1.0]])
    V = np.array([[3.0], [6.0], [0.0]])
    np.testing.assert_allclose(blocked_attention(Q, K, V, block_size=1), [[3.0]], rtol=0, atol=1e-15)


# --- masked blocks ----------------------------------------------------------------

@pytest.mark.parametrize("query_block_size", [None, 1, 3, 8])
def test_first_block_all_masked_is_not_nan(query_block_size):
    rng = np.random.default_rng(0)
    T, b = 8, 4
    Q, K, V = (rng.normal(size=(T, 3)) for _ in range(3))
    mask = np.ones((T, T), bool)
    mask[:, :b] = False  # the whole first block of keys is unreadable, for every query
    out = blocked_attention(Q, K, V, mask=mask, block_size=b, query_block_size=query_block_size)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, attn.attention(Q, K, V, mask=mask).output, rtol=1e-12, atol=1e-12)


def test_first_block_masked_for_some_rows_only():
    # the tile is not skipped (row 1 reads key 0), so row 0 meets a block whose scores are all -inf
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(4, 2)) for _ in range(3))
    mask = np.ones((4, 4), bool)
    mask[0, :2] = False
    mask[2, 2:] = False  # and a row whose last block is masked after it has a maximum
    res = blocked_attention(Q, K, V, mask=mask, block_size=2, query_block_size=None, return_lse=True)
    assert np.isfinite(res.output).all() and np.isfinite(res.lse).all()
    np.testing.assert_allclose(res.output, attn.attention(Q, K, V, mask=mask).output, rtol=1e-12, atol=1e-12)


def test_huge_scores_in_a_late_block_rescale_without_overflow():
    Q = np.array([[1.0]])
    K = np.array([[0.0], [1.0], [800.0], [-800.0]])  # the maximum jumps by 800 in block 2
    V = np.array([[1.0], [2.0], [3.0], [4.0]])
    out = blocked_attention(Q, K, V, block_size=1)
    np.testing.assert_allclose(out, attn.attention(Q, K, V).output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, [[3.0]], atol=1e-12)


def test_causal_mask():
    rng = np.random.default_rng(2)
    T = 50
    Q, K, V = (rng.normal(size=(T, 4)) for _ in range(3))
    m = attn.causal_mask(T)
    out = blocked_attention(Q, K, V, mask=m, block_size=7, query_block_size=9)
    np.testing.assert_allclose(out, attn.attention(Q, K, V, mask=m).output, rtol=1e-12, atol=1e-12)


def test_empty_rows_zero_and_raise():
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(3, 2)) for _ in range(3))
    mask = np.array([[True, False, True], [False, False, False], [False, True, False]])
    res = blocked_attention(Q, K, V, mask=mask, empty_rows="zero", block_size=2, return_lse=True)
    assert np.array_equal(res.output[1], [0.0, 0.0]) and res.lse[1] == -np.inf
    np.testing.assert_allclose(res.output, attn.attention(Q, K, V, mask=mask, empty_rows="zero").output, atol=1e-12)
    with pytest.raises(ValueError, match=r"query row\(s\) \[1\] may read no key"):
        blocked_attention(Q, K, V, mask=mask)


def test_nan_in_a_masked_key_does_not_reach_the_output():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.normal(size=(4, 2)) for _ in range(3))
    K[2, 0] = np.nan
    V[2, 1] = np.inf
    mask = np.ones((4, 4), bool)
    mask[:, 2] = False
    out = blocked_attention(Q, K, V, mask=mask, block_size=3)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, attn.attention(Q, K, V, mask=mask).output, atol=1e-12)


# --- dtypes -----------------------------------------------------------------------

@pytest.mark.parametrize("T", [1, 37, 300])
def test_float32_close_to_float64_reference(T):
    rng = np.random.default_rng(T)
    Q, K, V = (rng.normal(size=(T, 64)) for _ in range(3))
    ref = attn.attention(Q, K, V).output
    out = blocked_attention(*(x.astype(np.float32) for x in (Q, K, V)), block_size=64, query_block_size=100)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    naive32 = attn.attention(*(x.astype(np.float32) for x in (Q, K, V))).output
    np.testing.assert_allclose(out, naive32, rtol=1e-5, atol=1e-6)


def test_float16_and_integer_dtypes():
    Q = np.array([[1, 0], [0, 1]])
    K = np.array([[1, 1], [2, 0], [0, 2]])
    V = np.array([[1, 2], [3, 4], [5, 6]])
    out = blocked_attention(Q, K, V, block_size=2)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, attn.attention(Q, K, V).output, atol=1e-12)
    out16 = blocked_attention(*(np.asarray(x, np.float16) for x in (Q, K, V)), block_size=2)
    assert out16.dtype == np.float16
    np.testing.assert_allclose(out16, out, rtol=2e-3, atol=2e-3)


# --- memory -----------------------------------------------------------------------

def test_memory_grows_with_T_times_block_not_T_squared():
    T, d, b = 2048, 8, 32
    rng = np.random.default_rng(5)
    Q, K, V = (rng.normal(size=(T, d)) for _ in range(3))
    tracemalloc.start()
    try:
        blocked_attention(Q, K, V, block_size=b, query_block_size=None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    score_matrix = T * T * 8  # one float64 (T, T) matrix: 32 MiB
    assert peak < 5 * T * b * 8  # a few float64 (T, b) tiles (measured: about 3) ...
    assert 5 * T * b * 8 < score_matrix / 10  # ... far below one (T, T) matrix


# --- errors: the same checks and messages as attention ------------------------------

ok = np.ones((2, 3))
BAD_CALLS = [
    dict(Q=[[1, 2], [3]], K=ok, V=ok),  # ragged
    dict(Q=np.ones((2, 3), complex), K=ok, V=ok),
    dict(Q=np.ones(3), K=ok, V=ok),  # wrong ndim
    dict(Q=np.ones((0, 3)), K=ok, V=ok),  # empty
    dict(Q=ok, K=np.ones((2, 4)), V=ok),  # d_k differs
    dict(Q=ok, K=ok, V=np.ones((3, 3))),  # T_k differs
    dict(Q=np.full((2, 3), np.nan), K=ok, V=ok),
    dict(Q=ok, K=np.array([[1, 2, np.inf], [1, 1, 1]]), V=ok),  # readable inf key
    dict(Q=ok, K=ok, V=ok, mask=np.ones((2, 2))),  # not boolean
    dict(Q=ok, K=ok, V=ok, mask=np.ones((3, 2), bool)),  # wrong shape
    dict(Q=ok, K=ok, V=ok, mask=np.zeros((2, 2), bool)),  # every row empty
    dict(Q=ok, K=ok, V=ok, tau=0),
    dict(Q=ok, K=ok, V=ok, tau=float("nan")),
    dict(Q=ok, K=ok, V=ok, tau=True),
    dict(Q=ok, K=ok, V=ok, empty_rows="uniform"),
]


@pytest.mark.parametrize("kwargs", BAD_CALLS)
def test_same_errors_as_attention(kwargs):
    with pytest.raises((ValueError, TypeError)) as ref:
        attn.attention(**kwargs)
    with pytest.raises(ref.type) as got:
        blocked_attention(**kwargs)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("name", ["block_size", "query_block_size"])
@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError), ("64", TypeError)])
def test_bad_block_sizes(name, bad, exc):
    with pytest.raises(exc, match=name):
        blocked_attention(ok, ok, ok, **{name: bad})
