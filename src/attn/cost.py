"""The cost of attention against the sequence length T (Proposition 5): counted and measured.

Counted: arithmetic operations by phase (:func:`score_flops`, checked by
:func:`count_attention_flops`, which runs attention over numbers that count their own
operations) and the bytes of one score matrix (:func:`score_matrix_bytes`).
Measured: time and traced peak memory of real calls (:func:`measure_attention`,
:func:`traced_peak`) and log-log slope fits (:func:`fit_loglog_slope`).

NumPy and the standard library only (``time``, ``tracemalloc``), so a page can
measure in the book's build. NumPy reports its array buffers to
``tracemalloc``, so a traced peak counts every temporary (T, T) array.

Typical use on the Proposition 5 page::

    from attn.cost import measure_attention, fit_loglog_slope
    naive = measure_attention([128, 256, 512, 1024])
    fit_loglog_slope(naive.T, naive.seconds).slope      # about 2
    fit_loglog_slope(naive.T, naive.peak_bytes).slope   # about 2
    blocked = measure_attention([128, 256, 512, 1024], blocked=True, block_size=64)
    fit_loglog_slope(blocked.T, blocked.peak_bytes).slope  # about 1
"""
from __future__ import annotations

import gc
import math
import operator
import time
import tracemalloc
from typing import Any, Callable, NamedTuple

import numpy as np

from ._precision import F64, is_float_dtype
from ._validate import check_count, check_scale
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


