"""Derivatives, entropies and costs of attention: the formulas of the Mathematics strand, in NumPy only.

Every function here implements a closed form that the book derives on its
Mathematics pages and then checks against an independent computation
(finite differences, Monte Carlo, counting). Row convention as everywhere
in ``attn``: Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._precision import (F64, compute, divide_by_tau, finfo, is_float_dtype, locate, multiply_by, require_finite, result_dtype, to_dtype,
                         wide_dtype, working_dtype)
from ._validate import as_float_array, check_axis, check_count, check_finite, check_qk, check_scale, check_tau
from .softmax import _softmax_work, softmax


# --------------------------------------------------------------------------- helpers
def _check_probabilities(name: str, w, axis: int = -1) -> np.ndarray:
    """Return ``w`` as a float array of probability vectors along ``axis``, or raise ValueError."""
    w = as_float_array(name, w)
    if w.ndim == 0:
        raise ValueError(f"{name} must be a probability vector (at least one dimension); got a scalar")
    check_finite(name, w)
    if (w < 0).any():
        where = tuple(int(i) for i in np.argwhere(w < 0)[0])
        raise ValueError(f"{name} must be non-negative (a probability vector); {name}{list(where)} = {w[where]!r}")
    # Rounding explains a sum off by sqrt(eps) of w's dtype, plus n·eps of the float32-or-wider working dtype
    # (the worst error of a sum of n terms, Higham 2002 §4.2); sqrt(eps)·n would accept a float32 row of
    # 10 000 entries summing to 3, whose "entropy" exceeds log n.
    n = w.shape[axis]
    tol = math.sqrt(float(finfo(w.dtype).eps)) + n * float(finfo(working_dtype(w.dtype)).eps)
    total = w.astype(wide_dtype(w.dtype)).sum(axis=axis)  # float64 sum: no rounding drift over many entries
    off = np.abs(total - 1) > tol
    if np.any(off):
        bad = float(np.asarray(total)[np.unravel_index(int(np.argmax(off)), np.shape(total))]) if np.ndim(total) else float(total)
        raise ValueError(f"{name} must sum to 1 along axis {axis} (a probability vector); a slice sums to {bad!r}")
    return w



# --------------------------------------------------------------------------- derivatives
def softmax_jacobian(s, tau: float = 1.0) -> np.ndarray:
    r"""Jacobian of the softmax with temperature, written through its output.

    If :math:`s = \operatorname{softmax}(x/\tau)` then

    .. math:: \frac{\partial s_i}{\partial x_j} = \frac{1}{\tau}\bigl(\delta_{ij} s_i - s_i s_j\bigr),
              \qquad J = \frac{1}{\tau}\bigl(\operatorname{diag}(s) - s s^\top\bigr).

    Parameters
    ----------
    s : array_like, shape (..., n), real
        Softmax outputs (non-negative, summing to 1 along the last axis), e.g.
        ``attn.softmax(x, tau)``. Leading axes are a batch.
    tau : float, default 1.0
        The temperature that produced ``s``; finite and > 0.

    Returns
    -------
    ndarray, shape (..., n, n)
        Symmetric, positive semi-definite, every row summing to 0; float dtype of ``s``.

    Dtypes
    ------
    float32 and float64 are computed in their own precision, float16 and bfloat16 in
    float32 and rounded back; integers give float64. The division by τ is done in float64
    when τ is not a normal number of that precision (τ is never cast to 0).

    Raises
    ------
    ValueError
        ``s`` is empty, a scalar, non-finite, has a negative entry, or a slice
        that does not sum to 1 (within ``sqrt(eps)`` of its dtype plus ``n · eps`` of float32, or of
        float64 for float64 input); ``tau`` is not a finite number > 0; an entry ``s_i(1 - s_i)/τ`` that
        the dtype cannot hold (τ tiny), naming the index.
    TypeError
        ``s`` is not real-valued.

    References
    ----------
    Bridle (1990); Goodfellow, Bengio & Courville (2016), *Deep Learning*, §6.2.2.3.
    """
    tau = check_tau(tau)
    s = _check_probabilities("s", s)
    n = s.shape[-1]
    sw = s.astype(working_dtype(s.dtype))
    diag = sw[..., :, None] * np.eye(n, dtype=sw.dtype)  # (..., n, n)
    outer = sw[..., :, None] * sw[..., None, :]  # (..., n, 1) * (..., 1, n) -> (..., n, n)
    return _over_tau(diag - outer, tau, s.dtype, "softmax_jacobian(s, tau)")


def _scaled_norm(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """Euclidean norm along the last axis, each slice divided first by a power of 2 near its largest entry.

    The scaling is exact and keeps the squares away from overflow and underflow, so a slice is 0
    only when every entry is.
    """
    top = np.max(np.abs(x), axis=-1, keepdims=True)
    e = np.frexp(np.where(top > 0, top, 1))[1]
    xs = np.ldexp(x, -e)
    out = np.ldexp(np.sqrt(np.sum(xs * xs, axis=-1, keepdims=True)), e).astype(x.dtype, copy=False)
    return out if keepdims else out[..., 0]


def _over_tau(a: np.ndarray, tau: float, dtype, what: str) -> np.ndarray:
    """``a / τ`` returned in ``dtype``; a quotient that float64 or ``dtype`` cannot hold is refused, naming τ."""
    hint = f" (tau = {tau!r} is too small for it)"

    def run(dt):
        return require_finite(divide_by_tau(np.array(a, dtype=dt), tau), what, None, hint)

    return to_dtype(compute(run, a.dtype), dtype, what, None, hint)


def softmax_jacobian_norm(s, tau: float = 1.0) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian, from the softmax output alone.

    With :math:`J = (\operatorname{diag}(s) - s s^\top)/\tau`,

    .. math:: \tau^2\lVert J \rVert_F^2 = \sum_i s_i^2 (1 - s_i)^2 + \sum_i s_i^2 \sum_{l \ne i} s_l^2 ,

    which needs no (n, n) matrix. It is largest near the uniform distribution and
    tends to 0 as ``s`` approaches one-hot (a saturated softmax passes no gradient).
    For the largest entry, :math:`1 - s_i` and :math:`\sum_{l\ne i} s_l^2` are summed
    from the other entries rather than subtracted, so the norm keeps its relative
    accuracy deep into saturation (where ``1 - s_max`` would round to 0).

    Parameters
    ----------
    s : array_like, shape (..., n), real
        Softmax outputs along the last axis (leading axes are a batch).
    tau : float, default 1.0
        The temperature that produced ``s``.

    Returns
    -------
    ndarray, shape (...)  (a 0-d array for one vector); float dtype of ``s``.

    Dtypes
    ------
    As :func:`softmax_jacobian`: float16 and bfloat16 computed in float32 and rounded back.

    Raises
    ------
    ValueError, TypeError
        As :func:`softmax_jacobian`.
    """
    tau = check_tau(tau)
    s0 = _check_probabilities("s", s)
    s = s0.astype(working_dtype(s0.dtype))
    top = np.argmax(s, axis=-1)[..., None]  # (..., 1): index of the largest entry
    is_top = np.zeros(s.shape, dtype=bool)
    np.put_along_axis(is_top, top, True, axis=-1)
    others = np.where(is_top, 0, s)  # the row without its largest entry
    s2 = s**2
    rest_norm = _scaled_norm(others, keepdims=True)  # sqrt(Σ_{l ≠ top} s_l²), summed, not subtracted; no underflow
    a = rest_norm**2 + np.take_along_axis(s2, top, axis=-1)  # Σ_l s_l² (≥ 1/n²: only for the other entries)
    one_minus = np.where(is_top, np.sum(others, axis=-1, keepdims=True), 1 - s)  # 1 - s_i
    other_norm = np.where(is_top, rest_norm, np.sqrt(np.maximum(a - s2, 0)))  # sqrt(Σ_{l ≠ i} s_l²)
    # τ‖J‖_F = ‖(s_i · sqrt((1 - s_i)² + Σ_{l≠i} s_l²))_i‖: norms of norms, each scaled, so a row near
    # one-hot (1 - s_max = 1e-200, whose square underflows) keeps its small but non-zero norm
    frob = _scaled_norm(s * np.hypot(one_minus, other_norm))
    return _over_tau(frob, tau, s0.dtype, "softmax_jacobian_norm(s, tau)")


