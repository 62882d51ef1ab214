"""Positional information: the sinusoidal encoding of Vaswani et al. (2017), §3.5.

Self-attention is permutation-equivariant (the theory page proves it): without something
that depends on the index, it cannot tell "dog bites man" from "man bites dog". Adding a
position-dependent matrix E to the token embeddings X breaks that symmetry.
"""
from __future__ import annotations

import math
import operator
from numbers import Real

import numpy as np


def sinusoidal_encoding(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    r"""The sinusoidal positional encoding, shape (T, d), float64.

    .. math:: E_{t,2m} = \sin\!\big(t / \text{base}^{2m/d}\big), \qquad
              E_{t,2m+1} = \cos\!\big(t / \text{base}^{2m/d}\big), \qquad t = 0, \dots, T-1.

    Row t is added to the embedding of the token at position t. Every entry lies in [-1, 1];
    row 0 is (0, 1, 0, 1, …).

    Dtypes: always float64; cast it (``E.astype(X.dtype)``) before adding it to float16 or
    float32 embeddings (every entry lies in [-1, 1], so any float dtype holds it).

    Raises
    ------
    ValueError
        ``T`` or ``d`` < 1, or ``base`` not a finite number > 1.
    TypeError
        ``T`` or ``d`` not an integer.

    References
    ----------
    Vaswani et al. (2017), "Attention is all you need", §3.5.
    """
    for name, n in (("T", T), ("d", d)):
        try:
            if isinstance(n, bool):
                raise TypeError
            operator.index(n)
        except TypeError:
            raise TypeError(f"{name} must be a whole number (an integer); got {n!r}") from None
    T, d = operator.index(T), operator.index(d)
    if T < 1 or d < 1:
        raise ValueError(f"T and d must be at least 1; got T = {T}, d = {d}")
    if isinstance(base, bool) or not isinstance(base, Real) or not math.isfinite(base) or base <= 1:
        raise ValueError(f"base must be a finite number > 1; got {base!r}")
    t = np.arange(T)[:, None]  # (T, 1)
    freq = base ** (-np.arange(0, d, 2) / d)  # (ceil(d / 2),)
    E = np.empty((T, d))
    E[:, 0::2] = np.sin(t * freq)  # (T, 1) * (ceil(d/2),) -> (T, ceil(d/2))
    E[:, 1::2] = np.cos(t * freq[: d // 2])  # (T, floor(d/2))
    return E
