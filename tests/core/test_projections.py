"""Proposition 2: Q, K and V are three projections of one token vector, and only V reaches the output."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.path import Path

import attn
from attn.widgets.projections import ProjectionsExplorer, rotation_scale

dims = st.integers(1, 6)
seeds = st.integers(0, 2**32 - 1)


def problem(seed, T, d_model, d_k, d_v):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(T, d_model)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_v)), rng)


def test_three_projections_by_hand():
    # X = I: each token is a basis vector, so its three rows are the rows of W_Q, W_K, W_V.
    X = np.eye(2)
    W_Q, W_K, W_V = np.array([[1.0, 0.0], [0.0, 0.0]]), np.eye(2), np.array([[0.0, 2.0], [4.0, 0.0]])
    Q, K, V = attn.project(X, W_Q), attn.project(X, W_K), attn.project(X, W_V)
    np.testing.assert_array_equal(Q, W_Q)
    np.testing.assert_array_equal(V, W_V)
    out, w = attn.self_attention(X, W_Q, W_K, W_V)
    # token 1: q = (1, 0), scores (1/√2, 0); token 2: q = 0, scores (0, 0) -> uniform
    a = np.exp(1 / np.sqrt(2)) / (np.exp(1 / np.sqrt(2)) + 1)
    np.testing.assert_allclose(w, [[a, 1 - a], [0.5, 0.5]])
    np.testing.assert_allclose(out[1], [2.0, 1.0])  # the plain average of v_1 = (0, 2) and v_2 = (4, 0)


@given(seeds, dims, dims, dims, dims)
def test_shapes_and_rows(seed, T, d_model, d_k, d_v):
    X, W_Q, W_K, W_V, _ = problem(seed, T, d_model, d_k, d_v)
    Q, K, V = attn.project(X, W_Q), attn.project(X, W_K), attn.project(X, W_V)
    assert Q.shape == K.shape == (T, d_k) and V.shape == (T, d_v)
    out, w = attn.self_attention(X, W_Q, W_K, W_V)
    assert out.shape == (T, d_v) and w.shape == (T, T)
    t = seed % T
    np.testing.assert_allclose(Q[t], X[t] @ W_Q)
    np.testing.assert_allclose(V[t], X[t] @ W_V)


@given(seeds, dims, dims, dims, dims)
def test_weights_never_see_W_V_and_see_W_Q_W_K_only_through_their_product(seed, T, d_model, d_k, d_v):
    X, W_Q, W_K, W_V, rng = problem(seed, T, d_model, d_k, d_v)
    _, w = attn.self_attention(X, W_Q, W_K, W_V)
    _, w_v = attn.self_attention(X, W_Q, W_K, rng.normal(size=W_V.shape))
    np.testing.assert_array_equal(w_v, w)
    R = np.linalg.qr(rng.normal(size=(d_k, d_k)))[0] * rng.uniform(0.5, 2.0, size=d_k)  # invertible, well conditioned
    _, w_r = attn.self_attention(X, W_Q @ R, W_K @ np.linalg.inv(R).T, W_V)
    np.testing.assert_allclose(w_r, w, atol=1e-10)
    M = W_Q @ W_K.T  # (d_model, d_model)
    np.testing.assert_allclose(w, attn.softmax(X @ M @ X.T / np.sqrt(d_k)), atol=1e-12)


@given(seeds, dims, dims, dims, dims, st.floats(-5, 5))
def test_output_is_linear_in_W_V(seed, T, d_model, d_k, d_v, s):
    X, W_Q, W_K, W_V, rng = problem(seed, T, d_model, d_k, d_v)
    E = rng.normal(size=W_V.shape)
    out, w = attn.self_attention(X, W_Q, W_K, W_V)
    out_s, _ = attn.self_attention(X, W_Q, W_K, W_V + s * E)
    np.testing.assert_allclose(out_s, out + s * (w @ X @ E), atol=1e-9)
    np.testing.assert_allclose(out, (w @ X) @ W_V, atol=1e-12)


@given(seeds, st.floats(-180, 180), st.floats(-180, 180), st.floats(0, 4), st.floats(0, 4))
def test_any_W_Q_W_K_leaves_the_output_inside_the_hull_of_the_values(seed, aq, ak, sq, sk):
    X = ProjectionsExplorer.X
    W_V = rotation_scale(float(np.random.default_rng(seed).uniform(-180, 180)), 1.3)
    V = X @ W_V
    out, w = attn.self_attention(X, rotation_scale(aq, sq), rotation_scale(ak, sk), W_V)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    c = V.mean(axis=0)
    ring = V[np.argsort(np.arctan2(V[:, 1] - c[1], V[:, 0] - c[0]))]
    assert Path(np.vstack([ring, ring[:1]])).contains_points(out, radius=1e-9).all()


@given(st.floats(-360, 360), st.floats(0.01, 5))
def test_rotation_scale_is_a_similarity(angle, scale):
    W = rotation_scale(angle, scale)
    np.testing.assert_allclose(W @ W.T, scale**2 * np.eye(2), atol=1e-12)
    assert np.isclose(np.linalg.det(W), scale**2)
    x = np.array([1.0, 0.0])
    a = np.radians(angle)
    np.testing.assert_allclose(x @ W, scale * np.array([np.cos(a), np.sin(a)]), atol=1e-12)  # anticlockwise


def test_turning_W_Q_and_W_K_together_changes_no_weight():
    e = ProjectionsExplorer()
    w0 = e.compute()["weights"]
    e.update(angle_Q=e.params["angle_Q"] + 70, angle_K=e.params["angle_K"] + 70)
    np.testing.assert_allclose(e.compute()["weights"], w0, atol=1e-12)


def test_shape_mismatch_is_named():
    with pytest.raises(ValueError, match="W_Q"):
        attn.self_attention(np.ones((3, 4)), np.ones((5, 2)), np.ones((4, 2)), np.ones((4, 2)))
