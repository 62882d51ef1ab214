"""The softmax with a temperature, evaluated stably."""
from __future__ import annotations

import numpy as np

from ._validate import as_float_array, check_tau


def softmax(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Normalised exponential of ``x / tau`` along ``axis``.

    .. math:: \operatorname{softmax}(x/\tau)_i = \frac{\exp(x_i/\tau)}{\sum_j \exp(x_j/\tau)}

    Evaluated stably: the row maximum is subtracted before exponentiating
    (the softmax is unchanged by adding a constant to a row), so logits of
    ±1e4 neither overflow nor underflow to 0/0.

    Parameters
    ----------
    x : array_like, any shape with at least one dimension, real dtype
        Logits (for attention: scores, shape ``(T_q, T_k)``, normalised along
        each row). ``-inf`` marks an entry that gets weight exactly 0.
    tau : float, default 1.0
        Temperature τ, finite and > 0. As τ → 0 the weights approach the
        uniform distribution over the entries that tie for the maximum: one-hot
        on the argmax when it is unique. τ → ∞ gives the uniform distribution.
    axis : int, default -1
        Axis along which entries sum to 1 (the key axis for attention).

    Returns
    -------
    ndarray, same shape as ``x``; float dtype of ``x`` (integers give float64).
        Non-negative entries summing to 1 along ``axis``.

    Raises
    ------
    ValueError
        ``tau`` is not a finite number > 0 (NaN included); ``x`` is empty,
        holds NaN or +inf; or a slice along ``axis`` is entirely ``-inf``
        (nothing to normalise).
    TypeError
        ``x`` is not real-valued.

    References
    ----------
    Bridle (1990), "Probabilistic interpretation of feedforward classification
    network outputs"; Goodfellow, Bengio & Courville (2016), *Deep Learning*, §6.2.2.3.
    """
    tau = check_tau(tau)
    x = as_float_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension; got a scalar")
    return softmax_inplace(x.copy(), tau=tau, axis=axis)


def softmax_inplace(x: np.ndarray, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    """:func:`softmax` computed in the memory of ``x`` (a float ndarray, overwritten), which it returns.

    For callers that own a large array they no longer need, such as the (T_q, T_k) score matrix in
    :func:`attn.attention`: no second array of that size. ``tau`` must already be checked. Same
    errors as :func:`softmax` (``x`` is left unchanged when one is raised), and ``TypeError`` when ``x``
    is not a float ndarray.

    Four passes over ``x``: the maximum (which also finds NaN and +inf: NaN propagates through a
    maximum and +inf is one, so the full-size searches run only to name the culprit), subtract and
    divide by τ, exponentiate, normalise.
    """
    if not (isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating)):
        kind = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise TypeError(f"softmax_inplace overwrites x, so x must be a float ndarray; got {kind} (use softmax)")
    x_max = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(x_max).all():
        if np.isnan(x_max).any():
            raise ValueError(f"x holds NaN at index {tuple(int(i) for i in np.argwhere(np.isnan(x))[0])}")
        if np.isposinf(x_max).any():
            raise ValueError(f"x holds +inf at index {tuple(int(i) for i in np.argwhere(np.isposinf(x))[0])}")
        raise ValueError(
            "a slice of x along axis %d is entirely -inf (every entry masked): there is nothing to normalise" % axis
        )
    x -= x_max  # the largest entry of each slice becomes 0, so its exponential is 1
    if tau != 1.0:
        x /= tau
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x


def log_softmax(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Logarithm of :func:`softmax`, via log-sum-exp: ``x/τ - logsumexp(x/τ)``.

    Same shapes, dtypes and errors as :func:`softmax`.
    """
    tau = check_tau(tau)
    p = softmax(x, tau=tau, axis=axis)  # validates x
    x = as_float_array("x", x) / tau
    with np.errstate(divide="ignore"):
        return np.where(p > 0, x - logsumexp(x, axis=axis, keepdims=True), -np.inf)


def logsumexp(x, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    r"""Stable :math:`\log \sum_j \exp(x_j)` along ``axis``: ``m + log Σ exp(x - m)`` with ``m = max x``.

    ``x``: real array of any shape; returns float. Raises ``ValueError`` on
    NaN, +inf, or a slice that is entirely ``-inf``.
    """
    x = as_float_array("x", x)
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("x must not hold NaN or +inf")
    m = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(m).any():
        raise ValueError("a slice of x is entirely -inf: its log-sum-exp is -inf, not a number to normalise by")
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)
