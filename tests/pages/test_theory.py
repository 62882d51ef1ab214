"""The four theory items (chapters/theory.md), each checked on attn."""
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn.cost import score_matrix_bytes
from attn.derivatives import softmax_jacobian_norm
from attn.examples import random_logits
from attn.examples import sentence
from attn.positional import sinusoidal_encoding

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@st.composite
def sequence_and_block(draw, max_t=7, max_d=5):
    T, d, d_k, d_v = draw(st.integers(1, max_t)), draw(st.integers(1, max_d)), draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    X = draw(arrays(np.float64, (T, d), elements=finite))
    W_Q, W_K, W_V = (draw(arrays(np.float64, s, elements=finite)) for s in ((d, d_k), (d, d_k), (d, d_v)))
    perm = np.array(draw(st.permutations(range(T))))
    return X, W_Q, W_K, W_V, perm


# --- 1. no notion of order without positional information ------------------------------------------------

@given(sequence_and_block())
def test_self_attention_is_permutation_equivariant(args):
    X, W_Q, W_K, W_V, perm = args
    out, A = attn.self_attention(X, W_Q, W_K, W_V)
    out_p, A_p = attn.self_attention(X[perm], W_Q, W_K, W_V)
    scale = 1 + np.abs(X @ W_V).max()
    np.testing.assert_allclose(out_p, out[perm], rtol=0, atol=1e-9 * scale)  # SA(PX) = P SA(X)
    np.testing.assert_allclose(A_p, A[perm][:, perm], rtol=0, atol=1e-9)     # A(PX) = P A P^T


def test_positional_encoding_breaks_equivariance():
    rng = np.random.default_rng(0)
    for _ in range(200):
        T, d = rng.integers(2, 9), rng.integers(2, 9)
        X = rng.normal(size=(T, d))
        W_Q, W_K, W_V = rng.normal(size=(d, 3)), rng.normal(size=(d, 3)), rng.normal(size=(d, 2))
        perm = rng.permutation(T)
        if np.array_equal(perm, np.arange(T)):
            continue
        E = sinusoidal_encoding(T, d)
        a = attn.self_attention(X + E, W_Q, W_K, W_V).output
        b = attn.self_attention(X[perm] + E, W_Q, W_K, W_V).output
        assert np.abs(b - a[perm]).max() > 1e-6


def _witness_violation(E, perm, d_k, d_v):
    """The point of the theory page's proof: X = -E, W_Q, W_K, W_V with first column a non-zero row G_r of
    G = E - PE. Returns entry (r, 0) of SelfAttention(PX + E) - P SelfAttention(X + E) and g(lambda)."""
    T, d_model = E.shape
    G = E - E[perm]
    assert np.abs(G.sum(axis=0)).max() < 1e-12  # the sum of G's rows is the zero vector (not each row's sum)
    r = int(np.argmax(np.linalg.norm(G, axis=1)))
    W_Q, W_K, W_V = (np.zeros((d_model, width)) for width in (d_k, d_k, d_v))
    for W in (W_Q, W_K, W_V):
        W[:, 0] = G[r]
    X = -E
    F = attn.self_attention(X[perm] + E, W_Q, W_K, W_V).output - attn.self_attention(X + E, W_Q, W_K, W_V).output[perm]
    beta = G @ G[r]
    return F[r, 0], attn.softmax(beta * beta[r] / math.sqrt(d_k)) @ beta


@pytest.mark.parametrize("T, d_model, d_k, d_v", [(2, 1, 1, 1), (3, 2, 1, 2), (6, 4, 3, 2), (8, 7, 5, 1)])
def test_the_proofs_witness_breaks_the_identity_whenever_PE_differs_from_E(T, d_model, d_k, d_v):
    rng = np.random.default_rng(T * 100 + d_model)
    for E in (sinusoidal_encoding(T, d_model), rng.normal(size=(T, d_model))):
        for _ in range(10):
            perm = rng.permutation(T)
            if np.array_equal(E[perm], E):
                continue
            violation, g = _witness_violation(E, perm, d_k, d_v)
            assert g > 0 and violation == pytest.approx(g, rel=1e-9, abs=1e-15)


def test_sinusoidal_encoding_by_hand_and_errors():
    E = sinusoidal_encoding(3, 4)
    np.testing.assert_allclose(E[0], [0, 1, 0, 1])
    np.testing.assert_allclose(E[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])
    assert sinusoidal_encoding(5, 7).shape == (5, 7)
    with pytest.raises(ValueError):
        sinusoidal_encoding(0, 4)


