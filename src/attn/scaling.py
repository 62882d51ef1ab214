"""Measuring Proposition 5: time and memory of attention against the sequence length T.

NumPy and the standard library only (``time``, ``tracemalloc``), so a page can
measure in the book's build. NumPy reports its array buffers to
``tracemalloc``, so a traced peak counts every temporary (T, T) array.

Typical use on the Proposition 5 page::

    from attn.scaling import measure_attention, fit_loglog_slope
    naive = measure_attention([128, 256, 512, 1024])
    fit_loglog_slope(naive.T, naive.seconds).slope      # about 2
    fit_loglog_slope(naive.T, naive.peak_bytes).slope   # about 2
    blocked = measure_attention([128, 256, 512, 1024], blocked=True, block_size=64)
    fit_loglog_slope(blocked.T, blocked.peak_bytes).slope  # about 1
"""
from __future__ import annotations

import gc
import operator
import time
import tracemalloc
from typing import Callable, NamedTuple

import numpy as np

from .attention import attention, scores
from .blocked import blocked_attention


class Measurement(NamedTuple):
    """One row per sequence length T; every field is a 1-D array of the same length."""

    T: np.ndarray  #: sequence lengths (int)
    seconds: np.ndarray  #: best (minimum) wall-clock time of one call over the repeats, in seconds
    peak_bytes: np.ndarray  #: peak memory allocated during one call (tracemalloc), in bytes
    score_bytes: np.ndarray  #: size of one (T, T) score matrix in the dtype used, T² · itemsize


class LogLogFit(NamedTuple):
    """Least-squares line through (log x, log y): ``y ≈ exp(intercept) · x**slope``."""

    slope: float
    intercept: float  #: natural log of the prefactor
    r_squared: float  #: fraction of the variance of log y that the line explains

    def predict(self, x):
        """``exp(intercept) · x**slope``, elementwise."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


def fit_loglog_slope(x, y) -> LogLogFit:
    r"""Fit :math:`\log y = a + b \log x` by least squares; ``b`` is the scaling exponent.

    A quadratic cost (time or memory ∝ T²) has slope 2 on a log-log plot, a
    linear one slope 1 (Proposition 5).

    Parameters
    ----------
    x, y : array_like, shape (n,), n ≥ 2, real, finite and > 0
        At least two distinct values of x.

    Returns
    -------
    LogLogFit(slope, intercept, r_squared)

    Raises
    ------
    ValueError
        Shapes differ or are not 1-D, fewer than two points, a value that is not
        finite and > 0, or all x equal (no slope to fit).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or y.shape != x.shape:
        raise ValueError(f"x and y must be 1-D of the same length; got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"a slope needs at least two points; got {x.size}")
    for name, a in (("x", x), ("y", y)):
        bad = ~(np.isfinite(a) & (a > 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"log-log fit needs finite values > 0; {name}[{i}] = {float(a[i])}")
    lx, ly = np.log(x), np.log(y)
    if np.ptp(lx) == 0:
        raise ValueError(f"all x are equal ({float(x[0])}): there is no slope to fit")
    slope, intercept = np.polyfit(lx, ly, 1)
    resid = ly - (intercept + slope * lx)
    ss_tot = float(np.sum((ly - ly.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else 1.0
    return LogLogFit(float(slope), float(intercept), r2)


def _lengths(T_values) -> list[int]:
    try:
        Ts = [operator.index(T) for T in T_values]
    except TypeError:
        raise TypeError(f"T_values must be whole numbers; got {list(T_values)!r}") from None
    if not Ts or min(Ts) < 1:
        raise ValueError(f"T_values must be a non-empty list of lengths ≥ 1; got {Ts}")
    return Ts


def _peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated while ``fn`` runs, above the level at its start."""
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base)


def measure(fn: Callable, T_values, d_k: int = 64, d_v: int | None = None, repeats: int = 5,
            dtype=np.float64, seed: int = 0) -> Measurement:
    """Time and trace ``fn(Q, K, V)`` on random Q, K (T, d_k) and V (T, d_v) for each T.

    Each T gets one traced run (peak memory, which also warms up) and then
    ``repeats`` timed runs, untraced; ``seconds`` is the fastest of them (the
    least disturbed by other work on the machine, as ``timeit`` advises). Inputs are
    standard normal, drawn from ``numpy.random.default_rng(seed)``.

    Dtypes: the inputs are drawn in float64 and cast to ``dtype``; ``fn`` then follows its own
    policy (:func:`attn.attention` computes float16 in float32, so a float16 run also holds a
    float32 score matrix). ``score_bytes`` is T² times the itemsize of ``dtype``.

    Raises ValueError for an empty ``T_values``, a length < 1, ``repeats`` < 1
    or a width < 1; TypeError for lengths that are not integers.
    """
    Ts = _lengths(T_values)
    d_v = d_k if d_v is None else d_v
    for name, n in (("repeats", repeats), ("d_k", d_k), ("d_v", d_v)):
        if operator.index(n) < 1:
            raise ValueError(f"{name} must be at least 1; got {n}")
    rng = np.random.default_rng(seed)
    secs, peaks = [], []
    for T in Ts:
        Q = rng.standard_normal((T, d_k)).astype(dtype, copy=False)
        K = rng.standard_normal((T, d_k)).astype(dtype, copy=False)
        V = rng.standard_normal((T, d_v)).astype(dtype, copy=False)
        peaks.append(_peak_bytes(lambda: fn(Q, K, V)))
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(Q, K, V)
            runs.append(time.perf_counter() - t0)
        secs.append(min(runs))
    itemsize = np.dtype(dtype).itemsize
    T_arr = np.array(Ts)
    return Measurement(T_arr, np.array(secs), np.array(peaks), T_arr.astype(np.int64) ** 2 * itemsize)


def measure_score_matrix(T_values, d_k: int = 64, repeats: int = 5, dtype=np.float64, seed: int = 0) -> Measurement:
    r"""Time and peak memory of forming the score matrix :math:`S = Q K^\top / \sqrt{d_k}` alone, for each T.

    Q and K are (T, d_k); S is (T, T), so ``peak_bytes`` is about
    ``score_bytes = T² · itemsize`` and ``seconds`` grows like T² · d_k.
    Same arguments and errors as :func:`measure`.
    """
    return measure(lambda Q, K, V: scores(Q, K), T_values, d_k=d_k, d_v=1, repeats=repeats, dtype=dtype, seed=seed)


def measure_attention(T_values, d_k: int = 64, d_v: int | None = None, repeats: int = 5, dtype=np.float64,
                      seed: int = 0, blocked: bool = False, block_size: int = 128) -> Measurement:
    """Time and peak memory of :func:`attn.attention` (or, with ``blocked=True``, of
    :func:`attn.blocked_attention` with ``block_size`` keys per block and all queries at once), for each T.

    The naive version's peak is a few (T, T) arrays (slope 2 in T); the blocked
    version's is a few (T, block_size) tiles plus the (T, d_v) output (slope 1).
    Same arguments and errors as :func:`measure`.
    """
    if blocked:
        def fn(Q, K, V):
            return blocked_attention(Q, K, V, block_size=block_size, query_block_size=None)
    else:
        def fn(Q, K, V):
            return attention(Q, K, V)
    return measure(fn, T_values, d_k=d_k, d_v=d_v, repeats=repeats, dtype=dtype, seed=seed)


__all__ = [
    "LogLogFit",
    "Measurement",
    "fit_loglog_slope",
    "measure",
    "measure_attention",
    "measure_score_matrix",
]