def random_logits(d_k: int, T_k: int = 8, n: int = 1, scaled: bool = True, rng=None) -> np.ndarray:
    r"""Dot-product logits of random queries against random keys, as at initialisation.

    Draws ``n`` queries :math:`q` and ``n`` sets of ``T_k`` keys :math:`k_j` with independent
    standard normal entries of width ``d_k`` and returns :math:`q \cdot k_j`, divided by
    :math:`\sqrt{d_k}` when ``scaled``. Each logit has variance ``d_k`` unscaled and 1 scaled.

    Parameters
    ----------
    d_k, T_k, n : int, each >= 1
    scaled : bool, default True
    rng : numpy.random.Generator or int seed, optional

    Returns
    -------
    ndarray, shape (n, T_k), float64.

    Dtypes: always float64 (the draws are float64; cast the result for another dtype).

    Raises
    ------
    ValueError
        A count < 1.
    TypeError
        A count that is not an integer; an ``rng`` that is not a Generator, a seed or None.
    """
    d_k, T_k, n = check_count("d_k", d_k), check_count("T_k", T_k), check_count("n", n)
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise TypeError(f"rng must be a numpy.random.Generator, an integer seed or None; got {rng!r}") from None
    q = rng.standard_normal((n, 1, d_k))  # (n, 1, d_k)
    K = rng.standard_normal((n, T_k, d_k))  # (n, T_k, d_k)
    x = np.sum(q * K, axis=-1)  # (n, T_k)
    return x / math.sqrt(d_k) if scaled else x


