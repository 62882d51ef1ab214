"""Proposition 3: Var(q·k) = d_k, the softmax Jacobian and its bounds, and saturation without the divisor."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn.widgets.divisor import D_K_GRID, saturation_curves


def variance_and_se(x):
    c = x - x.mean()
    var = float(np.mean(c**2))
    return var, math.sqrt((np.mean(c**4) - var**2) / len(x))


@pytest.mark.parametrize("d_k", [1, 3, 16, 128, 512])
def test_monte_carlo_variance_of_dot_products(d_k):
    x = attn.random_logits(d_k, T_k=1, n=8000, scaled=False, rng=d_k)[:, 0]  # independent draws
    var, se = variance_and_se(x)
    assert abs(var - d_k) < 4 * se, (var, se)
    assert abs(x.mean()) < 4 * math.sqrt(var / len(x))
    var_s, se_s = variance_and_se(x / math.sqrt(d_k))
    assert abs(var_s - 1) < 4 * se_s, (var_s, se_s)


@pytest.mark.parametrize("d_k", [2, 64])
def test_variance_needs_only_unit_variance_not_gaussian(d_k):
    # Rademacher (±1) entries: each product q_a k_a is ±1, so Var(q·k) = d_k as well.
    rng = np.random.default_rng(d_k)
    q, k = rng.choice([-1.0, 1.0], size=(2, 20000, d_k))
    var, se = variance_and_se(np.sum(q * k, axis=1))
    assert abs(var - d_k) < 4 * se


def test_scaled_logits_are_the_unscaled_ones_over_sqrt_d_k():
    x = attn.random_logits(100, T_k=8, n=5, scaled=False, rng=1)
    z = attn.random_logits(100, T_k=8, n=5, scaled=True, rng=1)
    np.testing.assert_allclose(z, x / 10.0)


logit_rows = arrays(np.float64, st.integers(2, 8), elements=st.floats(-20, 20))


@given(logit_rows)
def test_softmax_jacobian_matches_finite_differences(x):
    s = attn.softmax(x)
    h = 1e-6
    n = len(x)
    J_fd = np.column_stack([(attn.softmax(x + h * e) - attn.softmax(x - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(attn.softmax_jacobian(s), J_fd, atol=1e-7)


def test_softmax_jacobian_by_hand():
    J = attn.softmax_jacobian([0.5, 0.5])
    np.testing.assert_allclose(J, [[0.25, -0.25], [-0.25, 0.25]])
    np.testing.assert_allclose(attn.softmax_jacobian([1.0, 0.0]), np.zeros((2, 2)))  # saturated: no gradient


@given(logit_rows, st.floats(0.01, 300))
def test_jacobian_norm_bounds(x, spread):
    """Part 2: ‖J‖_F ≤ 1 - ‖w‖² ≤ 2(1 - max w) ≤ 2(T-1)e^{-Δ}, the bound every page states."""
    x = spread * x / (np.abs(x).max() + 1)
    w = attn.softmax(x)
    J = attn.softmax_jacobian(w)
    norm = float(np.linalg.norm(J))
    np.testing.assert_allclose(attn.softmax_jacobian_norm(w), norm, atol=1e-7)
    top = np.sort(x)[-2:]
    b1 = 1 - np.sum(w**2)
    b2 = 2 * (1 - w.max())
    b3 = 2 * (len(x) - 1) * np.exp(-(top[1] - top[0]))
    assert norm <= b1 + 1e-12 and b1 <= b2 + 1e-12 and b2 <= b3 + 1e-12
    assert np.isclose(np.trace(J), b1)  # tr J = 1 - ‖w‖² exactly: J is PSD, so ‖J‖_F ≤ tr J
    assert np.linalg.eigvalsh(J).min() > -1e-12


def test_the_bound_is_attained_by_two_keys():
    """With two keys J = p(1-p)[[1,-1],[-1,1]]: ‖J‖_F = 2p(1-p) = 1 - ‖w‖², so the first bound cannot be
    tightened (the sum-of-entries bound 2(1 - ‖w‖²) it replaced is off by a factor 2 here)."""
    for p in (0.5, 0.9, 0.999):
        w = np.array([p, 1 - p])
        np.testing.assert_allclose(np.linalg.norm(attn.softmax_jacobian(w)), 1 - np.sum(w**2), rtol=1e-12)


@given(logit_rows, st.floats(0.01, 300), st.integers(0, 2**32 - 1))
def test_gradient_through_the_softmax_is_bounded_by_the_jacobian(x, spread, seed):
    """The step from Jacobian to gradient: ‖∂ℓ/∂x‖ = ‖J ∂ℓ/∂w‖ ≤ ‖J‖_F ‖∂ℓ/∂w‖, checked on a random
    linear loss ℓ = g·w against finite differences of ℓ through attn.softmax."""
    x = spread * x / (np.abs(x).max() + 1)
    g = np.random.default_rng(seed).normal(size=x.size)          # ∂ℓ/∂w for ℓ(w) = g·w
    w = attn.softmax(x)
    grad = attn.softmax_jacobian(w) @ g                          # ∂ℓ/∂x (J is symmetric)
    h = 1e-6
    fd = np.array([(g @ attn.softmax(x + h * e) - g @ attn.softmax(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(grad, fd, atol=1e-6)
    assert np.linalg.norm(grad) <= attn.softmax_jacobian_norm(w) * np.linalg.norm(g) + 1e-12


def test_divisor_is_a_temperature_sqrt_d_k():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 16)), rng.normal(size=(5, 16)), rng.normal(size=(5, 2))
    scaled = attn.attention(Q, K, V)
    raw_at_tau = attn.attention(Q, K, V, scale=1.0, tau=4.0)  # √16 = 4
    np.testing.assert_allclose(scaled.weights, raw_at_tau.weights)
    np.testing.assert_allclose(attn.softmax(Q @ K.T, tau=4.0), scaled.weights)


def test_saturation_without_the_divisor_and_not_with_it():
    c = saturation_curves(D_K_GRID, T=8, n=400)
    i16 = D_K_GRID.index(16)
    g_u, g_s = c["jac_norm_unscaled"], c["jac_norm_scaled"]
    assert np.all(np.diff(g_u[i16:]) < 0)  # past d_k = 16 the unscaled gradient falls at every doubling
    assert g_u[-1] < 1e-3 * g_s[-1]
    assert np.ptp(g_s) < 0.1  # the scaled gradient does not depend on d_k
    assert c["max_weight_unscaled"][-1] > 0.9 > 0.5 > c["max_weight_scaled"].max()
    np.testing.assert_allclose(c["max_weight_unscaled"][0], c["max_weight_scaled"][0])  # d_k = 1: no difference


@given(st.integers(0, 1000), st.sampled_from([4, 64, 1024]))
def test_unscaled_gap_is_sqrt_d_k_times_the_scaled_gap(seed, d_k):
    x = attn.random_logits(d_k, T_k=6, n=1, scaled=False, rng=seed)[0]
    z = x / math.sqrt(d_k)
    gap = lambda v: np.diff(np.sort(v)[-2:])[0]  # noqa: E731
    assert np.isclose(gap(x), math.sqrt(d_k) * gap(z))
    bound = 2 * 5 * math.exp(-math.sqrt(d_k) * gap(z))             # part 3: 2(T-1)exp(-√d_k Δ(s)), T = 6
    assert attn.softmax_jacobian_norm(attn.softmax(x)) <= bound + 1e-12


def test_entropy_limits_of_temperature():
    x = np.array([2.0, 1.0, 0.5, -1.0])
    assert attn.entropy(attn.softmax(x, tau=1e-3)) < 1e-6
    assert abs(attn.entropy(attn.softmax(x, tau=1e4)) - math.log(4)) < 1e-6
    taus = np.logspace(-2, 2, 50)
    H = [float(attn.entropy(attn.softmax(x, tau=t))) for t in taus]
    assert np.all(np.diff(H) > -1e-12)  # entropy rises with τ
