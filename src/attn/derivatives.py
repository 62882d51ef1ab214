"""Derivatives of softmax and attention: the closed forms the Mathematics strand derives, in NumPy only.

The softmax Jacobian and its norm, the Jacobian of an attention output row with
respect to its query, and the derivative of a softmax row's entropy with respect to
the temperature τ. The book checks each against finite differences and mpmath.
Row convention as everywhere in ``attn``: Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v).
"""
from __future__ import annotations

import numpy as np

from ._precision import (compute, divide_by_tau, finfo, locate, multiply_by, require_finite, result_dtype, to_dtype,
                         wide_dtype, working_dtype)
from ._validate import as_float_array, check_axis, check_finite, check_probabilities, check_scale, check_tau
from .softmax import _softmax_work, softmax

__all__ = ["attention_grad_query", "entropy_tau_derivative", "softmax_jacobian", "softmax_jacobian_norm"]


def softmax_jacobian(w, tau: float = 1.0) -> np.ndarray:
    r"""Jacobian of the softmax with temperature, written through its output.

    If :math:`w = \operatorname{softmax}(x/\tau)` then

    .. math:: \frac{\partial w_i}{\partial x_j} = \frac{1}{\tau}\bigl(\delta_{ij} w_i - w_i w_j\bigr),
              \qquad J = \frac{1}{\tau}\bigl(\operatorname{diag}(w) - w w^\top\bigr).

    Parameters
    ----------
    w : array_like, shape (..., n), real
        Softmax outputs (non-negative, summing to 1 along the last axis), e.g.
        ``attn.softmax(x, tau)``. Leading axes are a batch.
    tau : float, default 1.0
        The temperature that produced ``w``; finite and > 0.

    Returns
    -------
    ndarray, shape (..., n, n)
        Symmetric, positive semi-definite, every row summing to 0; float dtype of ``w``.

    Dtypes
    ------
    float32 and float64 are computed in their own precision, float16 and bfloat16 in
    float32 and rounded back; integers give float64. The division by τ is done in float64
    when τ is not a normal number of that precision (τ is never cast to 0).

    Raises
    ------
    ValueError
        ``w`` is empty, a scalar, non-finite, has a negative entry, or a slice
        that does not sum to 1 (within ``sqrt(eps)`` of its dtype plus ``n · eps`` of float32, or of
        float64 for float64 input); ``tau`` is not a finite number > 0; an entry ``w_i(1 - w_i)/τ`` that
        the dtype cannot hold (τ tiny), naming the index.
    TypeError
        ``w`` is not real-valued.

    References
    ----------
    Bridle (1990); Goodfellow, Bengio & Courville (2016), *Deep Learning*, §6.2.2.3.
    """
    tau = check_tau(tau)
    w = check_probabilities("w", w)
    n = w.shape[-1]
    ww = w.astype(working_dtype(w.dtype))
    diag = ww[..., :, None] * np.eye(n, dtype=ww.dtype)  # (..., n, n)
    outer = ww[..., :, None] * ww[..., None, :]  # (..., n, 1) * (..., 1, n) -> (..., n, n)
    return _over_tau(diag - outer, tau, w.dtype, "softmax_jacobian(w, tau)")


