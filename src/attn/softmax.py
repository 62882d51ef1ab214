"""The softmax with a temperature, and its logarithms, evaluated stably in every dtype.

Dtypes follow :mod:`attn._precision`: float16 and bfloat16 are computed in
float32; the log-domain functions (:func:`log_softmax`, :func:`logsumexp`)
compute in float64 and round once; results come back in the input's dtype.
"""
from __future__ import annotations

import numpy as np

from ._precision import (F64, finfo, is_float_dtype, is_narrow, locate, subtract_and_divide, to_dtype, wide_dtype,
                         working_dtype)
from ._validate import as_float_array, check_axis, check_tau


def softmax(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Normalised exponential of ``x / tau`` along ``axis``.

    .. math:: \operatorname{softmax}(x/\tau)_i = \frac{\exp(x_i/\tau)}{\sum_j \exp(x_j/\tau)}

    Evaluated stably: the row maximum is subtracted before exponentiating
    (the softmax is unchanged by adding a constant to a row), so no logit,
    however large or small in its dtype, overflows or gives 0/0. A difference
    ``x_i - max`` or a quotient by τ below the dtype's range becomes -inf,
    whose weight, exactly 0, is the right answer to the dtype's precision.

    Parameters
    ----------
    x : array_like, any shape with at least one dimension, real
        Logits (for attention: scores, shape ``(T_q, T_k)``, normalised along
        each row). ``-inf`` marks an entry that gets weight exactly 0.
    tau : float, default 1.0
        Temperature τ, finite and > 0. As τ → 0 the weights approach the
        uniform distribution over the entries that tie for the maximum: one-hot
        on the argmax when it is unique. τ → ∞ gives the uniform distribution.
    axis : int or None, default -1
        Axis along which entries sum to 1 (the key axis for attention); None: over every entry.

    Returns
    -------
    ndarray, same shape as ``x``, in ``x``'s float dtype
        Non-negative entries summing to 1 along ``axis`` (to the dtype's precision).

    Dtypes
    ------
    float64 and float32 are computed and returned in their own precision; float16 and
    bfloat16 are computed in float32 and the weights rounded back to the input dtype
    (so tiny weights may round to 0 there); integers give float64. A float16 weight is
    therefore within one float16 step of the exact softmax of its (float16) logits, and
    usually the float16 number nearest it, but not always: it is rounded twice, to
    float32 and then to float16, and the float32 result carries the rounding errors of
    its exponentials, sum and division. When the exact weight lies within a few of those
    errors of the midpoint of two float16 numbers, the float32 result can land on the
    midpoint (logits ``[-1.577, 1.782, -0.603]`` in float16: weight 1 is 0.8877, the
    nearest float16 to the exact 0.887451... is 0.8872) or just past it (logits
    ``[4.1875, -0.149, 2.107]``: the exact weight 2, 0.1097717276..., is below the
    midpoint 0.109771728515625, its float32 result one float32 step above it), and the
    second rounding then picks the farther float16 number. τ stays a float64
    number: it is never cast to a dtype in which it would round to 0 or to a subnormal.

    Raises
    ------
    ValueError
        ``tau`` is not a finite number > 0 (NaN included); ``x`` is empty,
        holds NaN or +inf (the index is named); a slice along ``axis`` is
        entirely ``-inf`` (nothing to normalise); ``axis`` out of range.
    TypeError
        ``x`` is not real-valued; ``axis`` is not an integer or None.

    References
    ----------
    Bridle (1990), "Probabilistic interpretation of feedforward classification
    network outputs"; Goodfellow, Bengio & Courville (2016), *Deep Learning*, §6.2.2.3.
    """
    tau = check_tau(tau)
    x = as_float_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension; got a scalar")
    axis = check_axis(axis, x.ndim)
    work = x.astype(working_dtype(x.dtype))  # a copy: float16 and bfloat16 widen to float32
    _softmax_work(work, tau, axis, "x")
    return work.astype(x.dtype, copy=False)  # weights lie in [0, 1]: every float dtype holds them


def softmax_inplace(x: np.ndarray, tau: float = 1.0, axis: int = -1, *, name: str = "x") -> np.ndarray:
    """:func:`softmax` computed in the memory of ``x`` (a float ndarray, overwritten), which it returns.

    For callers that own a large array they no longer need, such as the (T_q, T_k) score matrix in
    :func:`attn.attention`: no second array of that size. ``tau`` must already be checked. Same
    errors as :func:`softmax`, naming ``name`` (the caller's argument; "x" by default), and ``x`` is
    left unchanged when one is raised; ``TypeError`` when ``x`` is not a float ndarray.

    Dtypes: float32 and float64 are worked in place. A float16 or bfloat16 ``x`` is computed in a
    float32 copy (as :func:`softmax` does) and the weights written back into ``x``.

    Four passes over ``x``: the maximum (which also finds NaN and +inf: NaN propagates through a
    maximum and +inf is one, so the full-size searches run only to name the culprit), subtract and
    divide by τ, exponentiate, normalise.
    """
    if not (isinstance(x, np.ndarray) and is_float_dtype(x.dtype)):
        kind = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise TypeError(f"softmax_inplace overwrites x, so x must be a float ndarray; got {kind} (use softmax)")
    if is_narrow(x.dtype):
        work = x.astype(working_dtype(x.dtype))
        _softmax_work(work, tau, axis, name)
        x[...] = work
        return x
    return _softmax_work(x, tau, axis, name)


def _check_max(x: np.ndarray, x_max: np.ndarray, axis: int, name: str) -> None:
    """Raise, naming ``name`` and the index, if a slice's maximum shows NaN, +inf or an all -inf slice."""
    if np.isfinite(x_max).all():
        return
    if np.isnan(x_max).any():
        raise ValueError(f"{name} holds NaN at {locate(np.isnan(x))}")
    if np.isposinf(x_max).any():
        raise ValueError(f"{name} holds +inf at {locate(np.isposinf(x))}")
    raise ValueError(
        f"a slice of {name} along axis {axis} is entirely -inf (every entry masked): there is nothing to normalise"
    )


def _softmax_work(x: np.ndarray, tau: float, axis: int, name: str) -> np.ndarray:
    """The softmax in ``x``'s own memory and dtype (float32 or wider); ``tau`` already checked."""
    x_max = np.max(x, axis=axis, keepdims=True)
    _check_max(x, x_max, axis, name)
    subtract_and_divide(x, x_max, tau)  # the largest entry of each slice becomes exactly 0, so its exponential is 1
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)  # each sum is >= 1 (the maximum contributes exp(0) = 1)
    return x


def _two_product(a: np.ndarray, b: float):
    """``(p, e)`` with ``p = fl(a·b)`` and ``p + e = a·b`` exactly (Dekker 1971), float64; non-finite if a split overflows."""
    def split(v):
        c = 134217729.0 * v  # 2**27 + 1
        hi = c - (c - v)
        return hi, v - hi

    p = a * b
    ah, al = split(a)
    bh, bl = split(np.float64(b))
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _log_domain(x, tau: float, axis: int, name: str):
    """Shared by the log-domain functions, in float64 (or wider): ``(m, z, z_err, log1p_rest)`` with

    ``z + z_err = (x - max) / τ`` to about twice float64's precision (0 at a maximum, -inf where x is
    -inf), and ``log1p_rest = log1p(Σ_{j≠argmax} exp(z_j + z_err_j))``, so that
    ``logsumexp(x / τ) = max / τ + log1p_rest`` and ``log_softmax = (z - log1p_rest) + z_err``.

    The maximum contributes exactly 1 to the sum; leaving it out and using log1p keeps full relative
    precision when one entry dominates (the log-softmax of the winner is then ``-Σ_{others} exp(z)``,
    not a rounded 0). The rounding error of ``z`` is carried (TwoSum for ``x - max``, Dekker's product
    for the division by τ) because ``exp`` turns an absolute error in ``z`` into a relative error
    ``|z|`` times larger: without it a winner's log-probability at ``z = -30`` is off by 15 ulps.
    """
    wide = x.astype(wide_dtype(x.dtype))
    m = np.max(wide, axis=axis, keepdims=True)
    _check_max(wide, m, axis, name)
    with np.errstate(over="ignore", invalid="ignore"):
        d = wide - m  # -inf only past float64's range (or where x is -inf)
        if wide.dtype == F64:
            t = d - wide
            d_err = (wide - (d - t)) + (-m - t)  # TwoSum: d + d_err = x - max exactly
        else:
            d_err = np.zeros_like(d)
        if tau != 1.0:
            z = d / tau
            if wide.dtype == F64:
                p, p_err = _two_product(z, tau)  # p + p_err = z·τ exactly
                z_err = (((d - p) - p_err) + d_err) / tau  # d - p is exact (Sterbenz)
            else:
                z_err = d_err / tau
        else:
            z, z_err = d, d_err
        if tau > 1:  # x - max overflowed where (x - max) / τ need not: divide first there
            spill = np.isneginf(z) & np.isfinite(wide)
            if spill.any():
                z = np.where(spill, wide / tau - m / tau, z)
        z_err = np.where(np.isfinite(z) & np.isfinite(z_err), z_err, 0.0)  # an overflowed split: no correction
        e = np.exp(z)
        e += e * z_err  # exp(z + z_err) = exp(z)(1 + z_err + ...)
    np.put_along_axis(e, np.argmax(z, axis=axis, keepdims=True), 0.0, axis=axis)  # leave one maximum out
    return wide, m, z, z_err, np.log1p(np.sum(e, axis=axis, keepdims=True))


def log_softmax(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Logarithm of :func:`softmax` in the log domain: ``z - log1p(Σ_{j≠argmax} exp z_j)`` with ``z = (x - max) / τ``.

    Never goes through the probabilities, so an entry whose weight underflows
    to 0 keeps its finite logarithm (``log_softmax([0, -1000]) = [0, -1000]``),
    and the maximum is subtracted before anything is added to it, so large
    logits keep their digits. The first term is ≤ 0 and the subtracted one ≥ 0,
    so the subtraction never cancels, and the rounding error of ``z`` is carried
    along: the result is within a few ulps of the exact value over the whole
    finite range of every dtype.

    Parameters
    ----------
    x : array_like, any shape with at least one dimension, real
        Logits; ``-inf`` entries get ``-inf`` (log of the exact weight 0).
    tau : float, default 1.0
        Temperature τ, finite and > 0.
    axis : int or None, default -1
        None: over every entry (the flattened array), as :func:`softmax`.

    Returns
    -------
    ndarray, same shape as ``x``, in ``x``'s float dtype; entries ≤ 0.

    Dtypes
    ------
    Computed in float64 for float16, bfloat16, float32 and float64 inputs (long double in
    its own precision) and rounded once to the input's dtype; integers give float64.

    Raises
    ------
    ValueError
        As :func:`softmax`; and a log-probability that the result's dtype cannot
        hold (below about -65504 in float16, -3.4e38 in float32, -1.8e308 in
        float64, as when the logits span more than the dtype's range or τ is
        tiny), naming its index, instead of returning -inf for a finite number.
    TypeError
        ``x`` is not real-valued.

    References
    ----------
    Blanchard, Higham & Higham (2021), "Accurately computing the log-sum-exp and softmax functions",
    IMA J. Numer. Anal. 41(4).
    """
    tau = check_tau(tau)
    x = as_float_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension; got a scalar")
    if check_axis(axis, x.ndim) is None:  # every entry at once: the log-softmax of the flattened array
        return log_softmax(x.reshape(-1), tau=tau).reshape(x.shape)
    wide, _, z, z_err, rest = _log_domain(x, tau, axis, "x")
    with np.errstate(invalid="ignore"):
        out = (z - rest) + z_err  # z <= 0 <= rest: the subtraction never cancels
    lost = np.isneginf(out) & np.isfinite(wide)
    if lost.any():
        raise ValueError(
            f"log_softmax(x) at {locate(lost)} is below -{float(finfo(out.dtype).max):.4g}, beyond "
            f"{out.dtype.name}'s range (the logits of that slice span too much for tau = {tau!r})"
        )
    return to_dtype(out, x.dtype, "log_softmax(x)")


def logsumexp(x, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    r"""Stable :math:`\log \sum_j \exp(x_j)` along ``axis``: ``m + log1p(Σ_{j≠argmax} exp(x_j - m))`` with ``m = max x``.

    The maximum is subtracted first, so nothing overflows; its own term is
    exactly 1 and is left out of the sum given to ``log1p``, so a slice with
    one dominant entry keeps full precision. Accurate to a few ulps of the
    input's dtype (of the result, and of ``max |x|`` where ``m`` and the log
    nearly cancel) over the whole finite range.

    Parameters
    ----------
    x : array_like, any shape with at least one dimension, real
        ``-inf`` entries contribute nothing.
    axis : int or None, default -1
        None: over every entry (a 0-d result).
    keepdims : bool, default False

    Returns
    -------
    ndarray, the shape of ``x`` without ``axis`` (kept as 1 with ``keepdims``), in ``x``'s float dtype.

    Dtypes
    ------
    As :func:`log_softmax`: computed in float64 (long double in its own precision), rounded once to ``x``'s dtype.

    Raises
    ------
    ValueError
        ``x`` is empty or a scalar, holds NaN or +inf (index named); a slice that is
        entirely ``-inf``; a result that the input's dtype cannot hold (just above
        float16's 65504 with many entries, for instance), naming the slice.
    TypeError
        ``x`` is not real-valued.

    References
    ----------
    Blanchard, Higham & Higham (2021), "Accurately computing the log-sum-exp and softmax functions".
    """
    x = as_float_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension; got a scalar")
    if check_axis(axis, x.ndim) is None:  # every entry at once
        out = logsumexp(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdims else out
    _, m, _, _, rest = _log_domain(x, 1.0, axis, "x")
    with np.errstate(over="ignore"):
        out = m + rest
    if not np.isfinite(out).all():
        raise ValueError(f"logsumexp(x) overflows {out.dtype.name} at slice {locate(~np.isfinite(out))}")
    out = to_dtype(out, x.dtype, "logsumexp(x)")
    return out if keepdims else np.squeeze(out, axis=axis)
