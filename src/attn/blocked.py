"""Blocked attention: the online softmax, so that the (T_q, T_k) score matrix is never held whole.

The keys are walked in blocks. For each query the function keeps a running
maximum ``m`` of the scores seen so far, a running sum ``l`` of their
exponentials (taken relative to ``m``) and a running weighted sum ``acc`` of
value rows. When a new block raises the maximum from ``m`` to ``m'``, the old
sum and accumulator are rescaled by ``exp((m - m') / τ)``, so that at the end

    l   = Σ_j exp((s_j - m) / τ),        acc = Σ_j exp((s_j - m) / τ) v_j,

and ``acc / l`` is exactly ``softmax(s / τ) V``, computed with O(block) memory
per query instead of O(T_k).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._precision import NotFinite, compute, subtract_and_divide, to_dtype, wide_dtype, working_dtype
from ._validate import check_attention_inputs, check_count, check_scale
from .attention import SCORE_HINT, clip_to_values, scaled_product, value_exponent

DEFAULT_BLOCK_SIZE = 512
DEFAULT_QUERY_BLOCK_SIZE = 1024


class BlockedAttention(NamedTuple):
    """What :func:`blocked_attention` returns with ``return_lse=True``."""

    output: np.ndarray  #: (T_q, d_v): the same rows as ``attn.attention(...).output``
    lse: np.ndarray  #: (T_q,): log Σ_j exp(s_ij / τ) over the keys query i may read (-inf for an empty row); float32 or wider



def blocked_attention(
    Q,
    K,
    V,
    mask=None,
    tau: float = 1.0,
    scale: float | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    empty_rows: str = "raise",
    *,
    query_block_size: int | None = DEFAULT_QUERY_BLOCK_SIZE,
    return_lse: bool = False,
):
    r"""Scaled dot-product attention :math:`\operatorname{softmax}(Q K^\top / \sqrt{d_k} / \tau)\, V`, keys in blocks.

    Computes the same output as :func:`attn.attention` without forming the
    (T_q, T_k) score or weight matrix: the keys are read ``block_size`` at a
    time (queries ``query_block_size`` at a time) and combined with the online
    softmax, a running row maximum and a running sum of exponentials that are
    rescaled whenever the maximum grows. Working memory is
    O(query_block_size · block_size + T_q · d_v) rather than O(T_q · T_k);
    with ``query_block_size=None`` (all queries at once) it is O(T_q · block_size).

    A query whose first blocks of keys are all masked keeps ``m = -inf``,
    ``l = 0`` and ``acc = 0`` (never ``exp(-inf - (-inf)) = NaN``) until a block
    gives it a readable key.

    Parameters
    ----------
    Q, K, V, mask
        As in :func:`attn.attention`: Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v), real; ``mask[i, j] = True``
        (shape (T_q, T_k), optional): query i may read key j. A (query block, key block) tile whose mask is all False is skipped, so a
        causal mask costs about half the work.
    tau : float, default 1.0
        Softmax temperature τ, finite and > 0.
    scale : float, optional
        Score scale, default ``1 / sqrt(d_k)``.
    block_size : int, default 512
        Number of keys per block (≥ 1; larger than T_k means one block).
    empty_rows : {"raise", "zero"}, default "raise"
        A query that may read no key: ``"raise"`` a ValueError naming the rows,
        ``"zero"`` a zero output row (and ``lse = -inf``), as in :func:`attn.attention`.
    query_block_size : int or None, keyword-only, default 1024
        Number of queries per block (``None``: all queries at once). Changes
        speed and memory, not the result beyond rounding.
    return_lse : bool, keyword-only, default False
        Also return the log-sum-exp of each row (what a backward pass needs to
        rebuild the weights, ``weights[i, j] = exp(s_ij / τ - lse_i)``).

    Returns
    -------
    ndarray, shape (T_q, d_v)
        With ``return_lse=False`` (the default): the output alone, equal to
        ``attn.attention(Q, K, V, ...).output`` up to rounding (within 1e-12 in
        float64). The weights are never formed, so they are not returned.
    BlockedAttention(output, lse)
        With ``return_lse=True``: the output and ``lse`` (T_q,), where
        ``lse[i] = log Σ_{j readable} exp(s_ij / τ)`` and ``s = scale · Q Kᵀ``.

    Dtypes
    ------
    The same policy as :func:`attn.attention`, so the two agree in every dtype:
    float64 is computed and returned in float64; float32 in float32 (redone in
    float64 if a score overflows float32); float16 and bfloat16 are computed in
    float32 (scores, running maximum, running sums and the accumulator of value
    rows) and the output rounded to the input dtype; integers give float64. τ
    stays a float64 number. ``lse`` is computed in float64 and returned in the
    working dtype (float32 for half precision, as FlashAttention keeps it), since
    it routinely exceeds float16's range. The accumulator sums up to T_k value
    rows, so V is scaled by a power of 2 (exactly) when ``max |V| · T_k`` nears
    the working dtype's largest number.

    Raises
    ------
    ValueError
        Every error of :func:`attn.attention` (same checks, same messages: shapes,
        non-finite readable inputs, τ, scale, fully masked rows under ``"raise"``,
        unknown policy, "Q·Kᵀ overflows float64 at query i, key j"); a block size < 1; with
        ``return_lse=True``, an lse beyond float64, or beyond the working dtype it is returned in
        (float32 for float32 and half-precision inputs: scores over a tiny τ), naming the query.
    TypeError
        A non-real input, a non-boolean mask, a block size that is not an integer.

    References
    ----------
    Milakov & Gimelshein (2018), "Online normalizer calculation for softmax", Alg. 3;
    Dao et al. (2022), "FlashAttention: fast and memory-efficient exact attention
    with IO-awareness", Alg. 1; Vaswani et al. (2017), eq. (1).
    """
    checked = check_attention_inputs(Q, K, V, mask, tau, empty_rows)
    Q, K, V, mask, tau = checked.Q, checked.K, checked.V, checked.mask, checked.tau
    dtype = checked.dtype
    block_size = check_count("block_size", block_size)
    if query_block_size is not None:
        query_block_size = check_count("query_block_size", query_block_size)
    T_q, d_k = Q.shape
    T_k, d_v = V.shape
    scale = check_scale(scale, d_k)
    work = working_dtype(dtype)
    qb = T_q if query_block_size is None else query_block_size

    def run(dt):
        e = value_exponent(V, T_k, dt)  # V · 2**-e: no partial sum of T_k rows can overflow dt
        Vw = V.astype(dt) if e is None else np.ldexp(V.astype(wide_dtype(dt)), -e).astype(dt)
        output = np.zeros((T_q, d_v), dtype=dt)
        lse = np.empty(T_q, dtype=wide_dtype(dt))
        for q0 in range(0, T_q, qb):
            q1 = min(q0 + qb, T_q)
            out_b, lse[q0:q1] = _query_block(Q[q0:q1], q0, K, Vw, None if mask is None else mask[q0:q1],
                                             tau, scale, block_size, dt)
            output[q0:q1] = out_b
        if e is not None:
            clip_to_values(output, Vw)
            output = np.ldexp(output.astype(wide_dtype(dt)), e)  # exact; never beyond max |V| (a convex combination)
        return output, lse

    output, lse = compute(run, work)
    output = to_dtype(output, dtype, "the output", ("query", "column"))
    if return_lse:
        if np.isposinf(lse).any():  # -inf marks a query with no key; +inf is m / τ beyond float64
            raise ValueError(f"lse overflows float64 at query {int(np.flatnonzero(np.isposinf(lse))[0])}: "
                             f"the largest score divided by tau = {tau!r} is beyond float64's range")
        return BlockedAttention(output, to_dtype(lse, work, "lse", ("query",)))
    return output


def _query_block(Qb, q0, K, V, mask, tau, scale, block_size, dt):
    """The online softmax for one block of queries, in ``dt``: returns its output rows and their lse (float64).

    Raises :class:`~attn._precision.NotFinite` when a tile of scores overflows ``dt``.
    """
    T_k, d_v = V.shape
    b_q = Qb.shape[0]
    m = np.full(b_q, -np.inf, dtype=dt)  # running maximum of the scores, (b_q,)
    l = np.zeros(b_q, dtype=dt)  # running Σ exp((s - m) / τ), (b_q,)
    acc = np.zeros((b_q, d_v), dtype=dt)  # running Σ exp((s - m) / τ) v, (b_q, d_v)
    for k0 in range(0, T_k, block_size):
        k1 = min(k0 + block_size, T_k)
        mb = None if mask is None else mask[:, k0:k1]  # (b_q, b_k)
        if mb is not None and not mb.any():
            continue  # nothing readable in this tile: it changes neither m, l nor acc
        S = scaled_product(Qb, K[k0:k1], scale, dt)  # (b_q, d_k) @ (d_k, b_k) -> (b_q, b_k)
        if not (np.isfinite(S.max()) and np.isfinite(S.min())):  # name the caller's query and key, not the tile's
            i, j = (int(t) for t in np.argwhere(~np.isfinite(S))[0])
            raise NotFinite("Q·Kᵀ", f"query {q0 + i}, key {k0 + j}", dt, SCORE_HINT)
        if mb is not None:
            S[~mb] = -np.inf
        m_new = np.maximum(m, S.max(axis=1))  # (b_q,)
        # Rows with no readable key yet have m_new = -inf: shift by 0 so that
        # exp(-inf - 0) = 0 rather than exp(-inf + inf) = NaN.
        shift = np.where(np.isneginf(m_new), 0.0, m_new).astype(dt, copy=False)
        subtract_and_divide(S, shift[:, None], tau)  # (s - m') / τ, as attn.softmax does: no overflow, max -> 0
        P = np.exp(S, out=S)  # (b_q, b_k), largest readable entry of the row so far -> 1
        alpha = np.exp(subtract_and_divide(m.copy(), shift, tau))  # (b_q,) rescales the old sums; 0 where m = -inf
        l *= alpha
        l += P.sum(axis=1)
        acc *= alpha[:, None]
        acc += P @ V[k0:k1]  # (b_q, b_k) @ (b_k, d_v) -> (b_q, d_v)
        m = m_new
    full = l > 0  # False exactly for the queries that may read no key
    out = np.zeros((b_q, d_v), dtype=dt)
    out[full] = acc[full] / l[full, None]
    wide = wide_dtype(dt)  # float64 (long double for long double): m / τ may pass float32's range
    lse = np.full(b_q, -np.inf, dtype=wide)
    with np.errstate(over="ignore"):
        lse[full] = m[full].astype(wide) / tau + np.log(l[full].astype(wide))
    return out, lse