def attention_grad_query(q, K, V, tau: float = 1.0, scale: float | None = None) -> np.ndarray:
    r"""Jacobian of one attention output row with respect to its query.

    For :math:`o(q) = V^\top w`, :math:`w = \operatorname{softmax}(c\,K q)`, :math:`c = \text{scale}/\tau`:

    .. math:: \frac{\partial o}{\partial q} = c\, V^\top\bigl(\operatorname{diag}(w) - w w^\top\bigr) K
              = c \sum_j w_j\,(v_j - \bar v)(k_j - \bar k)^\top,

    with :math:`\bar v = o = \sum_j w_j v_j` and :math:`\bar k = \sum_j w_j k_j`: the covariance,
    under the attention weights, between the values and the keys.

    Parameters
    ----------
    q : array_like, shape (d_k,), real
        One query (a vector, not a 1-row matrix).
    K : array_like, shape (T_k, d_k), real
    V : array_like, shape (T_k, d_v), real
    tau : float, default 1.0
        Temperature, finite and > 0.
    scale : float, optional
        Score scale, default ``1 / sqrt(d_k)`` as in :func:`attn.attention`.

    Returns
    -------
    ndarray, shape (d_v, d_k)
        Entry ``[a, b]`` is :math:`\partial o_a / \partial q_b`, in the inputs' float dtype.

    Dtypes
    ------
    As :func:`attn.attention`: float64 and float32 computed in their own precision (redone in
    float64 if a step overflows float32), float16 and bfloat16 in float32 and rounded back;
    integers give float64. τ and the scale are applied as float64 numbers.

    Raises
    ------
    ValueError
        ``q`` is not a non-empty vector; ``K`` or ``V`` is not a non-empty matrix;
        the widths of ``q`` and ``K`` differ, or ``K`` and ``V`` have different
        numbers of rows (shapes named); a NaN or inf in an input; a bad ``tau`` or ``scale``;
        a score ``K·q`` or a derivative that the dtype cannot hold, naming the entry.
    TypeError
        A non-real input.

    References
    ----------
    Vaswani et al. (2017), eq. (1), differentiated with the softmax Jacobian.
    """
    tau = check_tau(tau)
    q = as_float_array("q", q, ndim=1)
    K = as_float_array("K", K, ndim=2)
    V = as_float_array("V", V, ndim=2)
    if q.shape[0] != K.shape[1]:
        raise ValueError(f"q has shape {q.shape} and K has shape {K.shape}: the query and the keys must share the width d_k")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has shape {K.shape} and V has shape {V.shape}: every key needs one value (T_k must agree)")
    for name, arr in (("q", q), ("K", K), ("V", V)):
        check_finite(name, arr)
    scale = check_scale(scale, K.shape[1])
    dtype = result_dtype(q, K, V)

    def run(dt):
        qw, Kw, Vw = (a.astype(dt, copy=False) for a in (q, K, V))
        z = require_finite(multiply_by(Kw @ qw, scale), "K·q", ("key",))  # (T_k, d_k) @ (d_k,) -> (T_k,)
        w = _softmax_work(z, tau, -1, "K·q")  # (T_k,)
        # v_j - v̄ and k_j - k̄ reach twice the largest entry: columns near the dtype's largest number are
        # divided by a power of 2 (exactly) and the covariance multiplied back at the end
        ev, ek = (_column_exponent(a, dt) for a in (Vw, Kw))  # (d_v,), (d_k,)
        Vs, Ks = np.ldexp(Vw, -ev).astype(dt, copy=False), np.ldexp(Kw, -ek).astype(dt, copy=False)
        v_bar = w @ Vs  # (T_k,) @ (T_k, d_v) -> (d_v,), the output row o (scaled)
        k_bar = w @ Ks  # (T_k,) @ (T_k, d_k) -> (d_k,)
        cov = ((Vs - v_bar).T * w) @ (Ks - k_bar)  # (d_v, T_k) @ (T_k, d_k) -> (d_v, d_k)
        divide_by_tau(multiply_by(cov, scale), tau)
        cov = np.ldexp(cov, ev[:, None] + ek[None, :]).astype(dt, copy=False)
        return require_finite(cov, "∂o/∂q", ("output component", "query component"))

    return to_dtype(compute(run, working_dtype(dtype)), dtype, "∂o/∂q", ("output component", "query component"))


