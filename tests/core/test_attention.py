"""The attention module: hand-computed cases, properties on many inputs, errors."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn.examples import figure3

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def qkv(draw, max_t=6, max_d=5):
    T_q, T_k = draw(st.integers(1, max_t)), draw(st.integers(1, max_t))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    Q = draw(arrays(np.float64, (T_q, d_k), elements=finite))
    K = draw(arrays(np.float64, (T_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (T_k, d_v), elements=finite))
    return Q, K, V


# --- hand-computed --------------------------------------------------------------

def test_softmax_by_hand():
    # softmax(0, ln 2, ln 3) = (1, 2, 3) / 6
    np.testing.assert_allclose(attn.softmax([0.0, math.log(2), math.log(3)]), [1 / 6, 2 / 6, 3 / 6], rtol=1e-15)


def test_softmax_temperature_by_hand():
    # softmax((0, 2) / 2) = softmax(0, 1) = (1, e) / (1 + e)
    e = math.e
    np.testing.assert_allclose(attn.softmax([0.0, 2.0], tau=2.0), [1 / (1 + e), e / (1 + e)], rtol=1e-15)


def test_attention_by_hand():
    # d_k = 4 so the scale is 1/2. Scores: q·k1 = 2 -> 1, q·k2 = 0 -> 0.
    Q = np.array([[1.0, 1.0, 0.0, 0.0]])
    K = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    V = np.array([[10.0, 0.0], [0.0, 10.0]])
    out, w = attn.attention(Q, K, V)
    np.testing.assert_allclose(attn.scores(Q, K), [[1.0, 0.0]])
    w1 = math.e / (math.e + 1)
    np.testing.assert_allclose(w, [[w1, 1 - w1]], rtol=1e-15)
    np.testing.assert_allclose(out, [[10 * w1, 10 * (1 - w1)]], rtol=1e-14)


def test_figure3_weights_round_as_in_the_chapter():
    q, K, V = figure3()
    _, w = attn.attention(q, K, V)
    np.testing.assert_array_equal(np.round(w[0], 2), [0.06, 0.61, 0.09, 0.24])


def test_causal_mask_by_hand():
    np.testing.assert_array_equal(attn.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(attn.causal_mask(2, 4, offset=2), [[1, 1, 1, 0], [1, 1, 1, 1]])


def test_masked_weights_are_exactly_zero_and_rows_renormalise():
    Q = np.zeros((1, 2))
    K = np.zeros((3, 2))
    V = np.array([[1.0], [2.0], [4.0]])
    out, w = attn.attention(Q, K, V, mask=np.array([[True, False, True]]))
    np.testing.assert_array_equal(w, [[0.5, 0.0, 0.5]])
    np.testing.assert_allclose(out, [[2.5]])


# --- properties ---------------------------------------------------------------

@given(qkv(), st.floats(0.05, 20))
def test_weight_rows_sum_to_one(args, tau):
    out, w = attn.attention(*args, tau=tau)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
    assert (w >= 0).all()


@given(qkv())
def test_output_inside_convex_hull_of_values(args):
    Q, K, V = args
    out, w = attn.attention(Q, K, V)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)
    # inside the bounding box of the value rows (a necessary condition) ...
    assert (out >= V.min(axis=0) - 1e-9).all() and (out <= V.max(axis=0) + 1e-9).all()
    # ... and exactly the convex combination w @ V with w on the simplex
    np.testing.assert_allclose(out, w @ V, rtol=1e-12, atol=1e-12)


@given(qkv(), st.randoms(use_true_random=False))
def test_permutation_equivariance(args, rnd):
    Q, K, V = args
    pq = np.array(rnd.sample(range(Q.shape[0]), Q.shape[0]))
    pk = np.array(rnd.sample(range(K.shape[0]), K.shape[0]))
    out, w = attn.attention(Q, K, V)
    out_p, w_p = attn.attention(Q[pq], K[pk], V[pk])
    np.testing.assert_allclose(out_p, out[pq], rtol=1e-10, atol=1e-10)  # queries: equivariant
    np.testing.assert_allclose(w_p, w[pq][:, pk], rtol=1e-10, atol=1e-12)  # keys: weights follow their keys


@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=finite), st.floats(-1e3, 1e3))
def test_softmax_shift_invariance(x, c):
    np.testing.assert_allclose(attn.softmax(x + c), attn.softmax(x), rtol=1e-9, atol=1e-12)


@given(arrays(np.float64, st.integers(2, 8), elements=st.sampled_from([-1e4, 1e4, 0.0, -9999.0])))
def test_no_overflow_at_large_logits(x):
    s = attn.softmax(x)
    assert np.isfinite(s).all()
    np.testing.assert_allclose(s.sum(), 1.0)
    assert s[np.argmax(x)] >= 1 / len(x)


def test_softmax_is_argmax_at_extreme_logits():
    np.testing.assert_array_equal(attn.softmax([1e4, -1e4, 0.0]), [1.0, 0.0, 0.0])


@given(qkv())
def test_float32_stays_float32_and_agrees(args):
    Q, K, V = (a.astype(np.float32) for a in args)
    out, w = attn.attention(Q, K, V)
    assert out.dtype == np.float32 and w.dtype == np.float32
    out64, _ = attn.attention(*args)
    np.testing.assert_allclose(out, out64, rtol=1e-3, atol=1e-3)


def test_independent_reference_loop():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    out, _ = attn.attention(Q, K, V)
    for i in range(5):
        logits = [sum(Q[i, a] * K[j, a] for a in range(3)) / math.sqrt(3) for j in range(7)]
        m = max(logits)
        e = [math.exp(x - m) for x in logits]
        ref = [sum(e[j] / sum(e) * V[j, c] for j in range(7)) for c in range(2)]
        np.testing.assert_allclose(out[i], ref, rtol=1e-12)


# --- masks, empty rows, non-finite keys -----------------------------------------

def test_fully_masked_row_raises_by_default_naming_rows():
    mask = np.array([[True, True], [False, False]])
    with pytest.raises(ValueError, match=r"query row\(s\) \[1\]"):
        attn.attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 3)), mask=mask)


def test_fully_masked_row_zero_policy():
    mask = np.array([[True, True], [False, False]])
    out, w = attn.attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 3)), mask=mask, empty_rows="zero")
    np.testing.assert_array_equal(w[1], [0.0, 0.0])
    np.testing.assert_array_equal(out[1], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(w[0], [0.5, 0.5])


def test_nan_in_masked_key_and_value_does_not_reach_output():
    K = np.array([[np.nan, 1.0], [1.0, 0.0]])
    V = np.array([[np.inf, np.nan], [2.0, 3.0]])
    out, w = attn.attention(np.ones((2, 2)), K, V, mask=np.array([[False, True], [False, True]]))
    np.testing.assert_array_equal(out, [[2.0, 3.0], [2.0, 3.0]])
    np.testing.assert_array_equal(w[:, 0], [0.0, 0.0])


def test_nan_in_readable_key_is_an_error():
    K = np.array([[np.nan, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"row 0 holds NaN"):
        attn.attention(np.ones((1, 2)), K, np.ones((2, 1)))


def test_causal_mask_refuses_ambiguous_alignment():
    with pytest.raises(ValueError, match="ambiguous.*offset"):
        attn.causal_mask(2, 5)
    with pytest.raises(ValueError, match="offset"):
        attn.causal_mask(3, 3, offset=-1)


def test_self_attention_causal_refuses_nothing_and_masks_future():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4, 3))
    W = [rng.normal(size=(3, 2)) for _ in range(3)]
    _, w = attn.self_attention(X, *W, causal=True)
    assert np.all(np.triu(w, 1) == 0)


def test_self_is_cross_with_the_same_sequence():
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(4, 3)), rng.normal(size=(6, 3))
    W = [rng.normal(size=(3, 2)) for _ in range(3)]
    np.testing.assert_array_equal(attn.self_attention(X, *W).output, attn.cross_attention(X, X, *W).output)
    out, w = attn.cross_attention(X, Y, *W)
    assert out.shape == (4, 2) and w.shape == (4, 6)


# --- errors -----------------------------------------------------------------------

@pytest.mark.parametrize("tau", [0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_bad_temperature_names_the_value(tau):
    with pytest.raises(ValueError, match="tau"):
        attn.softmax([1.0, 2.0], tau=tau)


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        attn.attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)))
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(5, 1\)"):
        attn.attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((5, 1)))
    with pytest.raises(ValueError, match=r"\(1, 3\).*\(2, 4\)"):
        attn.attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), mask=np.ones((1, 3), bool))


@pytest.mark.parametrize("bad, message", [
    (np.ones(3), "matrix"), (np.ones((2, 3, 1)), "matrix"), (np.ones((0, 3)), "empty"),
])
def test_wrong_ndim_and_empty(bad, message):
    with pytest.raises(ValueError, match=message):
        attn.attention(bad, np.ones((2, 3)), np.ones((2, 1)))


@pytest.mark.parametrize("bad", [np.array([["a", "b"]]), np.array([[1 + 1j, 2]]), np.ones((1, 2), bool), [[1, [2]]]])
def test_non_numeric_is_a_type_error(bad):
    with pytest.raises(TypeError):
        attn.attention(bad, np.ones((2, 2)), np.ones((2, 1)))


def test_integer_mask_is_refused():
    with pytest.raises(TypeError, match="boolean"):
        attn.attention(np.ones((1, 2)), np.ones((2, 2)), np.ones((2, 1)), mask=np.ones((1, 2), int))


def test_softmax_rejects_nan_and_all_masked():
    with pytest.raises(ValueError, match="NaN"):
        attn.softmax([1.0, float("nan")])
    with pytest.raises(ValueError, match="-inf"):
        attn.softmax([[-np.inf, -np.inf]])


def test_integers_promote_to_float64():
    out, w = attn.attention([[1, 0]], [[1, 0], [0, 1]], [[1], [2]])
    assert out.dtype == np.float64


@pytest.mark.parametrize("which, where", [("Q", (0, 1)), ("K", (1, 0))])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_scores_names_a_non_finite_input_instead_of_calling_it_an_overflow(which, where, bad):
    Q, K = np.ones((2, 3)), np.ones((3, 3))
    {"Q": Q, "K": K}[which][where] = bad
    with pytest.raises(ValueError) as err:
        attn.scores(Q, K)
    assert str(err.value) == f"{which} must be finite; {which}{list(where)} = {bad!r}"
    assert "overflow" not in str(err.value)
