"""Multi-head self-attention by splitting heads (NumPy only).

Row convention as in the rest of :mod:`attn`: a sequence is a matrix X of shape
(T, d_model), one row per token. Heads are stacked along a new leading axis,
so the h heads of a (T, h·d_k) matrix of projected tokens (Q = X W_Q, say) form an
array of shape (h, T, d_k).

References
----------
Vaswani et al. (2017), "Attention is all you need", §3.2.2 (multi-head attention):
MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O with head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._precision import compute, require_finite, result_dtype, to_dtype, working_dtype
from ._validate import as_float_array, check_count, check_finite, check_mask
from .attention import score_matrix, weighted_values
from .softmax import softmax_inplace
from .wiring import project


class MultiHeadAttention(NamedTuple):
    """What :func:`multi_head_attention` returns; unpacks as ``output, weights = ...``."""

    output: np.ndarray  #: (T, d_out): the merged heads times W_O
    weights: np.ndarray  #: (h, T, T): weights[a, i, j] is how much query i of head a reads key j



def _per_head_width(name: str, width: int, h: int, per_head: str = "") -> int:
    """``width // h``, or a ValueError naming ``name``, its width and h.

    ``per_head`` is the symbol of one head's width in ``name`` (``"d_k"`` for W_Q and W_K, ``"d_v"``
    for W_V): the message then says the width must be ``h · d_k`` (or ``h · d_v``). Without it the
    matrix is any (T, h·d) matrix to split, and the message says "h times the per-head width".
    """
    if width % h:
        must = f"h · {per_head}, h times the per-head width {per_head}" if per_head else \
            "h times the per-head width"
        raise ValueError(
            f"{name} has width {width}, which h = {h} heads cannot split evenly: "
            f"the width must be {must}, and {width} is not divisible by {h}"
        )
    return width // h


def split_heads(Q, h: int) -> np.ndarray:
    """Split the columns of Q into h heads: (T, h·d_k) -> (h, T, d_k).

    Q is the projected queries Q = X W_Q (or the keys K = X W_K, or the values V = X W_V, with d_v
    for d_k): any matrix whose width h divides. Head a (counting from 0), row t is
    ``Q[t, a*d_k:(a+1)*d_k]``: the a-th block of d_k columns of token t. Vaswani et al. take
    d_k = d_model / h, but nothing here needs it.
    It takes a reshape *then* a transpose: ``Q.reshape(T, h, d_k).transpose(1, 0, 2)``.
    Reshaping straight to (h, T, d_k) would cut the flattened matrix in the wrong order
    and mix tokens into the wrong rows.

    Parameters
    ----------
    Q : array_like, shape (T, h·d_k), real
    h : int >= 1, number of heads; must divide the width of Q.

    Returns
    -------
    ndarray, shape (h, T, d_k), Q's float dtype (integers give float64): a view, no arithmetic,
    so every dtype (float16, bfloat16, float32, float64) passes through unchanged.

    Raises
    ------
    ValueError
        Q is not a non-empty matrix (its shape is named); h < 1; Q's width not divisible by h.
    TypeError
        Q is not real-valued, or h is not an integer.
    """
    h = check_count("the number of heads h", h)
    Q = as_float_array("Q", Q, ndim=2)
    T, width = Q.shape
    d_k = _per_head_width("Q", width, h)
    return Q.reshape(T, h, d_k).transpose(1, 0, 2)  # (T, h·d_k) -> (T, h, d_k) -> (h, T, d_k)


def merge_heads(heads) -> np.ndarray:
    """Inverse of :func:`split_heads`: (h, T, d_k) -> (T, h·d_k), heads side by side.

    Row t is ``concat(heads[0, t], heads[1, t], …, heads[h-1, t])`` (the Concat of Vaswani et
    al. §3.2.2). Returns the float dtype of ``heads`` (integers give float64); no arithmetic, so
    every dtype passes unchanged.

    Parameters
    ----------
    heads : array_like, shape (h, T, d_k), real

    Raises
    ------
    ValueError
        heads is not a non-empty 3-dimensional array (its shape is named).
    TypeError
        heads is not real-valued.
    """
    heads = as_float_array("heads", heads, ndim=3)
    h, T, d_k = heads.shape
    return heads.transpose(1, 0, 2).reshape(T, h * d_k)  # (h, T, d_k) -> (T, h, d_k) -> (T, h·d_k)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, h: int, mask=None) -> MultiHeadAttention:
    r"""Multi-head self-attention: h scaled dot-product heads on one sequence, concatenated, then W_O.

    .. math::
        Q = X W_Q,\ K = X W_K,\ V = X W_V;\quad
        \text{head}_a = \operatorname{softmax}\!\big(Q_a K_a^\top / \sqrt{d_k}\big) V_a;\quad
        \text{output} = [\text{head}_1, \dots, \text{head}_h]\, W_O

    where :math:`Q_a` is the a-th block of d_k columns of Q (likewise K_a, V_a with d_v).
    Stacking the h per-head matrices :math:`W_a^Q` (d_model, d_k) side by side gives W_Q.

    Parameters
    ----------
    X : array_like, shape (T, d_model), real
    W_Q, W_K : array_like, shape (d_model, h·d_k), real
    W_V : array_like, shape (d_model, h·d_v), real
    W_O : array_like, shape (h·d_v, d_out), real (usually d_out = d_model)
    h : int >= 1
        Number of heads; must divide the widths of W_Q, W_K and W_V.
    mask : array_like of bool, shape (T, T), optional
        ``mask[i, j] = True``: query i may read key j, in every head (as in :func:`attn.attention`).

    Returns
    -------
    MultiHeadAttention(output, weights)
        ``output`` (T, d_out) and ``weights`` (h, T, T), in the inputs' float dtype;
        each row of each head's weights sums to 1.

    Dtypes
    ------
    Every step follows :func:`attn.project` and :func:`attn.attention`, so the result equals
    projecting with ``attn.project``, running ``attn.attention`` on each head, concatenating
    and projecting with W_O, in every dtype: float64 and float32 are computed in their own
    precision (a float32 step that overflows is redone in float64); float16 and bfloat16 are
    computed in float32 (projections, scores, softmax, weighted sums) and each of Q, K, V, the
    heads and the output is rounded to the input dtype, as a half-precision model stores them.

    Raises
    ------
    ValueError
        An argument is not a non-empty matrix; inner widths disagree (both shapes named);
        W_Q and W_K differ in width; a width not divisible by h; W_O's rows differ from
        W_V's width; a mask of the wrong shape; a query row whose keys are all masked;
        NaN or inf in X or a weight matrix; h < 1; a product that the dtype cannot hold,
        named ("X·W_Q overflows float16 at token 0, column 3", "Q·Kᵀ overflows float64 at
        head 0, query 1, key 2", "the output overflows float16 at token 0, column 0").
    TypeError
        A non-real input, a non-boolean mask, or a non-integer h.

    References
    ----------
    Vaswani et al. (2017), §3.2.2 (multi-head attention) and eq. (1) (each head).
    """
    h = check_count("the number of heads h", h)
    X = as_float_array("X", X, ndim=2)
    W_Q = as_float_array("W_Q", W_Q, ndim=2)
    W_K = as_float_array("W_K", W_K, ndim=2)
    W_V = as_float_array("W_V", W_V, ndim=2)
    W_O = as_float_array("W_O", W_O, ndim=2)
    for name, arr in (("X", X), ("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)):
        check_finite(name, arr)
    if W_Q.shape[1] != W_K.shape[1]:
        raise ValueError(
            f"W_Q has shape {W_Q.shape} and W_K has shape {W_K.shape}: queries and keys must share "
            f"the width h·d_k (got {W_Q.shape[1]} and {W_K.shape[1]})"
        )
    d_k = _per_head_width("W_Q", W_Q.shape[1], h, "d_k")
    _per_head_width("W_V", W_V.shape[1], h, "d_v")
    if W_O.shape[0] != W_V.shape[1]:
        raise ValueError(
            f"W_V has shape {W_V.shape} and W_O has shape {W_O.shape}: the merged heads have width "
            f"h·d_v = {W_V.shape[1]}, so W_O needs {W_V.shape[1]} rows (got {W_O.shape[0]})"
        )
    T = X.shape[0]
    if mask is not None:
        mask = check_mask(mask, (T, T))
        empty = ~mask.any(axis=1)
        if empty.any():
            raise ValueError(
                f"query row(s) {np.flatnonzero(empty).tolist()} may read no key: every entry of mask "
                "in those rows is False"
            )

    dtype = result_dtype(X, W_Q, W_K, W_V, W_O)
    work = working_dtype(dtype)
    Q = split_heads(project(X, W_Q, "X", "W_Q"), h)  # (T, h·d_k) -> (h, T, d_k), in dtype
    K = split_heads(project(X, W_K, "X", "W_K"), h)  # (T, h·d_k) -> (h, T, d_k)
    V = split_heads(project(X, W_V, "X", "W_V"), h)  # (T, h·d_v) -> (h, T, d_v)
    if mask is not None and not mask.any(axis=0).all():  # a token no query may read: its value is ignored,
        V = np.where(mask.any(axis=0)[None, :, None], V, 0)  # even in the choice of weighted_values' scale
    S = score_matrix(Q, K, 1.0 / math.sqrt(d_k), work)  # (h, T, d_k) @ (h, d_k, T) -> (h, T, T), finite
    if mask is not None:
        np.copyto(S, -np.inf, where=~mask[None, :, :])  # the same mask in every head
    weights = softmax_inplace(S, axis=-1, name="the scores Q·Kᵀ")  # (h, T, T), each row sums to 1
    heads = to_dtype(weighted_values(weights, V), dtype, "a head's output", ("head", "query", "column"))
    merged = merge_heads(heads)  # (h, T, d_v) -> (T, h·d_v)

    def run(dt):  # (T, h·d_v) @ (h·d_v, d_out) -> (T, d_out)
        return require_finite(merged.astype(dt) @ W_O.astype(dt, copy=False), "the output", ("token", "column"))

    output = compute(run, work)
    return MultiHeadAttention(to_dtype(output, dtype, "the output", ("token", "column")),
                              weights.astype(dtype, copy=False))