def test_reversed_sentence_gives_reversed_outputs():
    tokens, X, W_Q, W_K, W_V = sentence()
    rev = np.arange(len(tokens))[::-1]
    np.testing.assert_allclose(attn.self_attention(X[rev], W_Q, W_K, W_V).output,
                               attn.self_attention(X, W_Q, W_K, W_V).output[rev], atol=1e-12)


def test_repeated_token_is_indistinguishable_until_a_causal_mask():
    tokens, X, W_Q, W_K, W_V = sentence()
    a, b = [j for j, w in enumerate(tokens) if w == "the"]
    out, A = attn.self_attention(X, W_Q, W_K, W_V)
    np.testing.assert_array_equal(out[a], out[b])
    np.testing.assert_array_equal(A[:, a], A[:, b])
    out_c, A_c = attn.self_attention(X, W_Q, W_K, W_V, causal=True)
    assert np.abs(out_c[a] - out_c[b]).max() > 1e-3
    # causal rows are the full rows renormalised over j <= i
    m = attn.causal_mask(len(tokens))
    np.testing.assert_allclose(A_c, np.where(m, A, 0) / np.where(m, A, 0).sum(axis=1, keepdims=True), atol=1e-14)


# --- 2. saturation and temperature limits ----------------------------------------------------------------

scores_row = arrays(np.float64, st.integers(2, 8), elements=st.floats(-5, 5, allow_nan=False))
taus = st.floats(1e-2, 1e3)


@given(scores_row, taus)
def test_distance_to_one_hot_bounds(s, tau):
    order = np.sort(s)
    gap = order[-1] - order[-2]
    assume(gap > 1e-6)
    p = attn.softmax(s, tau=tau)
    m = int(np.argmax(s))
    off = 1 - p[m]
    e = math.exp(-gap / tau)
    assert e / (1 + e) <= off + 1e-12
    assert off <= (s.size - 1) * e + 1e-12
    np.testing.assert_allclose(np.abs(p - np.eye(s.size)[m]).sum(), 2 * off, atol=1e-12)


@given(scores_row, taus, st.data())
def test_distance_to_uniform_bounds(s, tau, data):
    T = s.size
    R = s.max() - s.min()
    p = attn.softmax(s, tau=tau)
    bound = math.expm1(R / tau) if R / tau < 700 else math.inf
    assert np.abs(T * p - 1).max() <= bound + 1e-12
    V = data.draw(arrays(np.float64, (T, 2), elements=finite))
    o, vbar = p @ V, V.mean(axis=0)
    spread = np.linalg.norm(V - vbar, axis=1).max()
    if spread == 0:  # all value rows equal: the output is that row, whatever the weights
        assert np.linalg.norm(o - vbar) <= 1e-12 * max(1.0, np.abs(V).max())
    else:
        assert np.linalg.norm(o - vbar) <= bound * spread + 1e-12


def test_limits_of_the_output():
    from attn.examples import figure3
    q, K, V = figure3()
    m = int(np.argmax(attn.scores(q, K)))
    np.testing.assert_allclose(attn.attention(q, K, V, tau=1e-3).output[0], V[m], atol=1e-12)
    np.testing.assert_allclose(attn.attention(q, K, V, tau=1e6).output[0], V.mean(axis=0), atol=1e-5)


def test_tied_maximum_goes_to_uniform_over_the_ties():
    np.testing.assert_allclose(attn.softmax([1.0, 3.0, 3.0, 0.0], tau=1e-3), [0, 0.5, 0.5, 0], atol=1e-12)


@given(scores_row, st.floats(0.01, 100))
def test_scaling_scores_is_inverse_temperature(s, c):
    np.testing.assert_allclose(attn.softmax(c * s), attn.softmax(s, tau=1 / c), rtol=1e-9, atol=1e-15)


# --- 3. why 1/sqrt(d_k) keeps gradients alive -----------------------------------------------------------

@given(scores_row)
def test_jacobian_norm_bounded_by_mass_off_the_winner(s):
    p = attn.softmax(s)
    J = np.diag(p) - np.outer(p, p)
    nF = np.linalg.norm(J)
    np.testing.assert_allclose(softmax_jacobian_norm(p), nF, atol=1e-12)
    assert nF <= np.abs(J).sum() + 1e-12
    np.testing.assert_allclose(np.abs(J).sum(), 2 * (1 - np.sum(p**2)), atol=1e-12)
    assert nF <= 1 - np.sum(p**2) + 1e-12                      # the page's bound: ‖J‖_F ≤ tr J = 1 - ‖w‖²
    assert 1 - np.sum(p**2) <= 2 * (1 - p.max()) + 1e-12


