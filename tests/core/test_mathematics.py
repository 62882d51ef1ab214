"""The Mathematics strand's claims as unit tests on attn (chapters/mathematics-softmax.md, mathematics-attention.md).

One block per item, in the order of the strand's list; then the errors of the functions in attn.derivatives, attn.measures and attn.cost.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn

finite = st.floats(-30, 30, allow_nan=False, allow_infinity=False)


def logits(min_size=1, max_size=12):
    return st.integers(min_size, max_size).flatmap(lambda n: arrays(np.float64, n, elements=finite))


def problem(draw_shape=st.tuples(st.integers(1, 5), st.integers(1, 7), st.integers(1, 5), st.integers(1, 4))):
    """(Q, K, V) with entries in [-3, 3]."""
    el = st.floats(-3, 3, allow_nan=False)
    return draw_shape.flatmap(lambda s: st.tuples(
        arrays(np.float64, (s[0], s[2]), elements=el),
        arrays(np.float64, (s[1], s[2]), elements=el),
        arrays(np.float64, (s[1], s[3]), elements=el)))


def central_jacobian(f, x, h=1e-5):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


# ------------------------------------------------------------------ 2. shift invariance
@given(logits(), st.floats(-100, 100), st.floats(0.1, 10))
def test_shift_invariance(x, c, tau):
    assert np.allclose(attn.softmax(x + c, tau=tau), attn.softmax(x, tau=tau), rtol=0, atol=1e-12)


@given(logits())
def test_same_softmax_means_constant_shift(x):
    y = np.log(attn.softmax(x))  # another row with the same softmax
    assume(np.all(np.isfinite(y)))
    assert np.allclose(attn.softmax(y), attn.softmax(x), atol=1e-12)
    assert np.ptp(y - x) < 1e-9


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(arrays(np.float64, n, elements=finite),
                                                       arrays(np.float64, n, elements=finite))),
       st.floats(0.1, 10))
def test_the_weights_give_the_row_back_up_to_a_constant(x_r, tau):
    """The converse's mechanism (mathematics-softmax): tau log w = x - tau lse(x / tau) 1, so for y = x + r the change
    d = tau (log softmax(y / tau) - log w) is r minus a constant: the weights agree (d = 0) exactly when r is constant."""
    x, r = x_r
    log_w = attn.log_softmax(x, tau=tau)
    assert np.ptp(tau * log_w - x) <= 1e-12 * (1 + np.abs(x).max())
    d = tau * (attn.log_softmax(x + r, tau=tau) - log_w)
    assert np.ptp(d - r) <= 1e-12 * (1 + np.abs(x).max() + np.abs(r).max())
    if np.ptp(r) > 1e-6:                      # r not constant: the weights move
        assert np.abs(d).max() >= np.ptp(r) / 2 - 1e-9


def test_moving_all_keys_together_leaves_weights_unchanged():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    b = 3 * rng.normal(size=4)
    assert np.allclose(attn.attention(Q, K + b, V).weights, attn.attention(Q, K, V).weights, atol=1e-12)
    assert not np.allclose(attn.attention(Q + b, K, V).weights, attn.attention(Q, K, V).weights, atol=1e-3)


# ------------------------------------------------------------------ 3. log-sum-exp, stable evaluation
def test_naive_softmax_fails_where_attn_softmax_does_not():
    big = np.array([1e4, 1e4 - 1.0, -1e4])
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        z = np.exp(big)
        naive = z / z.sum()
    messages = " ".join(str(w.message) for w in caught)
    assert "overflow" in messages and np.isnan(naive[:2]).all()
    sigma1 = 1 / (1 + math.exp(-1))  # after the max trick: logits 0, -1, -2e4
    assert np.allclose(attn.softmax(big), [sigma1, 1 - sigma1, 0.0], atol=1e-15)
    assert np.allclose(attn.softmax(np.array([-1e4, -1e4 - 1.0])), [sigma1, 1 - sigma1], atol=1e-15)
    assert attn.logsumexp(np.array([1e4, 1e4])) == pytest.approx(1e4 + math.log(2), abs=1e-11)


@given(arrays(np.float64, st.integers(1, 20), elements=st.floats(-1e5, 1e5)))
def test_max_trick_sum_between_1_and_n(x):
    m = x.max()
    inner = np.exp(x - m).sum()
    assert 1 <= inner <= x.size
    p = attn.softmax(x)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)


def test_exp_overflow_thresholds():
    assert math.log(np.finfo(np.float64).max) == pytest.approx(709.78, abs=0.01)
    assert math.log(np.finfo(np.float32).max) == pytest.approx(88.72, abs=0.01)
    assert math.log(np.finfo(np.float16).max) == pytest.approx(11.09, abs=0.01)


# ------------------------------------------------------------------ 4. softmax Jacobian
def test_softmax_jacobian_by_hand():
    J = attn.softmax_jacobian([0.5, 0.5])
    assert np.allclose(J, [[0.25, -0.25], [-0.25, 0.25]])
    assert np.allclose(attn.softmax_jacobian([0.5, 0.5], tau=2.0), J / 2)
    assert np.allclose(attn.softmax_jacobian([1.0, 0.0, 0.0]), 0.0)  # one-hot: no gradient at all


@given(logits(2, 10), st.sampled_from([0.5, 1.0, 2.5]))
def test_softmax_jacobian_matches_finite_differences(x, tau):
    x = x / 3  # keep the softmax away from saturation so that finite differences are accurate
    s = attn.softmax(x, tau=tau)
    J = attn.softmax_jacobian(s, tau=tau)
    J_fd = central_jacobian(lambda z: attn.softmax(z, tau=tau), x)
    assert np.abs(J - J_fd).max() < 1e-8
    assert np.allclose(J, J.T) and np.abs(J.sum(axis=1)).max() < 1e-13  # zero up to rounding: (1/τ)(s_i - s_i Σ_j s_j)
    assert np.linalg.eigvalsh(J).min() > -1e-13  # positive semidefinite up to rounding


def test_softmax_jacobian_rank_and_batch():
    s = attn.softmax(np.random.default_rng(1).normal(size=(4, 6)))
    J = attn.softmax_jacobian(s)
    assert J.shape == (4, 6, 6)
    assert all(np.linalg.matrix_rank(Ji) == 5 for Ji in J)
    assert np.allclose(J[2], attn.softmax_jacobian(s[2]))


@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 8)), elements=finite), st.floats(0.2, 5))
def test_softmax_jacobian_norm_is_frobenius(x, tau):
    s = attn.softmax(x, tau=tau)
    # Reference without cancellation: J_ii = s_i * (sum of the other entries), J_ij = -s_i s_j.
    others = np.array([[np.sum(np.delete(row, i)) for i in range(row.size)] for row in s])
    J = -s[..., :, None] * s[..., None, :]
    idx = np.arange(s.shape[-1])
    J[..., idx, idx] = s * others
    ref = np.linalg.norm(J / tau, axis=(-2, -1))
    assert np.allclose(attn.softmax_jacobian_norm(s, tau=tau), ref, rtol=1e-9, atol=0)
    if s.max() < 0.999:  # away from saturation the (n, n) matrix is accurate too
        assert np.allclose(attn.softmax_jacobian_norm(s, tau=tau),
                           np.linalg.norm(attn.softmax_jacobian(s, tau=tau), axis=(-2, -1)), rtol=1e-9)


@pytest.mark.parametrize("n", [2, 3, 8, 16])
def test_softmax_jacobian_norm_values_the_docstring_gives(n):
    """Uniform weights: sqrt(n-1)/(n tau); two weights of 1/2: 1/(2 tau), larger once n > 2; trace bound."""
    tau = 0.7
    uniform = np.full(n, 1 / n)
    pair = np.zeros(n)
    pair[:2] = 0.5
    assert float(attn.softmax_jacobian_norm(uniform, tau=tau)) == pytest.approx(np.sqrt(n - 1) / (n * tau))
    assert float(attn.softmax_jacobian_norm(pair, tau=tau)) == pytest.approx(1 / (2 * tau))
    if n > 2:
        assert attn.softmax_jacobian_norm(pair) > attn.softmax_jacobian_norm(uniform)
    w = attn.softmax(np.random.default_rng(n).normal(size=(50, n)) * 3)
    assert np.all(attn.softmax_jacobian_norm(w, tau=tau) <= (1 - np.sum(w**2, axis=1)) / tau + 1e-12)


# ------------------------------------------------------------------ 5. gradient with respect to a query
@given(problem(), st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([None, 0.3]))
def test_grad_query_matches_finite_differences(qkv, tau, scale):
    Q, K, V = qkv
    q = Q[0]
    G = attn.attention_grad_query(q, K, V, tau=tau, scale=scale)
    assert G.shape == (V.shape[1], K.shape[1])
    f = lambda z: attn.attention(z[None], K, V, tau=tau, scale=scale).output[0]
    G_fd = np.stack([(f(q + 1e-6 * e) - f(q - 1e-6 * e)) / 2e-6 for e in np.eye(q.size)], axis=1)
    assert np.abs(G - G_fd).max() < 1e-6


def test_grad_query_is_a_weighted_covariance_and_vanishes_when_nothing_to_choose():
    rng = np.random.default_rng(2)
    q, K, V = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    c = 1 / math.sqrt(3)
    w = attn.softmax(c * K @ q)
    o, kb = w @ V, w @ K
    cov = c * sum(w[j] * np.outer(V[j] - o, K[j] - kb) for j in range(5))
    assert np.allclose(attn.attention_grad_query(q, K, V), cov, atol=1e-14)
    assert np.allclose(attn.attention_grad_query(q, K, np.ones((5, 2))), 0, atol=1e-15)  # equal values
    assert np.allclose(attn.attention_grad_query(q, np.tile(K[:1], (5, 1)), V), 0, atol=1e-15)  # equal keys
    assert np.allclose(attn.attention_grad_query(q, K[:1], V[:1]), 0)  # one key: o = v_1 whatever q is
    assert np.linalg.norm(attn.attention_grad_query(q, K, V, scale=200.0)) < 1e-12  # saturated


# ------------------------------------------------------------------ 6. Var(q·k) = d_k
@pytest.mark.parametrize("dist", ["normal", "signs"])
@pytest.mark.parametrize("d_k", [1, 8, 64])
def test_dot_product_variance_monte_carlo(d_k, dist):
    rng = np.random.default_rng(d_k)
    N = 40_000
    draw = (lambda size: rng.standard_normal(size)) if dist == "normal" else (lambda size: rng.choice([-1.0, 1.0], size))
    dots = np.einsum("nd,nd->n", draw((N, d_k)), draw((N, d_k)))
    for sample, target in [(dots, d_k), (dots / math.sqrt(d_k), 1.0)]:
        var = sample.var()
        se = ((sample - sample.mean()) ** 2).std() / math.sqrt(N)
        assert abs(var - target) <= 4 * se or var == target


def test_random_logits_variance():
    x = attn.random_logits(32, T_k=10, n=4000, scaled=False, rng=0)
    assert x.shape == (4000, 10)
    assert x.var() == pytest.approx(32, rel=0.05)
    assert attn.random_logits(32, T_k=10, n=4000, scaled=True, rng=0).var() == pytest.approx(1, rel=0.05)


# ------------------------------------------------------------------ 7. gradient norm against logit scale
@given(logits(2, 10), st.floats(0, 20))
def test_jacobian_norm_bounded_by_exponential_in_scale(x, a):
    top = np.sort(x)
    gap = top[-1] - top[-2]
    assume(gap > 0.05)
    s = attn.softmax(a * x)
    J = attn.softmax_jacobian(s)
    spec, frob, tr = np.linalg.norm(J, 2), np.linalg.norm(J), np.trace(J)
    bound = 2 * (x.size - 1) * math.exp(-a * gap)
    assert spec <= frob * (1 + 1e-9) + 1e-15
    assert frob <= tr * (1 + 1e-9) + 1e-15
    assert tr <= bound * (1 + 1e-9) + 1e-15
    assert tr == pytest.approx(1 - np.sum(s**2), abs=1e-15)


def test_jacobian_norm_decays_with_slope_minus_gap():
    x = np.array([2.0, 1.0, -0.5, 0.3])  # gap 1
    a1, a2 = 10.0, 20.0
    n1 = np.linalg.norm(attn.softmax_jacobian(attn.softmax(a1 * x)), 2)
    n2 = np.linalg.norm(attn.softmax_jacobian(attn.softmax(a2 * x)), 2)
    assert (math.log(n2) - math.log(n1)) / (a2 - a1) == pytest.approx(-1.0, rel=0.01)
    assert np.linalg.norm(attn.softmax_jacobian(attn.softmax(0 * x)), 2) == pytest.approx(1 / 4)


# ------------------------------------------------------------------ 1. convexity
@given(problem(), st.floats(0.1, 10))
def test_output_inside_hull_by_support_function(qkv, tau):
    Q, K, V = qkv
    O = attn.attention(Q, K, V, tau=tau).output
    U = np.random.default_rng(0).normal(size=(200, V.shape[1]))
    pV, pO = V @ U.T, O @ U.T
    assert np.all(pO <= pV.max(axis=0) + 1e-12) and np.all(pO >= pV.min(axis=0) - 1e-12)
    assert np.all(O <= V.max(axis=0) + 1e-12) and np.all(O >= V.min(axis=0) - 1e-12)
    assert np.linalg.norm(O, axis=1).max() <= np.linalg.norm(V, axis=1).max() + 1e-12


# ------------------------------------------------------------------ 8. permutations
@given(problem(), st.randoms(use_true_random=False))
def test_permutation_equivariance_and_invariance(qkv, rnd):
    Q, K, V = qkv
    pq = list(range(Q.shape[0])); rnd.shuffle(pq)
    pk = list(range(K.shape[0])); rnd.shuffle(pk)
    out, W = attn.attention(Q, K, V)
    out_q, W_q = attn.attention(Q[pq], K, V)
    assert np.allclose(out_q, out[pq], atol=1e-12) and np.allclose(W_q, W[pq], atol=1e-15)
    out_k, W_k = attn.attention(Q, K[pk], V[pk])
    assert np.allclose(out_k, out, atol=1e-12) and np.allclose(W_k, W[:, pk], atol=1e-15)


def test_self_attention_equivariant_without_causal_mask_only():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 4))
    Ws = [rng.normal(size=(4, 3)) for _ in range(3)]
    p = rng.permutation(5)
    assert np.allclose(attn.self_attention(X[p], *Ws).output, attn.self_attention(X, *Ws).output[p], atol=1e-12)
    causal_fixed = attn.self_attention(X[p], *Ws, causal=True).output
    assert not np.allclose(causal_fixed, attn.self_attention(X, *Ws, causal=True).output[p], atol=1e-3)
    M = attn.causal_mask(5)
    assert np.allclose(attn.self_attention(X[p], *Ws, mask=M[np.ix_(p, p)]).output,
                       attn.self_attention(X, *Ws, mask=M).output[p], atol=1e-12)


# ------------------------------------------------------------------ 9. projection shapes
def test_projection_shapes_rows_and_rank():
    rng = np.random.default_rng(4)
    T, d_model, d_k, d_v = 6, 7, 3, 5
    X = rng.normal(size=(T, d_model))
    W_Q, W_K, W_V = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    Q, K, V = attn.project(X, W_Q), attn.project(X, W_K), attn.project(X, W_V)
    assert (Q.shape, K.shape, V.shape) == ((T, d_k), (T, d_k), (T, d_v))
    X2 = X.copy(); X2[4] -= 2
    assert np.flatnonzero(np.abs(attn.project(X2, W_Q) - Q).max(axis=1)).tolist() == [4]
    assert np.allclose(Q @ K.T, X @ W_Q @ W_K.T @ X.T)
    assert np.linalg.matrix_rank(W_Q @ W_K.T) == d_k
    with pytest.raises(ValueError, match=r"\(6, 7\).*\(3, 7\)"):
        attn.project(X, W_Q.T)


# ------------------------------------------------------------------ 11. FLOPs and memory
def test_flop_formula_by_hand():
    assert attn.score_flops(1, 1, 1, 1) == (2, 1, 4, 2)
    f = attn.score_flops(3, 4, 2, 5)
    assert f == attn.FlopCount(scores=48, scale=12, softmax=48, weighted_sum=120) and f.total == 228
    assert attn.score_flops(2048, 2048, 64, 64).total == 4 * attn.score_flops(1024, 1024, 64, 64).total


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.floats(0.3, 3))
def test_flops_by_counting(T_q, T_k, d_k, d_v, tau):
    rng = np.random.default_rng(T_q * 1000 + T_k * 100 + d_k * 10 + d_v)
    Q, K, V = rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))
    out, counted = attn.count_attention_flops(Q, K, V, tau=tau)
    assert counted == attn.score_flops(T_q, T_k, d_k, d_v)
    assert np.allclose(out, attn.attention(Q, K, V, tau=tau).output, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_score_matrix_bytes_equals_nbytes(dtype):
    rng = np.random.default_rng(5)
    Q, K = rng.normal(size=(33, 8)).astype(dtype), rng.normal(size=(65, 8)).astype(dtype)
    S = attn.scores(Q, K)
    assert S.dtype == dtype and S.nbytes == attn.score_matrix_bytes(33, 65, dtype)
    assert attn.score_matrix_bytes(4096, 4096, "float32") == 64 * 2**20


# ------------------------------------------------------------------ 12. masking
@given(problem(), st.randoms(use_true_random=False))
def test_boolean_mask_is_additive_minus_infinity(qkv, rnd):
    Q, K, V = qkv
    T_q, T_k = Q.shape[0], K.shape[0]
    mask = np.array([[rnd.random() < 0.5 for _ in range(T_k)] for _ in range(T_q)], dtype=bool).reshape(T_q, T_k)
    mask[np.arange(T_q), [rnd.randrange(T_k) for _ in range(T_q)]] = True
    out, W = attn.attention(Q, K, V, mask=mask)
    S = attn.scores(Q, K)
    assert np.array_equal(W, attn.softmax(S + np.where(mask, 0.0, -np.inf)))
    assert np.all(W[~mask] == 0.0)
    for i in range(T_q):
        assert np.allclose(W[i, mask[i]], attn.softmax(S[i, mask[i]]), atol=1e-15)
    # bit for bit, where no column of V comes near the subnormal range (see the next two tests)
    info = np.finfo(np.float64)
    if np.all((V == 0) | (np.abs(V) >= info.tiny / info.eps)):
        V2 = V.copy(); V2[~mask[0]] = 1e6
        assert np.array_equal(attn.attention(Q, K, V2, mask=mask).output[0], out[0])


@given(problem(), st.randoms(use_true_random=False), st.sampled_from([1e6, 1e300, -1e308, 5e-324, 2.2e-309, 0.0]))
def test_a_key_no_query_reads_has_no_influence_bit_for_bit(qkv, rnd, junk):
    """Whatever V holds, subnormal values included: the value of a key no query may read changes nothing."""
    Q, K, V = qkv
    T_q, T_k = Q.shape[0], K.shape[0]
    mask = np.array([[rnd.random() < 0.5 for _ in range(T_k)] for _ in range(T_q)], dtype=bool).reshape(T_q, T_k)
    mask[np.arange(T_q), [rnd.randrange(T_k) for _ in range(T_q)]] = True
    unread = ~mask.any(axis=0)
    out, W = attn.attention(Q, K, V, mask=mask)
    V2 = V.copy(); V2[unread] = junk
    K2 = K.copy(); K2[unread] = -junk
    assert np.array_equal(attn.attention(Q, K2, V2, mask=mask).output, out)


def test_a_key_hidden_from_one_query_can_move_its_last_bit_near_the_subnormal_range():
    """The exception attention's docstring states: one power of 2 per column of V, chosen from the values
    some query reads. Query 0 reads keys 2 and 3; key 1, hidden from it, is read by query 1."""
    V = np.full((4, 1), 2.22507386e-309)  # subnormal: V is scaled up by a power of 2 before the sum
    Q, K = np.zeros((2, 1)), np.zeros((4, 1))
    mask = np.array([[False, False, True, True], [False, True, False, False]])
    out = attn.attention(Q, K, V, mask=mask).output
    assert out[0, 0] == V[0, 0]  # scaled: the average of equal values is that value, exactly
    V2 = V.copy(); V2[1] = 1e6  # now the column needs no scaling, and the sum rounds on the subnormal grid
    moved = attn.attention(Q, K, V2, mask=mask).output[0, 0]
    assert moved != out[0, 0] and abs(moved - out[0, 0]) <= 4 * 5e-324  # a few units in the last place


@given(problem(), st.randoms(use_true_random=False), st.floats(0, 60))
def test_a_finite_penalty_leaves_a_forbidden_key_at_most_its_bound(qkv, rnd, L):
    """mathematics-attention, masking: with -L instead of -inf a forbidden key j of row i gets a weight of at most
    e^(s_ij - L - lse(readable scores of row i)), small only when L far exceeds s_ij - lse(readable)."""
    Q, K, V = qkv
    T_q, T_k = Q.shape[0], K.shape[0]
    mask = np.array([[rnd.random() < 0.5 for _ in range(T_k)] for _ in range(T_q)], dtype=bool).reshape(T_q, T_k)
    mask[np.arange(T_q), [rnd.randrange(T_k) for _ in range(T_q)]] = True
    S = attn.scores(Q, K)
    W_L = attn.softmax(np.where(mask, S, S - L))
    for i in range(T_q):
        bound = np.exp(S[i, ~mask[i]] - L - attn.logsumexp(S[i, mask[i]]))
        assert np.all(W_L[i, ~mask[i]] <= bound * (1 + 1e-12) + 1e-300)


@pytest.mark.parametrize("s_read, s_forbidden, L", [(0.0, 30.0, 20.0), (1.0, 5.0, 3.0), (0.0, 10.0, 10.0)])
def test_a_finite_penalty_smaller_than_the_scores_spread_lets_the_forbidden_key_in(s_read, s_forbidden, L):
    # two keys: the forbidden weight is exactly 1 / (1 + e^-(s_forbidden - L - s_read)), near 1 when that is large
    w = attn.softmax(np.array([s_read, s_forbidden - L]))[1]
    assert w == pytest.approx(1 / (1 + math.exp(-(s_forbidden - L - s_read))), rel=1e-12)
    assert w >= 0.5


def test_finite_penalty_on_a_fully_masked_row_reads_everything():
    s = np.array([0.3, -1.2, 2.0])
    assert np.allclose(attn.softmax(s - 1e9), attn.softmax(s))
    with pytest.raises(ValueError, match="may read no key"):
        attn.attention(np.ones((1, 2)), np.ones((3, 2)), np.ones((3, 1)), mask=np.zeros((1, 3), dtype=bool))


# ------------------------------------------------------------------ 13. dot product against cosine
def test_dot_and_cosine_disagree_for_unequal_norms():
    rng = np.random.default_rng(6)
    for _ in range(50):
        k1, k2 = rng.normal(size=4), rng.normal(size=4)
        r1, r2 = sorted(rng.uniform(0.2, 5, size=2))[::-1]
        if r1 < r2 * 1.01:
            continue
        k1 *= r1 / np.linalg.norm(k1); k2 *= r2 / np.linalg.norm(k2)
        u1, u2 = k1 / r1, k2 / r2
        phi = math.acos(np.clip(u1 @ u2, -1, 1))
        perp = u1 - (u1 @ u2) * u2; perp /= np.linalg.norm(perp)
        a_star = math.atan2(r2 - r1 * math.cos(phi), r1 * math.sin(phi))
        alpha = (max(a_star, 0.0) + phi / 2) / 2
        q = math.cos(alpha) * u2 + math.sin(alpha) * perp
        dot = attn.scores(q[None], np.stack([k1, k2]))[0]
        cos = attn.cosine_similarity(q[None], np.stack([k1, k2]))[0]
        assert dot[0] > dot[1] and cos[1] > cos[0]


def test_equal_norms_same_ranking_and_cosine_cap():
    rng = np.random.default_rng(7)
    K = rng.normal(size=(6, 5)); K *= 2 / np.linalg.norm(K, axis=1, keepdims=True)
    Q = rng.normal(size=(300, 5))
    assert np.array_equal(np.argsort(attn.scores(Q, K), axis=1), np.argsort(attn.cosine_similarity(Q, K), axis=1))
    tau_eff = 1 / (np.linalg.norm(Q, axis=1, keepdims=True) * 2 / math.sqrt(5))
    assert np.allclose(attn.softmax(attn.scores(Q, K)), attn.softmax(attn.cosine_similarity(Q, K) / tau_eff))
    for tau in (0.5, 1.0, 2.0):
        w = attn.softmax(attn.cosine_similarity(Q, rng.normal(size=(6, 5))), tau=tau)
        assert w.max() <= 1 / (1 + 5 * math.exp(-2 / tau))
    assert np.allclose(attn.cosine_similarity([[1.0, 0.0]], [[2.0, 0.0], [0.0, 3.0], [-1.0, -1.0]]),
                       [[1.0, 0.0, -1 / math.sqrt(2)]])


# ------------------------------------------------------------------ 14. entropy against temperature
def test_entropy_by_hand():
    assert attn.entropy([0.25] * 4) == pytest.approx(math.log(4))
    assert attn.entropy([0.0, 1.0, 0.0]) == 0.0
    assert attn.entropy([0.5, 0.5, 0.0]) == pytest.approx(math.log(2))
    assert np.allclose(attn.entropy(np.array([[0.5, 0.5], [1.0, 0.0]])), [math.log(2), 0.0])


@given(logits(2, 10), st.floats(0.05, 20))
def test_entropy_derivative_in_tau(x, tau):
    assume(np.ptp(x) > 1e-3)
    H = lambda t: float(attn.entropy(attn.softmax(x, tau=t)))
    h = 1e-6 * tau
    fd = (H(tau + h) - H(tau - h)) / (2 * h)
    d = float(attn.entropy_tau_derivative(x, tau))
    assert d >= 0
    assert abs(fd - d) <= 1e-5 * max(1.0, abs(d)) + 1e-7


@given(logits(2, 8))
def test_entropy_increases_from_log_m_to_log_n(x):
    x = np.round(x, 1)  # allow ties at the maximum
    assume(np.ptp(x) > 0.5)
    # the smallest τ must be far below the gap (≥ 0.1 after rounding) between the largest two distinct logits
    taus = np.logspace(-4, 3, 80)
    H = np.array([float(attn.entropy(attn.softmax(x, tau=t))) for t in taus])
    assert np.all(np.diff(H) >= -1e-12)
    m = int(np.sum(x == x.max()))
    assert H[0] == pytest.approx(math.log(m), abs=1e-6)
    assert H[-1] == pytest.approx(math.log(x.size), abs=1e-3)


def test_constant_logits_have_zero_entropy_derivative():
    assert attn.entropy_tau_derivative(np.full(5, 2.0), tau=0.7) == pytest.approx(0.0, abs=1e-15)


# ------------------------------------------------------------------ 15. gradient of log-sum-exp
@given(logits(1, 10))
def test_lse_gradient_is_softmax_and_smooth_max(x):
    g = central_jacobian(lambda z: np.atleast_1d(attn.logsumexp(z)), x)[0]
    assert np.abs(g - attn.softmax(x)).max() < 1e-7
    L = float(attn.logsumexp(x))
    assert x.max() <= L <= x.max() + math.log(x.size) + 1e-12
    for tau in (1.0, 0.1, 0.01):
        excess = tau * float(attn.logsumexp(x / tau)) - x.max()
        assert -1e-13 * max(1.0, abs(x.max())) <= excess <= tau * math.log(x.size) + 1e-9


def test_lse_upper_bound_attained_for_equal_entries_and_hessian_is_jacobian():
    assert attn.logsumexp(np.full(7, -3.0)) == pytest.approx(-3 + math.log(7), abs=1e-14)
    x = np.array([0.2, -1.0, 0.7])
    H = central_jacobian(lambda z: attn.softmax(z), x)  # Jacobian of the gradient = Hessian of lse
    assert np.allclose(H, attn.softmax_jacobian(attn.softmax(x)), atol=1e-9)


# ------------------------------------------------------------------ errors of attn.derivatives, attn.measures, attn.cost
@pytest.mark.parametrize("s, match", [
    ([0.5, -0.1, 0.6], "non-negative"),
    ([0.5, 0.6], "sum to 1"),
    ([0.5, np.nan], "finite"),
    (0.5, "scalar"),
    ([], "empty"),
])
def test_probability_vector_errors(s, match):
    for f in (attn.softmax_jacobian, attn.softmax_jacobian_norm, attn.entropy):
        with pytest.raises(ValueError, match=match):
            f(s)


def test_calculus_type_and_tau_errors():
    with pytest.raises(TypeError):
        attn.softmax_jacobian(["a", "b"])
    with pytest.raises(ValueError, match="tau"):
        attn.softmax_jacobian([0.5, 0.5], tau=0)
    with pytest.raises(ValueError, match="tau"):
        attn.entropy_tau_derivative([1.0, 2.0], tau=float("nan"))
    with pytest.raises(ValueError, match="finite"):
        attn.entropy_tau_derivative([1.0, -np.inf])


def test_attention_grad_query_errors():
    K, V = np.ones((3, 2)), np.ones((3, 4))
    with pytest.raises(ValueError, match="vector"):
        attn.attention_grad_query(np.ones((1, 2)), K, V)
    with pytest.raises(ValueError, match=r"q has shape \(3,\) and K has shape \(3, 2\)"):
        attn.attention_grad_query(np.ones(3), K, V)
    with pytest.raises(ValueError, match=r"K has shape \(3, 2\) and V has shape \(2, 4\)"):
        attn.attention_grad_query(np.ones(2), K, V[:2])
    with pytest.raises(ValueError, match="finite"):
        attn.attention_grad_query(np.array([np.nan, 1.0]), K, V)
    with pytest.raises(ValueError, match="tau"):
        attn.attention_grad_query(np.ones(2), K, V, tau=-1)


def test_cosine_similarity_errors():
    with pytest.raises(ValueError, match="row 1 of K is zero"):
        attn.cosine_similarity([[1.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="width d_k"):
        attn.cosine_similarity([[1.0, 0.0]], [[1.0, 1.0, 1.0]])


def test_count_errors():
    with pytest.raises(ValueError, match="d_k must be at least 1; got 0"):
        attn.score_flops(2, 2, 0, 2)
    with pytest.raises(TypeError, match="T_q"):
        attn.score_flops(2.5, 2, 2, 2)
    with pytest.raises(TypeError, match="T_k"):
        attn.score_flops(2, True, 2, 2)
    with pytest.raises(ValueError, match="T_k must be at least 1"):
        attn.score_matrix_bytes(3, -1)
    with pytest.raises(ValueError, match="floating dtype"):
        attn.score_matrix_bytes(3, 3, np.int32)
    with pytest.raises(ValueError, match="NumPy floating dtype"):
        attn.score_matrix_bytes(3, 3, "float-ish")
    with pytest.raises(ValueError, match="T_k must agree"):
        attn.count_attention_flops(np.ones((2, 2)), np.ones((3, 2)), np.ones((2, 1)))
    with pytest.raises(ValueError, match="n must be at least 1"):
        attn.random_logits(4, 3, 0)