def _column_exponent(A: np.ndarray, dt) -> np.ndarray:
    """Per column of A (T, d), the power of 2 to divide by so that differences of entries cannot overflow ``dt``:
    the exponent of the column's largest |entry| where that is within a factor 8 of the largest number, else 0."""
    top = np.max(np.abs(A), axis=0)  # (d,)
    near = top >= finfo(dt).max / 8
    return np.where(near, np.frexp(top)[1], 0)


# --------------------------------------------------------------------------- entropy and temperature
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
    w = _check_probabilities("w", w, axis=axis)
    ww = w.astype(wide_dtype(w.dtype))
    positive = ww > 0
    terms = np.where(positive, -ww * np.log(np.where(positive, ww, 1)), 0.0)  # 0 log 0 = 0
    return to_dtype(terms.sum(axis=axis), w.dtype, "entropy(w)")


def entropy_tau_derivative(x, tau: float = 1.0, axis: int = -1) -> np.ndarray:
    r"""Derivative of the entropy of :math:`s = \operatorname{softmax}(x/\tau)` with respect to τ.

    .. math:: \frac{d}{d\tau} H\bigl(\operatorname{softmax}(x/\tau)\bigr)
              = \frac{\operatorname{Var}_s(x)}{\tau^3},
              \qquad \operatorname{Var}_s(x) = \sum_j s_j x_j^2 - \Bigl(\sum_j s_j x_j\Bigr)^2 .

    Parameters
    ----------
    x : array_like, any shape, real, finite
        Logits; the softmax runs along ``axis``.
    tau : float, default 1.0
        Temperature, finite and > 0.
    axis : int or None, default -1 (None: every entry is one distribution)

    Returns
    -------
    ndarray (the shape of ``x`` without ``axis``), in ``x``'s float dtype
        Non-negative; zero when every logit of the slice is equal.

    Dtypes
    ------
    Computed in float64 for every input dtype up to float64 and rounded once to ``x``'s float
    dtype (integers give float64). The logits are scaled by a power of 2 before the variance
    (exactly), and τ³ is never formed, so neither overflows on the way.

    Raises
    ------
    ValueError, TypeError
        As :func:`attn.softmax` (and ``x`` must be finite here: a masked entry
        carries no variance, drop it instead); a derivative that float64 or ``x``'s
        dtype cannot hold (a tiny τ), naming τ.
    """
    tau = check_tau(tau)
    x = as_float_array("x", x)
    check_finite("x", x)
    if x.ndim and check_axis(axis, x.ndim) is None:  # every entry at once: one distribution
        x, axis = x.reshape(-1), -1
    xw = x.astype(wide_dtype(x.dtype))
    s = softmax(xw, tau=tau, axis=axis)
    big = np.max(np.abs(xw), axis=axis, keepdims=True)
    e = np.frexp(np.where(big > 0, big, 1))[1]  # one power of 2 per slice: a slice of tiny logits keeps its digits
    xs = np.ldexp(xw, -e)  # |xs| < 1: the squares below cannot overflow
    mean = np.sum(s * xs, axis=axis, keepdims=True)
    var = np.sum(s * (xs - mean) ** 2, axis=axis)  # centred form: no cancellation
    e = np.squeeze(e, axis=axis)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(np.ldexp(var / tau, e) / tau, e) / tau  # Var(x) / τ³ = 2^2e Var(xs) / τ³, never forming τ³
    if not np.isfinite(out).all():
        raise ValueError(f"entropy_tau_derivative(x, tau) overflows float64 at {locate(~np.isfinite(out))} "
                         f"(tau = {tau!r} is too small for these logits)")
    return to_dtype(out, x.dtype, "entropy_tau_derivative(x, tau)", None, f" (tau = {tau!r})")


