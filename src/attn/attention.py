"""Scaled dot-product attention in the chapter's row convention.

Q is (T_q, d_k), K is (T_k, d_k), V is (T_k, d_v); one row per token.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._precision import (compute, finfo, multiply_by, require_finite, result_dtype, to_dtype, wide_dtype,
                         working_dtype)
from ._validate import check_attention_inputs, check_finite, check_qk, check_scale
from .softmax import softmax_inplace

SCORE_HINT = "; rescale Q or K (dividing either by a power of 2 moves every score by the same factor)"


class Attention(NamedTuple):
    """What :func:`attention` returns; unpacks as ``output, weights = attention(...)``."""

    output: np.ndarray  #: (T_q, d_v): row i is the weighted average of the rows of V
    weights: np.ndarray  #: (T_q, T_k): row i holds the weights query i puts on each key


def scores(Q, K, scale: float | None = None) -> np.ndarray:
    r"""Scaled dot-product scores :math:`S = Q K^\top / \sqrt{d_k}`.

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k), real
        One query per row.
    K : array_like, shape (T_k, d_k), real
        One key per row.
    scale : float, optional
        Factor multiplying :math:`Q K^\top`, a finite number; default ``1 / sqrt(d_k)``.
        ``scale=1.0`` gives the unscaled dot products (Proposition 3 compares the two).

    Returns
    -------
    ndarray, shape (T_q, T_k), in the inputs' float dtype
        ``S[i, j]`` is how well key j matches query i.

    Dtypes
    ------
    float64 and float32 are computed and returned in their own precision (a float32 product
    that overflows is redone in float64, and returned if float32 can hold the scaled score);
    float16 and bfloat16 are computed in float32 and rounded to the input dtype; integers
    give float64. :func:`attention` computes its scores in float32 for half-precision inputs,
    so it succeeds where this function, which must return float16, refuses.

    Raises
    ------
    ValueError
        Q or K is not a non-empty matrix, or their widths d_k differ (both shapes named);
        Q or K holds NaN or ±inf ("Q must be finite; Q[0, 1] = nan"); ``scale`` is not a finite number; a scaled score that the inputs' dtype cannot hold
        ("Q·Kᵀ overflows float16 at query 0, key 0"), instead of returning ±inf.
    TypeError
        Q or K is not real-valued.

    References
    ----------
    Vaswani et al. (2017), "Attention is all you need", eq. (1).
    """
    Q, K = check_qk(Q, K)
    check_finite("Q", Q)
    check_finite("K", K)
    scale = check_scale(scale, Q.shape[1])
    dtype = result_dtype(Q, K)
    S = score_matrix(Q, K, scale, working_dtype(dtype))  # (T_q, T_k), finite, float32 or wider
    return to_dtype(S, dtype, "Q·Kᵀ", ("query", "key"),
                    "; pass Q and K as float32, or call attn.attention, which computes the scores in float32")


def score_matrix(Q: np.ndarray, K: np.ndarray, scale: float, work) -> np.ndarray:
    """``scale · Q Kᵀ`` in ``work`` (or in float64 if it overflows ``work``), every entry finite.

    Q is (..., T_q, d_k) and K (..., T_k, d_k) (leading axes: heads); returns (..., T_q, T_k).
    The scale is applied in float64 when it is not a normal number of ``work`` (NumPy would
    otherwise cast it, and a scale of 1e-50 would become 0 in float32). Raises ``ValueError``
    "Q·Kᵀ overflows float64 at query i, key j" when float64 cannot hold a score either.
    """
    labels = ("query", "key") if Q.ndim == 2 else ("head", "query", "key")

    def run(dt):
        return require_finite(scaled_product(Q, K, scale, dt), "Q·Kᵀ", labels, SCORE_HINT)

    return compute(run, work)


def attention(
    Q,
    K,
    V,
    mask=None,
    tau: float = 1.0,
    scale: float | None = None,
    empty_rows: str = "raise",
) -> Attention:
    r"""Scaled dot-product attention :math:`\operatorname{softmax}(Q K^\top / \sqrt{d_k} / \tau)\, V`.

    Each output row is a convex combination of the rows of V, with weights
    computed from how well each key matches the query (Proposition 1). With
    a mask, row i is a convex combination of the values that query i may
    read (``mask[i, j]`` True) only, so it lies in their convex hull. Under
    ``empty_rows="zero"`` a query with no readable key gets the zero row,
    which in general lies outside that hull (and outside the hull of all V).

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k), real
    K : array_like, shape (T_k, d_k), real
    V : array_like, shape (T_k, d_v), real
    mask : array_like of bool, shape (T_q, T_k), optional
        ``mask[i, j] = True`` means query i may read key j; False entries get
        weight exactly 0 (the score is replaced by -inf before the softmax).
        A key that no query may read is ignored, whatever its rows of K and V hold
        (NaN, inf, or numbers whose scores would overflow).
    tau : float, default 1.0
        Softmax temperature τ, finite and > 0 (kept in float64 whatever the inputs' dtype).
    scale : float, optional
        Score scale, a finite number, default ``1 / sqrt(d_k)`` (see :func:`scores`).
    empty_rows : {"raise", "zero"}, default "raise"
        What to do with a query whose keys are all masked. ``"raise"``: a
        ValueError naming the rows. ``"zero"``: that query reads nothing, its
        weight row and output row are all zeros (not a uniform average, not NaN).

    Returns
    -------
    Attention(output, weights)
        ``output`` (T_q, d_v) and ``weights`` (T_q, T_k), in the inputs' float
        dtype; every row of ``weights`` sums to 1 (except zero rows under
        ``empty_rows="zero"``).

    Dtypes
    ------
    float64 is computed and returned in float64; float32 in float32 (scores that
    overflow float32 are redone in float64); float16 and bfloat16 are computed in
    float32 (scores, softmax and the weighted sum of values, as fused kernels do)
    and both results rounded to the input dtype, so raw dot products beyond
    float16's 65504 are no obstacle; integers give float64. The weighted sum
    accumulates in float32 or wider, with a column of V scaled by a power of 2 when its
    entries are so large that a partial sum could overflow, or so small (near the subnormal
    range) that the products would be rounded there. The power is chosen from the values some
    query may read, so a value query i may not read has no influence on row i, bit for bit,
    except in such a column, where one that another query reads can move row i's last bits.

    Raises
    ------
    ValueError
        An argument is not a non-empty matrix; a shape mismatch (Q vs K width,
        K vs V rows, mask vs (T_q, T_k); both shapes named); a NaN or inf in Q, or
        in a key or value row that some query may read; τ not finite and > 0;
        a fully masked query row under ``empty_rows="raise"``; an unknown policy;
        a score that overflows even float64 ("Q·Kᵀ overflows float64 at query i, key j").
    TypeError
        A non-real input, or a mask that is not boolean.

    References
    ----------
    Vaswani et al. (2017), "Attention is all you need", eq. (1); masking as in §3.2.3.
    """
    checked = check_attention_inputs(Q, K, V, mask, tau, empty_rows)
    Q, K, V, mask, tau = checked.Q, checked.K, checked.V, checked.mask, checked.tau
    empty, dtype = checked.empty, checked.dtype

    scale = check_scale(scale, Q.shape[1])
    S = score_matrix(Q, K, scale, working_dtype(dtype))  # (T_q, T_k), finite, float32 or wider
    if mask is not None:  # no mask: every key readable, no (T_q, T_k) copy needed
        np.copyto(S, -np.inf, where=~mask)  # in place: no second (T_q, T_k) float array
    S[empty] = 0.0  # any finite row: replaced by zeros below
    weights = softmax_inplace(S, tau=tau, axis=-1, name="the scores Q·Kᵀ")  # (T_q, T_k) in S's memory
    weights[empty] = 0.0
    output = weighted_values(weights, V)  # (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v)
    return Attention(to_dtype(output, dtype, "the output", ("query", "column")), weights.astype(dtype, copy=False))


def scaled_product(Q: np.ndarray, K: np.ndarray, scale: float, dt) -> np.ndarray:
    """``scale · Q Kᵀ`` computed in ``dt`` (entries may be ±inf or NaN where ``dt`` overflows; callers check).

    The scale is applied in float64 when it is not a normal number of ``dt``: NumPy would
    otherwise cast it to ``dt``, and a scale of 1e-50 would become 0 in float32.
    """
    dt = np.dtype(dt)
    S = Q.astype(dt, copy=False) @ np.swapaxes(K.astype(dt, copy=False), -1, -2)  # (.., T_q, d_k) @ (.., d_k, T_k)
    return multiply_by(S, scale)  # in place: the score matrix is the one large array here


def value_exponent(V: np.ndarray, n_terms: int, work) -> np.ndarray | None:
    """Power-of-2 exponents e, one per column of V (shape (.., 1, d_v)), such that sums of up to ``n_terms``
    rows of ``V · 2**-e`` neither overflow ``work`` nor lose digits to its subnormal range; None when no
    column needs scaling.

    A column whose ``max |V[:, c]| · n_terms`` comes within a factor 4 of ``work``'s largest number is
    divided by the smallest power of 2 that keeps it below that bound (not more: its small entries would
    underflow to 0). A column whose ``max |V[:, c]|`` is below ``tiny / eps`` is multiplied up to [0.5, 1)
    (else the products ``w_j · v_j`` are rounded on the subnormal grid, and a convex combination of equal
    subnormal values comes out larger than all of them). Each column gets its own exponent; scaling by a
    power of 2 is exact.
    """
    top = np.max(np.abs(V), axis=-2, keepdims=True).astype(wide_dtype(V.dtype))  # (.., 1, d_v); long double stays
    info = finfo(work)
    bound = info.max / 4 / n_terms
    big = top >= bound
    small = (top > 0) & (top < info.tiny / info.eps)
    if not (big.any() or small.any()):
        return None
    e_big = np.frexp(np.where(big, top / bound, 1))[1]  # top · 2**-e_big < bound
    e_small = np.frexp(np.where(small, top, 1))[1]  # top · 2**-e_small in [0.5, 1)
    return np.where(big, e_big, np.where(small, e_small, 0))


def weighted_values(weights: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``weights @ V`` in the weights' dtype (float32 or wider), rows of ``weights`` summing to at most 1.

    Each output row is a convex combination of rows of V, so it is never larger than
    ``max |V|``; a column of V near the dtype's largest number, or near its subnormal range, is
    scaled by a power of 2, so that no partial sum overflows or rounds on the subnormal grid.
    One power per column, chosen from all rows of V: the callers zero the rows no query may read
    beforehand (:func:`attention` through ``check_attention_inputs``, :func:`attn.multi_head_attention`),
    so such a key has no influence at all; in such a column, a value that query i may not read (but
    another query may) can move row i's last bits.
    """
    work = weights.dtype
    Vw = V.astype(work, copy=False)
    e = value_exponent(Vw, 1, work)
    if e is not None:
        Vw = np.ldexp(Vw, -e).astype(work, copy=False)
    out = weights @ Vw  # (.., T_q, T_k) @ (.., T_k, d_v) -> (.., T_q, d_v)
    if e is not None:  # near the dtype's largest number, a rounding above max |V| would overflow on the way back
        clip_to_values(out, Vw)
        out = np.ldexp(out, e).astype(work, copy=False)  # back to scale, exactly (or rounded once to a subnormal)
    return out


def clip_to_values(out: np.ndarray, V: np.ndarray) -> None:
    """Clip ``out`` (.., T_q, d_v), in place, to the range of each column of V (.., T_k, d_v).

    A convex combination of rows of V lies in that range; only rounding can leave it. The range is
    widened to include 0, the output of a query that may read no key (``empty_rows="zero"``).
    Used only where V was scaled near the dtype's largest number, to keep a rounding from overflowing
    on the way back: everywhere else a masked key's value must have no influence at all, bit for bit.
    """
    lo = np.minimum(np.min(V, axis=-2, keepdims=True), 0)
    hi = np.maximum(np.max(V, axis=-2, keepdims=True), 0)
    np.clip(out, lo, hi, out=out)
