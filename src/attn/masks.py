"""Boolean masks. Convention throughout: ``mask[i, j] = True`` means query i may read key j."""
from __future__ import annotations

import numpy as np

from ._validate import as_whole_number, check_count


def causal_mask(T_q: int, T_k: int | None = None, offset: int | None = None) -> np.ndarray:
    r"""Causal (look-back only) mask, shape (T_q, T_k), dtype bool.

    Query i may read key j when ``j <= i + offset``. For self-attention
    (``T_k`` omitted or equal to ``T_q``) the offset defaults to 0 and the
    mask is lower-triangular with its diagonal.

    When ``T_q != T_k`` the alignment of queries to keys is ambiguous (are the
    queries the first T_q positions, or the last ones, as when decoding with a
    cache?), so ``offset`` must be given: the index of the last key that
    query 0 may read. ``offset = T_k - T_q`` aligns the queries with the last
    T_q keys.

    Dtypes: the mask is always ``bool`` (no float16/float32/float64 arithmetic); it works
    unchanged with scores of any float dtype.

    Raises
    ------
    ValueError
        ``T_q`` or ``T_k`` < 1; ``T_q != T_k`` with no ``offset``; an offset
        that leaves query 0 with no key (``offset < 0``) or exceeds the last key.
    TypeError
        A count or offset that is not an integer.

    References
    ----------
    Vaswani et al. (2017), §3.2.3 (masking illegal connections in the decoder).
    """
    T_q = check_count("T_q", T_q)
    T_k = T_q if T_k is None else check_count("T_k", T_k)
    if offset is None:
        if T_q != T_k:
            raise ValueError(
                f"a causal mask with T_q = {T_q} and T_k = {T_k} is ambiguous: pass offset, the last key "
                f"query 0 may read (offset = T_k - T_q = {T_k - T_q} aligns the queries with the last keys)"
            )
        offset = 0
    offset = as_whole_number("offset", offset)
    if not 0 <= offset <= T_k - 1:
        raise ValueError(f"offset must lie in [0, T_k - 1] = [0, {T_k - 1}] so that query 0 reads a real key; got {offset}")
    i = np.arange(T_q)[:, None]  # (T_q, 1)
    j = np.arange(T_k)[None, :]  # (1, T_k)
    return j <= i + offset  # (T_q, T_k)