# --------------------------------------------------------------------------- similarity
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


# --------------------------------------------------------------------------- cost
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


def count_attention_flops(Q, K, V, tau: float = 1.0, scale: float | None = None):
    """Attention by plain loops over numbers that count their own arithmetic.

    Every entry of Q, K and V is wrapped in a number type that adds one to a
    tally, for the current phase, whenever it is added, subtracted, multiplied,
    divided or exponentiated. The loops are the textbook ones (an inner product
    per score, a stable softmax per row, an inner product per output entry), so
    the tally is an independent count to hold :func:`score_flops` against.
    Pure Python: meant for small inputs (thousands of operations, not billions).

    Parameters
    ----------
    Q : array_like, shape (T_q, d_k); K : (T_k, d_k); V : (T_k, d_v); real.
    tau : float, default 1.0
    scale : float, optional, default ``1 / sqrt(d_k)``

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
        Q·Kᵀ or a factor scale/τ beyond float64 (plain Python floats would turn it into NaN).
    """
    from ._validate import check_attention_inputs

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
        t.phase = "scale"
        row = [x * c for x in row]  # 1 per score
        t.phase = "softmax"
        m = max(row)  # comparisons only
        e = [(x - m).exp() for x in row]  # 2 per score
        total = 0.0
        for x in e:
            total = total + x  # 1 per score
        w = [x / total for x in e]  # 1 per score
        t.phase = "weighted_sum"
        for b in range(d_v):
            acc = 0.0
            for j in range(T_k):
                acc = acc + w[j] * Vc[j][b]  # 2 per term
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
