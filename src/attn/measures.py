"""Two measures of attention's inputs and weights: the entropy of a weight row and the cosine similarity of queries and keys.

Entropy says how spread a row of weights is (0 for one-hot, log T_k for uniform);
the cosine says how aligned a query and a key are, whatever their lengths. NumPy only.
"""
from __future__ import annotations

import numpy as np

from ._precision import result_dtype, to_dtype, wide_dtype
from ._validate import as_float_array, check_axis, check_finite, check_probabilities, check_qk

__all__ = ["cosine_similarity", "entropy"]


def entropy(w, axis: int = -1) -> np.ndarray:
    r"""Shannon entropy in nats, :math:`H(w) = -\sum_j w_j \log w_j`, with :math:`0 \log 0 = 0`.

    Parameters
    ----------
    w : array_like, any shape, real
        Probability vectors along ``axis`` (e.g. rows of attention weights, shape (T_q, T_k)).
    axis : int or None, default -1
        None: every entry of ``w`` is one distribution.

    Returns
    -------
    ndarray (the shape of ``w`` without ``axis``; a 0-d array for a vector)
        Values in :math:`[0, \log n]`: 0 for a one-hot row, :math:`\log n` for the uniform row.

    Dtypes
    ------
    Computed in float64 for every input dtype up to float64 (each term :math:`w_j \log w_j`
    keeps its digits even for subnormal weights, and the sum over many keys does not drift),
    then rounded once to ``w``'s float dtype; integers give float64.

    Raises
    ------
    ValueError
        ``w`` is empty, a scalar, non-finite, has a negative entry, or a slice not summing to 1.
    TypeError
        ``w`` is not real-valued.

    References
    ----------
    Shannon (1948); Cover & Thomas (2006), *Elements of Information Theory*, §2.1.
    """
    w = as_float_array("w", w)
    if w.ndim and check_axis(axis, w.ndim, "w") is None:  # every entry at once: one distribution
        w, axis = w.reshape(-1), -1
    w = check_probabilities("w", w, axis=axis)
    ww = w.astype(wide_dtype(w.dtype))
    positive = ww > 0
    terms = np.where(positive, -ww * np.log(np.where(positive, ww, 1)), 0.0)  # 0 log 0 = 0
    return to_dtype(terms.sum(axis=axis), w.dtype, "entropy(w)")


def cosine_similarity(Q, K) -> np.ndarray:
    r"""Cosine similarities :math:`C_{ij} = q_i \cdot k_j / (\lVert q_i\rVert\,\lVert k_j\rVert)`.

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k), real
    K : array_like, shape (T_k, d_k), real

    Returns
    -------
    ndarray, shape (T_q, T_k), entries in [-1, 1], in the inputs' float dtype.

    Dtypes
    ------
    Computed in float64 for every input dtype up to float64 (float16, bfloat16, float32 and
    float64 alike), then rounded once to the inputs' float dtype; integers give float64. Each
    row is first divided by a power of 2 near its largest entry (exactly), so the norms
    neither overflow (rows of 1e200, float32 rows near 3.4e38) nor underflow (rows of
    1e-200): the cosine of two parallel rows is 1 whatever their size.

    Raises
    ------
    ValueError
        Shapes as in :func:`attn.scores`; NaN or inf in Q or K; a row of Q or K that is
        zero, every entry exactly 0 (its direction, hence its cosine, is undefined),
        naming the row.
    TypeError
        A non-real input.
    """
    Q, K = check_qk(Q, K)
    check_finite("Q", Q)
    check_finite("K", K)
    dtype = result_dtype(Q, K)
    Qs, Ks = _scaled_rows("Q", Q), _scaled_rows("K", K)  # (T_q, d_k), (T_k, d_k), largest |entry| in [0.5, 1)
    nq2 = np.sum(Qs * Qs, axis=1)  # (T_q,), squared norms in [0.25, d_k]: no overflow, no underflow to 0
    nk2 = np.sum(Ks * Ks, axis=1)  # (T_k,)
    C = (Qs @ Ks.T) / np.sqrt(nq2[:, None] * nk2[None, :])  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k); one sqrt
    return to_dtype(np.clip(C, -1.0, 1.0), dtype, "cosine_similarity(Q, K)")


def _scaled_rows(name: str, X: np.ndarray) -> np.ndarray:
    """The rows of ``X`` in float64, each divided by a power of 2 that brings its largest |entry| into [0.5, 1).

    Dividing by a power of 2 is exact, and the cosine does not depend on a row's length.
    A row is refused as zero only when every entry is exactly 0.
    """
    Xw = X.astype(wide_dtype(X.dtype))
    top = np.max(np.abs(Xw), axis=1)  # (T,)
    if (top == 0).any():
        raise ValueError(f"row {int(np.flatnonzero(top == 0)[0])} of {name} is zero: its cosine similarity is undefined")
    return np.ldexp(Xw, -np.frexp(top)[1][:, None])
