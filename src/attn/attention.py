"""Scaled dot-product attention in the chapter's row convention.

Q is (T_q, d_k), K is (T_k, d_k), V is (T_k, d_v); one row per token.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._validate import as_float_array, check_finite, check_mask, check_tau
from .softmax import softmax

EMPTY_ROW_POLICIES = ("raise", "zero")


class Attention(NamedTuple):
    """What :func:`attention` returns; unpacks as ``output, weights = attention(...)``."""

    output: np.ndarray  #: (T_q, d_v): row i is the weighted average of the rows of V
    weights: np.ndarray  #: (T_q, T_k): row i holds the weights query i puts on each key


def _check_qk(Q, K) -> tuple[np.ndarray, np.ndarray]:
    Q = as_float_array("Q", Q, ndim=2)
    K = as_float_array("K", K, ndim=2)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(
            f"Q has shape {Q.shape} and K has shape {K.shape}: queries and keys must share "
            f"the width d_k (got {Q.shape[1]} and {K.shape[1]})"
        )
    return Q, K


def scores(Q, K, scale: float | None = None) -> np.ndarray:
    r"""Scaled dot-product scores :math:`S = Q K^\top / \sqrt{d_k}`.

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k), real
        One query per row.
    K : array_like, shape (T_k, d_k), real
        One key per row.
    scale : float, optional
        Factor multiplying :math:`Q K^\top`; default ``1 / sqrt(d_k)``.
        ``scale=1.0`` gives the unscaled dot products (Proposition 3 compares the two).

    Returns
    -------
    ndarray, shape (T_q, T_k)
        ``S[i, j]`` is how well key j matches query i. Float dtype of the inputs
        (float32 stays float32; integers give float64).

    Raises
    ------
    ValueError
        Q or K is not a non-empty matrix, or their widths d_k differ (both shapes named).
    TypeError
        Q or K is not real-valued.

    References
    ----------
    Vaswani et al. (2017), "Attention is all you need", eq. (1).
    """
    Q, K = _check_qk(Q, K)
    d_k = Q.shape[1]
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    return (Q @ K.T) * scale  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)


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
    computed from how well each key matches the query (Proposition 1).

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k), real
    K : array_like, shape (T_k, d_k), real
    V : array_like, shape (T_k, d_v), real
    mask : array_like of bool, shape (T_q, T_k), optional
        ``mask[i, j] = True`` means query i may read key j; False entries get
        weight exactly 0 (the score is replaced by -inf before the softmax).
        Non-finite entries of K or V in a key that no query may read are ignored.
    tau : float, default 1.0
        Softmax temperature τ, finite and > 0.
    scale : float, optional
        Score scale, default ``1 / sqrt(d_k)`` (see :func:`scores`).
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

    Raises
    ------
    ValueError
        An argument is not a non-empty matrix; a shape mismatch (Q vs K width,
        K vs V rows, mask vs (T_q, T_k); both shapes named); a NaN or inf in Q, or
        in a key or value row that some query may read; τ not finite and > 0;
        a fully masked query row under ``empty_rows="raise"``; an unknown policy.
    TypeError
        A non-real input, or a mask that is not boolean.

    References
    ----------
    Vaswani et al. (2017), "Attention is all you need", eq. (1); masking as in §3.2.3.
    """
    if empty_rows not in EMPTY_ROW_POLICIES:
        raise ValueError(f"empty_rows must be one of {EMPTY_ROW_POLICIES}; got {empty_rows!r}")
    tau = check_tau(tau)
    Q, K = _check_qk(Q, K)
    V = as_float_array("V", V, ndim=2)
    if K.shape[0] != V.shape[0]:
        raise ValueError(
            f"K has shape {K.shape} and V has shape {V.shape}: every key needs one value, "
            f"so T_k must agree (got {K.shape[0]} and {V.shape[0]})"
        )
    T_q, T_k = Q.shape[0], K.shape[0]
    dtype = np.result_type(Q, K, V)
    check_finite("Q", Q)

    readable = np.ones((T_q, T_k), dtype=bool) if mask is None else check_mask(mask, (T_q, T_k))
    empty = ~readable.any(axis=1)
    if empty.any() and empty_rows == "raise":
        rows = np.flatnonzero(empty).tolist()
        raise ValueError(
            f"query row(s) {rows} may read no key: every entry of mask in those rows is False. "
            "Fix the mask, or pass empty_rows='zero' to give those queries a zero output."
        )

    # A key or value row that holds NaN/inf is harmless only if no query may read it.
    bad = ~(np.isfinite(K).all(axis=1) & np.isfinite(V).all(axis=1))  # (T_k,)
    if bad.any():
        read_bad = bad & readable.any(axis=0)
        if read_bad.any():
            j = int(np.flatnonzero(read_bad)[0])
            raise ValueError(
                f"key/value row {j} holds NaN or inf and is readable by some query: "
                f"K[{j}] = {K[j]}, V[{j}] = {V[j]}"
            )
        K = np.where(bad[:, None], 0, K)
        V = np.where(bad[:, None], 0, V)

    S = scores(Q, K, scale=scale)  # (T_q, T_k)
    S = np.where(readable, S, -np.inf)
    S[empty] = 0.0  # any finite row: replaced by zeros below
    weights = softmax(S, tau=tau, axis=-1)  # (T_q, T_k), rows sum to 1
    weights[empty] = 0.0
    output = weights @ V  # (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v)
    return Attention(output.astype(dtype, copy=False), weights.astype(dtype, copy=False))