@pytest.mark.parametrize("d_k", [4, 64, 1024])
def test_variance_of_dot_products_is_d_k_and_one_after_scaling(d_k):
    x = random_logits(d_k, T_k=16, n=1000, scaled=False, rng=d_k)
    assert x.var() == pytest.approx(d_k, rel=0.1)
    assert (x / math.sqrt(d_k)).var() == pytest.approx(1.0, rel=0.1)


def test_unscaled_gradient_fades_scaled_does_not():
    def mean_and_median(d_k, scaled):
        x = random_logits(d_k, T_k=16, n=1000, scaled=False, rng=d_k)
        n = softmax_jacobian_norm(attn.softmax(x / math.sqrt(d_k) if scaled else x))
        return n.mean(), np.median(n)

    sc = [mean_and_median(d, True)[0] for d in (4, 64, 1024)]
    assert max(sc) - min(sc) < 0.03  # flat in d_k
    un_mean, un_median = mean_and_median(1024, False)
    assert un_mean < 0.3 * sc[-1]
    assert un_median < 1e-3 * sc[-1]


def test_over_random_rows_the_mean_falls_like_a_power_and_the_median_exponentially():
    """The Mathematics page's lemma gives an exponential fall for one fixed row; over random rows without the divisor
    the mean Jacobian norm falls only like d_k^(-1/2), the median (the typical row) far faster, like
    e^(-delta_med sqrt(d_k)): the condition the page now states."""
    d_ks = np.array([64, 256, 1024])
    means, medians = [], []
    for d_k in d_ks:
        x = np.vstack([random_logits(int(d_k), T_k=16, n=500, scaled=False, rng=[int(d_k), c]) for c in range(4)])
        norms = softmax_jacobian_norm(attn.softmax(x))
        means.append(norms.mean())
        medians.append(np.median(norms))
    slope = np.polyfit(np.log(d_ks), np.log(means), 1)[0]
    assert -0.65 < slope < -0.3                                   # a power of d_k, near -1/2
    # an exponential in sqrt(d_k): log median against sqrt(d_k) falls steadily, far below the power law
    fall = -np.diff(np.log(medians)) / np.diff(np.sqrt(d_ks))
    assert np.all(fall > 0.2) and medians[-1] / medians[0] < (means[-1] / means[0]) ** 4


# --- 4. the quadratic cost -----------------------------------------------------------------------------------

def test_score_matrix_memory_float32():
    assert score_matrix_bytes(1024, 1024, np.float32) == 4 * 2**20  # 4 MiB
    assert score_matrix_bytes(131072, 131072, np.float32) == 64 * 2**30  # 64 GiB
    Ts = 1024 * 2 ** np.arange(8)
    mem = [score_matrix_bytes(int(T), int(T), np.float32) for T in Ts]
    assert all(b / a == 4 for a, b in zip(mem, mem[1:]))
    Q = np.ones((300, 8), np.float32)
    assert score_matrix_bytes(300, 300, np.float32) == attn.scores(Q, Q).nbytes


def test_blocked_attention_matches_full_attention():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(256, 16)), rng.normal(size=(256, 16)), rng.normal(size=(256, 8))
    np.testing.assert_allclose(attn.blocked_attention(Q, K, V, block_size=32), attn.attention(Q, K, V).output,
                               atol=1e-12)


def _longest_path(reads):
    """Largest shortest-path length from j to i over j < i; reads[i, j] = i hears j in one step."""
    T = reads.shape[0]
    dist = np.where(np.eye(T, dtype=bool), 0, np.inf)
    frontier, step = np.eye(T, dtype=bool), 0
    while frontier.any():
        step += 1
        frontier = (reads.astype(float) @ frontier > 0) & np.isinf(dist)
        dist[frontier] = step
    return int(dist[np.tril(np.ones((T, T), dtype=bool), -1)].max())


@pytest.mark.parametrize("T", [2, 8, 64])
def test_path_length_one_for_attention_T_minus_one_for_a_recurrence(T):
    assert _longest_path(attn.causal_mask(T)) == 1
    assert _longest_path(np.eye(T, k=-1, dtype=bool)) == T - 1
