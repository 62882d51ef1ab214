"""Self- and cross-attention: one operation under two wirings (Proposition 4)."""
from __future__ import annotations

import numpy as np

from ._precision import compute, require_finite, result_dtype, to_dtype, working_dtype
from ._validate import as_float_array, check_finite, check_mask
from .attention import Attention, attention
from .masks import causal_mask


def project(X, W, x_name: str = "X", w_name: str = "W") -> np.ndarray:
    """Row-wise linear projection ``X @ W``: (T, d_model) @ (d_model, d) -> (T, d).

    ``x_name`` and ``w_name`` are the caller's names for the two arguments, used in errors.

    Dtypes: the result has the inputs' float dtype (integers give float64). float16 and
    bfloat16 are multiplied in float32 (float32 accumulation, as a fused kernel does) and
    rounded once; a float32 product that overflows is redone in float64.

    Raises ValueError naming both shapes when the inner widths differ, and naming the token
    and column ("X·W_Q overflows float16 at token 0, column 3") when the product is beyond the
    result dtype's range; TypeError for a non-real input.
    """
    X = as_float_array(x_name, X, ndim=2)
    W = as_float_array(w_name, W, ndim=2)
    if X.shape[1] != W.shape[0]:
        raise ValueError(
            f"{x_name} has shape {X.shape} and {w_name} has shape {W.shape}: "
            f"{x_name} @ {w_name} needs {x_name}'s width ({X.shape[1]}) to equal {w_name}'s rows ({W.shape[0]})"
        )
    dtype = result_dtype(X, W)
    what, labels = f"{x_name}·{w_name}", ("token", "column")

    finite_inputs = bool(np.isfinite(X).all() and np.isfinite(W).all())  # else NaN/inf pass through to the caller's checks

    def run(dt):
        P = X.astype(dt, copy=False) @ W.astype(dt, copy=False)  # (T, d_model) @ (d_model, d) -> (T, d)
        return require_finite(P, what, labels) if finite_inputs else P

    with np.errstate(invalid="ignore"):
        return to_dtype(compute(run, working_dtype(dtype)), dtype, what, labels)


def attention_block(X_query, X_source, W_Q, W_K, W_V, mask=None, **kwargs) -> Attention:
    """Project, then attend: queries from ``X_query``, keys and values from ``X_source``.

    Q = X_query W_Q (T_q, d_k); K = X_source W_K (T_k, d_k); V = X_source W_V (T_k, d_v).
    ``X_query`` is (T_q, d_model), ``X_source`` is (T_k, d_model'), W_Q is
    (d_model, d_k), W_K is (d_model', d_k), W_V is (d_model', d_v). Extra keyword
    arguments (tau, scale, empty_rows) go to :func:`attn.attention`, as do its errors.

    Dtypes: each projection as :func:`project` (float16 and bfloat16 multiplied in float32 and
    rounded back), then :func:`attn.attention` (scores and softmax in float32 for half
    precision); output and weights in the inputs' float dtype, float64 for integers.

    References: Vaswani et al. (2017), §3.2.2 and §3.2.3.
    """
    return _attend(X_query, X_source, W_Q, W_K, W_V, mask, ("X_query", "X_source"), **kwargs)


def _attend(X_query, X_source, W_Q, W_K, W_V, mask, names, **kwargs) -> Attention:
    """:func:`attention_block`, with ``names`` the caller's names for the two sequences (used in errors)."""
    _check_finite_inputs(X_query, X_source, W_Q, W_K, W_V, mask, names)
    Q = project(X_query, W_Q, names[0], "W_Q")
    K = project(X_source, W_K, names[1], "W_K")
    V = project(X_source, W_V, names[1], "W_V")
    return attention(Q, K, V, mask=mask, **kwargs)


def _check_finite_inputs(X_query, X_source, W_Q, W_K, W_V, mask, names) -> None:
    """Refuse NaN or inf in the caller's arguments, naming them (not Q, K or V, which the caller never saw).

    As in :func:`attn.attention`, a row of the source sequence that no query may read may hold anything.
    """
    for name, arr in ((names[0], X_query), ("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        check_finite(name, as_float_array(name, arr, ndim=2))
    X_source = as_float_array(names[1], X_source, ndim=2)
    bad = ~np.isfinite(X_source).all(axis=1)  # (T_k,)
    if bad.any() and mask is not None:
        T_q = as_float_array(names[0], X_query, ndim=2).shape[0]
        bad &= check_mask(mask, (T_q, X_source.shape[0])).any(axis=0)  # only the rows some query may read
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{names[1]} must be finite in every row a query may read; {names[1]}[{j}] = {X_source[j]}")


def self_attention(X, W_Q, W_K, W_V, mask=None, causal: bool = False, **kwargs) -> Attention:
    """Self-attention: queries, keys and values all come from the same sequence X (T, d_model).

    ``causal=True`` lets position i read positions j <= i (combined with ``mask``
    by logical and). Returns output (T, d_v) and weights (T, T).

    Dtypes and errors: as :func:`attention_block` (float16 and bfloat16 computed in float32,
    results in the inputs' dtype; float32 and float64 in their own precision).
    """
    if causal:
        T = as_float_array("X", X, ndim=2).shape[0]
        cm = causal_mask(T)
        mask = cm if mask is None else cm & check_mask(mask, (T, T))  # refused as attention refuses it: an
        # additive 0/-inf mask cast to bool would read exactly the keys it was meant to hide
    return _attend(X, X, W_Q, W_K, W_V, mask, ("X", "X"), **kwargs)


def cross_attention(X, Y, W_Q, W_K, W_V, mask=None, **kwargs) -> Attention:
    """Cross-attention: queries from X (T_q, d_model), keys and values from another sequence Y (T_k, d_model').

    T_q and T_k may differ. Returns output (T_q, d_v) and weights (T_q, T_k).

    Dtypes and errors: as :func:`attention_block` (float16 and bfloat16 computed in float32,
    results in the inputs' dtype; float32 and float64 in their own precision).
    """
    return _attend(X, Y, W_Q, W_K, W_V, mask, ("X", "Y"), **kwargs)
