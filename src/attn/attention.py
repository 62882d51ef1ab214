"""Scaled dot-product attention in the chapter's row convention.

Q is (T_q, d_k), K is (T_k, d_k), V is (T_k, d_v); one row per token.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._validate import EMPTY_ROW_POLICIES, check_attention_inputs, check_qk
from .softmax import softmax_inplace


class Attention(NamedTuple):
    """What :func:`attention` returns; unpacks as ``output, weights = attention(...)``."""

    output: np.ndarray  #: (T_q, d_v): row i is the weighted average of the rows of V
    weights: np.ndarray  #: (T_q, T_k): row i holds the weights query i puts on each key


_check_qk = check_qk  # kept for callers of the old private name


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
    S = Q @ K.T  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
    S *= scale  # in place: the score matrix is the one large array here
    return S


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
    Q, K, V, mask, empty, tau, dtype = check_attention_inputs(Q, K, V, mask, tau, empty_rows)

    S = scores(Q, K, scale=scale)  # (T_q, T_k)
    if mask is not None:  # no mask: every key readable, no (T_q, T_k) copy needed
        np.copyto(S, -np.inf, where=~mask)  # in place: no second (T_q, T_k) float array
    S[empty] = 0.0  # any finite row: replaced by zeros below
    weights = softmax_inplace(S, tau=tau, axis=-1)  # (T_q, T_k) in S's memory, rows sum to 1
    weights[empty] = 0.0
    output = weights @ V  # (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v)
    return Attention(output.astype(dtype, copy=False), weights.astype(dtype, copy=False))