def _points(x, y, what: str, positive: bool) -> tuple[np.ndarray, np.ndarray]:
    """x and y as float64 arrays of one shape (n,), n ≥ 2, finite (and > 0 for a log-log fit), else ValueError."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or y.shape != x.shape:
        raise ValueError(f"x and y must be 1-D of the same length; got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"{what} needs at least two points; got {x.size}")
    for name, a in (("x", x), ("y", y)):
        bad = ~(np.isfinite(a) & (a > 0)) if positive else ~np.isfinite(a)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            need = "log-log fit needs finite values > 0" if positive else f"{what} needs finite values"
            raise ValueError(f"{need}; {name}[{i}] = {float(a[i])}")
    return x, y


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
    x, y = _points(x, y, "a slope", positive=True)
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


def traced_peak(fn: Callable[[], Any]) -> tuple[int, float, Any]:
    """Run ``fn()`` once under ``tracemalloc``: (peak bytes above the level at its start, seconds, its result).

    NumPy reports its array buffers to ``tracemalloc``, so the peak counts every temporary
    array ``fn`` makes, not only Python objects. If tracing is already on it stays on.
    The benchmarks (``benchmarks/timing.py``) use this one too.
    """
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base), seconds, out


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
        peaks.append(traced_peak(lambda: fn(Q, K, V))[0])
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




class FixedPlusLinear(NamedTuple):
    """Least-squares line ``y ≈ fixed + per_unit · x``: a fixed part and a part that grows linearly."""

    fixed: float
    per_unit: float

    def predict(self, x):
        """``fixed + per_unit · x``, elementwise."""
        return self.fixed + self.per_unit * np.asarray(x, dtype=float)

    @property
    def crossover(self) -> float:
        """The x at which the linear part equals the fixed one, ``fixed / per_unit`` (inf if nothing grows)."""
        return self.fixed / self.per_unit if self.per_unit > 0 else float("inf")

    def local_slope(self, x) -> np.ndarray:
        r"""The log-log slope of the fitted line at x, :math:`b x / (a + b x)`: below 1 while the fixed part
        counts, towards 1 once the linear part dominates."""
        x = np.asarray(x, dtype=float)
        return self.per_unit * x / self.predict(x)


def fit_fixed_plus_linear(x, y) -> FixedPlusLinear:
    r"""Fit :math:`y = a + b x` by least squares (a peak memory: a fixed working set plus a part per token).

    A single log-log slope through such points (:func:`fit_loglog_slope`) comes out below 1 while :math:`a`
    is not small against :math:`b x`, and rises towards 1 as :math:`x` grows.

    Parameters
    ----------
    x, y : array_like, shape (n,), n ≥ 2, real and finite, at least two distinct values of x.

    Raises
    ------
    ValueError
        Shapes differ or are not 1-D, fewer than two points, a value that is not finite, or all x equal.
    """
    x, y = _points(x, y, "a line", positive=False)
    if np.ptp(x) == 0:
        raise ValueError(f"all x are equal ({float(x[0])}): there is no line to fit")
    per_unit, fixed = np.polyfit(x, y, 1)
    return FixedPlusLinear(float(fixed), float(per_unit))


# --------------------------------------------------------------------------- counted
class FlopCount(NamedTuple):
    """Arithmetic operations of one attention call, by phase (comparisons and indexing not counted)."""

    scores: int  #: Q Kᵀ: d_k multiplications and d_k additions per score, 2·T_q·T_k·d_k
    scale: int  #: one multiplication of each score by 1/(√d_k τ), T_q·T_k
    softmax: int  #: subtract the row maximum, exponentiate, add into the row sum, divide: 4·T_q·T_k
    weighted_sum: int  #: W V: 2·T_q·T_k·d_v

    @property
    def total(self) -> int:
        """All four phases: 2·T_q·T_k·(d_k + d_v) + 5·T_q·T_k."""
        return self.scores + self.scale + self.softmax + self.weighted_sum


def score_flops(T_q: int, T_k: int, d_k: int, d_v: int) -> FlopCount:
    r"""Operation count of :math:`\operatorname{softmax}(QK^\top/(\sqrt{d_k}\tau))V`, by phase.

    Counting one multiplication and one addition per term of each inner product
    (the accumulator starts at 0), the scores cost :math:`2 T_q T_k d_k`, the
    weighted sum :math:`2 T_q T_k d_v`, and the scaling and the softmax
    :math:`T_q T_k` and :math:`4 T_q T_k`. Every phase is proportional to
    :math:`T_q T_k`: quadratic in the sequence length for self-attention.

    Parameters
    ----------
    T_q, T_k, d_k, d_v : int, each >= 1

    Returns
    -------
    FlopCount(scores, scale, softmax, weighted_sum), with a ``total`` property.

    Dtypes: Python integers, exact; the count is the same in float16, float32 and float64
    (the dtype changes the bytes moved, see :func:`score_matrix_bytes`, not the operations).

    Raises
    ------
    ValueError
        A count < 1 (naming it).
    TypeError
        A count that is not an integer.

    References
    ----------
    Vaswani et al. (2017), Table 1 (complexity per layer O(n²·d)).
    """
    T_q, T_k, d_k, d_v = (check_count(n, v) for n, v in (("T_q", T_q), ("T_k", T_k), ("d_k", d_k), ("d_v", d_v)))
    pairs = T_q * T_k
    return FlopCount(scores=2 * pairs * d_k, scale=pairs, softmax=4 * pairs, weighted_sum=2 * pairs * d_v)


class _Tally:
    """Which phase is running, and how many operations each phase has done."""

    def __init__(self):
        self.phase = "scores"
        self.counts = {"scores": 0, "scale": 0, "softmax": 0, "weighted_sum": 0}


class _Counted:
    """A float that adds one to its tally for every arithmetic operation it takes part in."""

    __slots__ = ("v", "tally")

    def __init__(self, v: float, tally: _Tally):
        self.v, self.tally = float(v), tally

    def _op(self, v: float) -> "_Counted":
        self.tally.counts[self.tally.phase] += 1
        return _Counted(v, self.tally)

    @staticmethod
    def _val(o) -> float:
        return o.v if isinstance(o, _Counted) else float(o)

    def __add__(self, o):
        return self._op(self.v + self._val(o))

    __radd__ = __add__

    def __sub__(self, o):
        return self._op(self.v - self._val(o))

    def __rsub__(self, o):
        return self._op(self._val(o) - self.v)

    def __mul__(self, o):
        return self._op(self.v * self._val(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._op(self.v / self._val(o))

    def __rtruediv__(self, o):
        return self._op(self._val(o) / self.v)

    def exp(self):
        return self._op(math.exp(self.v))

    # comparisons (for the row maximum) are not arithmetic: not counted
    def __lt__(self, o):
        return self.v < self._val(o)

    def __gt__(self, o):
        return self.v > self._val(o)


#: The orders of the same steps that :func:`count_attention_flops` can count (see its docstring).
FLOP_ORDERS = ("textbook", "scale queries", "reciprocal", "normalise output")


def count_attention_flops(Q, K, V, tau: float = 1.0, scale: float | None = None, order: str = "textbook"):
    """Attention by plain loops over numbers that count their own arithmetic.

    Every entry of Q, K and V is wrapped in a number type that adds one to a
    tally, for the current phase, whenever it is added, subtracted, multiplied,
    divided or exponentiated. The loops are the textbook ones (an inner product
    per score, a stable softmax per row, an inner product per output entry), so
    the tally is an independent count to hold :func:`score_flops` against.
    Pure Python: meant for small inputs (thousands of operations, not billions).

    ``order`` counts the same steps done in another order (the same output, up to rounding):

    - ``"textbook"``: every score multiplied by ``scale / tau``, every weight divided by its row's sum
      (what :func:`score_flops` counts: ``2 T_q T_k (d_k + d_v) + 5 T_q T_k``);
    - ``"scale queries"``: Q multiplied by ``scale / tau`` before the products, ``T_q d_k`` multiplications
      in the ``scale`` phase instead of ``T_q T_k``;
    - ``"reciprocal"``: one division per row for the reciprocal of its sum, then a multiplication per
      weight, ``T_q`` more operations in the ``softmax`` phase;
    - ``"normalise output"``: the exponentials weight the values unnormalised and each output entry is
      divided by its row's sum, ``T_q d_v`` divisions (counted in the ``softmax`` phase) instead of ``T_q T_k``.

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k); K : (T_k, d_k); V : (T_k, d_v); real.
    tau : float, default 1.0
    scale : float, optional, default ``1 / sqrt(d_k)``
    order : str, default ``"textbook"``, one of :data:`FLOP_ORDERS`

    Returns
    -------
    (output, FlopCount)
        ``output`` (T_q, d_v) float64, equal to ``attn.attention(Q, K, V, tau=tau,
        scale=scale).output`` up to rounding; the counted operations by phase.

    Dtypes: every input dtype (float16, bfloat16, float32, float64, integers) is read as
    Python floats (float64) and the output is float64; the count does not depend on it.

    Raises
    ------
    ValueError, TypeError
        As :func:`attn.attention` for the shapes and values of Q, K, V, tau and scale; a score
        Q·Kᵀ or a factor scale/τ beyond float64 (plain Python floats would turn it into NaN); an
        ``order`` that is not one of :data:`FLOP_ORDERS`.
    """
    from ._validate import check_attention_inputs

    if not isinstance(order, str) or order not in FLOP_ORDERS:
        raise ValueError(f"order must be one of {FLOP_ORDERS}; got {order!r}")

    checked = check_attention_inputs(Q, K, V, None, tau, "raise")
    Q, K, V = (x.astype(F64) for x in (checked.Q, checked.K, checked.V))
    tau = checked.tau
    T_q, d_k = Q.shape
    T_k, d_v = V.shape
    c = check_scale(scale, d_k) / tau
    if not math.isfinite(c):
        raise ValueError(f"scale / tau = {check_scale(scale, d_k)!r} / {tau!r} overflows float64; use attn.attention, "
                         "which applies them one at a time")
    t = _Tally()
    Qc = [[_Counted(x, t) for x in row] for row in Q.tolist()]
    Kc = [[_Counted(x, t) for x in row] for row in K.tolist()]
    Vc = [[_Counted(x, t) for x in row] for row in V.tolist()]
    out = np.empty((T_q, d_v))
    if order == "scale queries":
        t.phase = "scale"
        Qc = [[x * c for x in row] for row in Qc]  # 1 per entry of Q
    for i in range(T_q):
        t.phase = "scores"
        row = []
        for j in range(T_k):
            acc = 0.0
            for a in range(d_k):
                acc = acc + Qc[i][a] * Kc[j][a]  # 2 operations per term
            if not math.isfinite(acc.v):  # Python floats overflow to inf silently, then inf - inf = NaN
                raise ValueError(f"Q·Kᵀ overflows float64 at query {i}, key {j}; rescale Q or K")
            row.append(acc)
        if order != "scale queries":
            t.phase = "scale"
            row = [x * c for x in row]  # 1 per score
        t.phase = "softmax"
        m = max(row)  # comparisons only
        e = [(x - m).exp() for x in row]  # 2 per score
        total = 0.0
        for x in e:
            total = total + x  # 1 per score
        if order == "reciprocal":
            inverse = 1.0 / total  # 1 per row
            w = [x * inverse for x in e]  # 1 per score
        elif order == "normalise output":
            w = e  # divided below, once per output entry
        else:
            w = [x / total for x in e]  # 1 per score
        t.phase = "weighted_sum"
        for b in range(d_v):
            acc = 0.0
            for j in range(T_k):
                acc = acc + w[j] * Vc[j][b]  # 2 per term
            if order == "normalise output":
                t.phase = "softmax"
                acc = acc / total  # 1 per output entry
                t.phase = "weighted_sum"
            out[i, b] = acc.v
    return out, FlopCount(**t.counts)


def score_matrix_bytes(T_q: int, T_k: int, dtype=np.float64) -> int:
    """Bytes held by one (T_q, T_k) score (or weight) matrix: ``T_q * T_k * itemsize``.

    Parameters
    ----------
    T_q, T_k : int, each >= 1
    dtype : a floating dtype (or its name), default float64 (8 bytes; float32 4, float16 and bfloat16 2)

    Returns
    -------
    int, equal to ``attn.scores(Q, K).nbytes`` for Q (T_q, d_k) and K (T_k, d_k) of that dtype.

    Raises
    ------
    ValueError
        A count < 1; a dtype that NumPy does not know or that is not floating (naming it).
    TypeError
        A count that is not an integer.
    """
    T_q, T_k = check_count("T_q", T_q), check_count("T_k", T_k)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be a NumPy floating dtype such as 'float32'; got {dtype!r}") from None
    if not is_float_dtype(dt):  # bfloat16 and the float8 types of ml_dtypes too: attn accepts them
        raise ValueError(f"dtype must be a floating dtype (scores are real numbers); got {dt}")
    return T_q * T_k * dt.itemsize


__all__ = [
    "FLOP_ORDERS",
    "FixedPlusLinear",
    "FlopCount",
    "LogLogFit",
    "Measurement",
    "count_attention_flops",
    "fit_fixed_plus_linear",
    "fit_loglog_slope",
    "measure",
    "measure_attention",
    "measure_score_matrix",
    "score_flops",
    "score_matrix_bytes",
    "traced_peak",
]