def _scaled_norm(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """Euclidean norm along the last axis, each slice divided first by a power of 2 near its largest entry.

    The scaling is exact and keeps the squares away from overflow and underflow, so a slice is 0
    only when every entry is.
    """
    top = np.max(np.abs(x), axis=-1, keepdims=True)
    e = np.frexp(np.where(top > 0, top, 1))[1]
    xs = np.ldexp(x, -e)
    out = np.ldexp(np.sqrt(np.sum(xs * xs, axis=-1, keepdims=True)), e).astype(x.dtype, copy=False)
    return out if keepdims else out[..., 0]


def _over_tau(a: np.ndarray, tau: float, dtype, what: str) -> np.ndarray:
    """``a / τ`` returned in ``dtype``; a quotient that float64 or ``dtype`` cannot hold is refused, naming τ."""
    hint = f" (tau = {tau!r} is too small for it)"

    def run(dt):
        return require_finite(divide_by_tau(np.array(a, dtype=dt), tau), what, None, hint)

    return to_dtype(compute(run, a.dtype), dtype, what, None, hint)


def softmax_jacobian_norm(w, tau: float = 1.0) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian, from the softmax output alone.

    With :math:`J = (\operatorname{diag}(w) - w w^\top)/\tau`,

    .. math:: \tau^2\lVert J \rVert_F^2 = \sum_i w_i^2 (1 - w_i)^2 + \sum_i w_i^2 \sum_{l \ne i} w_l^2 ,

    which needs no (n, n) matrix. It is at most :math:`(1 - \sum_i w_i^2)/\tau` (the trace),
    :math:`\sqrt{n-1}/(n\tau)` for uniform weights (not its largest value when n > 2: two
    weights of 1/2 give :math:`1/(2\tau)`), and it tends to 0 as ``w`` approaches one-hot, so a
    saturated softmax scales every gradient through it towards 0.
    For the largest entry, :math:`1 - w_i` and :math:`\sum_{l\ne i} w_l^2` are summed
    from the other entries rather than subtracted, so the norm keeps its relative
    accuracy deep into saturation (where ``1 - w_max`` would round to 0).

    Parameters
    ----------
    w : array_like, shape (..., n), real
        Softmax outputs along the last axis (leading axes are a batch).
    tau : float, default 1.0
        The temperature that produced ``w``.

    Returns
    -------
    ndarray, shape (...)  (a 0-d array for one vector); float dtype of ``w``.

    Dtypes
    ------
    As :func:`softmax_jacobian`: float16 and bfloat16 computed in float32 and rounded back.

    Raises
    ------
    ValueError, TypeError
        As :func:`softmax_jacobian`.
    """
    tau = check_tau(tau)
    w0 = check_probabilities("w", w)
    w = w0.astype(working_dtype(w0.dtype))
    top = np.argmax(w, axis=-1)[..., None]  # (..., 1): index of the largest entry
    is_top = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(is_top, top, True, axis=-1)
    others = np.where(is_top, 0, w)  # the row without its largest entry
    w2 = w**2
    rest_norm = _scaled_norm(others, keepdims=True)  # sqrt(Σ_{l ≠ top} w_l²), summed, not subtracted; no underflow
    a = rest_norm**2 + np.take_along_axis(w2, top, axis=-1)  # Σ_l w_l² (≥ 1/n²: only for the other entries)
    one_minus = np.where(is_top, np.sum(others, axis=-1, keepdims=True), 1 - w)  # 1 - w_i
    other_norm = np.where(is_top, rest_norm, np.sqrt(np.maximum(a - w2, 0)))  # sqrt(Σ_{l ≠ i} w_l²)
    # τ‖J‖_F = ‖(w_i · sqrt((1 - w_i)² + Σ_{l≠i} w_l²))_i‖: norms of norms, each scaled, so a row near
    # one-hot (1 - w_max = 1e-200, whose square underflows) keeps its small but non-zero norm
    frob = _scaled_norm(w * np.hypot(one_minus, other_norm))
    return _over_tau(frob, tau, w0.dtype, "softmax_jacobian_norm(w, tau)")


def attention_grad_query(q, K, V, tau: float = 1.0, scale: float | None = None) -> np.ndarray:
    r"""Jacobian of one attention output row with respect to its query.

    For :math:`o(q) = V^\top w`, :math:`w = \operatorname{softmax}(c\,K q)`, :math:`c = \text{scale}/\tau`:

    .. math:: \frac{\partial o}{\partial q} = c\, V^\top\bigl(\operatorname{diag}(w) - w w^\top\bigr) K
              = c \sum_j w_j\,(v_j - o)(k_j - \mathbb{E}_w[k])^\top,

    with :math:`o = \sum_j w_j v_j` and :math:`\mathbb{E}_w[k] = \sum_j w_j k_j`, the means under the
    attention weights (a bar, as in :math:`\bar v`, is the book's plain mean): the covariance, under the
    attention weights, between the values and the keys.

    Parameters
    ----------
    q : array_like, shape (d_k,), real
        One query (a vector, not a 1-row matrix).
    K : array_like, shape (T_k, d_k), real
    V : array_like, shape (T_k, d_v), real
    tau : float, default 1.0
        Temperature, finite and > 0.
    scale : float, optional
        Score scale, default ``1 / sqrt(d_k)`` as in :func:`attn.attention`.

    Returns
    -------
    ndarray, shape (d_v, d_k)
        Entry ``[a, b]`` is :math:`\partial o_a / \partial q_b`, in the inputs' float dtype.

    Dtypes
    ------
    As :func:`attn.attention`: float64 and float32 computed in their own precision (redone in
    float64 if a step overflows float32), float16 and bfloat16 in float32 and rounded back;
    integers give float64. τ and the scale are applied as float64 numbers.

    Raises
    ------
    ValueError
        ``q`` is not a non-empty vector; ``K`` or ``V`` is not a non-empty matrix;
        the widths of ``q`` and ``K`` differ, or ``K`` and ``V`` have different
        numbers of rows (shapes named); a NaN or inf in an input; a bad ``tau`` or ``scale``;
        a score ``K·q`` or a derivative that the dtype cannot hold, naming the entry.
    TypeError
        A non-real input.

    References
    ----------
    Vaswani et al. (2017), eq. (1), differentiated with the softmax Jacobian.
    """
    tau = check_tau(tau)
    q = as_float_array("q", q, ndim=1)
    K = as_float_array("K", K, ndim=2)
    V = as_float_array("V", V, ndim=2)
    if q.shape[0] != K.shape[1]:
        raise ValueError(f"q has shape {q.shape} and K has shape {K.shape}: the query and the keys must share the width d_k")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has shape {K.shape} and V has shape {V.shape}: every key needs one value (T_k must agree)")
    for name, arr in (("q", q), ("K", K), ("V", V)):
        check_finite(name, arr)
    scale = check_scale(scale, K.shape[1])
    dtype = result_dtype(q, K, V)

    def run(dt):
        qw, Kw, Vw = (a.astype(dt, copy=False) for a in (q, K, V))
        z = require_finite(multiply_by(Kw @ qw, scale), "K·q", ("key",))  # (T_k, d_k) @ (d_k,) -> (T_k,)
        w = _softmax_work(z, tau, -1, "K·q")  # (T_k,)
        # v_j - o and k_j - E_w[k] reach twice the largest entry: columns near the dtype's largest number are
        # divided by a power of 2 (exactly) and the covariance multiplied back at the end
        ev, ek = (_column_exponent(a, dt) for a in (Vw, Kw))  # (d_v,), (d_k,)
        Vs, Ks = np.ldexp(Vw, -ev).astype(dt, copy=False), np.ldexp(Kw, -ek).astype(dt, copy=False)
        o_row = w @ Vs  # (T_k,) @ (T_k, d_v) -> (d_v,), the output row o (scaled)
        k_mean = w @ Ks  # (T_k,) @ (T_k, d_k) -> (d_k,), E_w[k]
        cov = ((Vs - o_row).T * w) @ (Ks - k_mean)  # (d_v, T_k) @ (T_k, d_k) -> (d_v, d_k)
        divide_by_tau(multiply_by(cov, scale), tau)
        cov = np.ldexp(cov, ev[:, None] + ek[None, :]).astype(dt, copy=False)
        return require_finite(cov, "∂o/∂q", ("output component", "query component"))

    return to_dtype(compute(run, working_dtype(dtype)), dtype, "∂o/∂q", ("output component", "query component"))


def _column_exponent(A: np.ndarray, dt) -> np.ndarray:
    """Per column of A (T, d), the power of 2 to divide by so that differences of entries cannot overflow ``dt``:
    the exponent of the column's largest |entry| where that is within a factor 8 of the largest number, else 0."""
    top = np.max(np.abs(A), axis=0)  # (d,)
    near = top >= finfo(dt).max / 8
    return np.where(near, np.frexp(top)[1], 0)


def entropy_tau_derivative(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Derivative of the entropy of :math:`w = \operatorname{softmax}(x/\tau)` with respect to τ.

    .. math:: \frac{d}{d\tau} H\bigl(\operatorname{softmax}(x/\tau)\bigr)
              = \frac{\operatorname{Var}_w(x)}{\tau^3},
              \qquad \operatorname{Var}_w(x) = \sum_j w_j x_j^2 - \Bigl(\sum_j w_j x_j\Bigr)^2 .

    Parameters
    ----------
    x : array_like, any shape, real, finite
        Logits; the softmax runs along ``axis``.
    tau : float, default 1.0
        Temperature, finite and > 0.
    axis : int or None, default -1 (None: every entry is one distribution)

    Returns
    -------
    ndarray (the shape of ``x`` without ``axis``), in ``x``'s float dtype
        Non-negative; zero when every logit of the slice is equal.

    Dtypes
    ------
    Computed in float64 for every input dtype up to float64 and rounded once to ``x``'s float
    dtype (integers give float64). The logits are scaled by a power of 2 before the variance
    (exactly), and τ³ is never formed, so neither overflows on the way.

    Raises
    ------
    ValueError, TypeError
        As :func:`attn.softmax` (and ``x`` must be finite here: a masked entry
        carries no variance, drop it instead); a derivative that float64 or ``x``'s
        dtype cannot hold (a tiny τ), naming τ.
    """
    tau = check_tau(tau)
    x = as_float_array("x", x)
    check_finite("x", x)
    if x.ndim and check_axis(axis, x.ndim) is None:  # every entry at once: one distribution
        x, axis = x.reshape(-1), -1
    xw = x.astype(wide_dtype(x.dtype))
    w = softmax(xw, tau=tau, axis=axis)  # the weights
    big = np.max(np.abs(xw), axis=axis, keepdims=True)
    e = np.frexp(np.where(big > 0, big, 1))[1]  # one power of 2 per slice: a slice of tiny logits keeps its digits
    xs = np.ldexp(xw, -e)  # |xs| < 1: the squares below cannot overflow
    mean = np.sum(w * xs, axis=axis, keepdims=True)
    var = np.sum(w * (xs - mean) ** 2, axis=axis)  # centred form: no cancellation
    e = np.squeeze(e, axis=axis)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(np.ldexp(var / tau, e) / tau, e) / tau  # Var(x) / τ³ = 2^2e Var(xs) / τ³, never forming τ³
    if not np.isfinite(out).all():
        raise ValueError(f"entropy_tau_derivative(x, tau) overflows float64 at {locate(~np.isfinite(out))} "
                         f"(tau = {tau!r} is too small for these logits)")
    return to_dtype(out, x.dtype, "entropy_tau_derivative(x, tau)", None, f" (tau = {tau!r})")
