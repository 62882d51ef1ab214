"""Input checks shared by the attention functions.

Every check raises ``ValueError`` (or ``TypeError`` for a non-numeric
argument) with a message that names the argument, the problem and the
offending value or shapes, so that a reader never meets a NaN or a
traceback from deep inside NumPy instead.
"""
from __future__ import annotations

import math
import operator
from numbers import Real
from typing import NamedTuple

import numpy as np

from ._precision import finfo, is_float_dtype, result_dtype, wide_dtype, working_dtype


def as_float_array(name: str, x, ndim: int | None = None) -> np.ndarray:
    """Return ``x`` as a floating-point array, or raise a clear error.

    Integer input is promoted to float64 (Python integers beyond int64, Fractions and Decimals
    too); float16, float32 and float64 keep their dtype, as do bfloat16 and the float8 types of ``ml_dtypes``. Booleans,
    complex numbers and strings are refused.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be a numeric array; could not read it as one ({exc})") from None
    if arr.dtype == object and arr.size and all(isinstance(v, Real) and not isinstance(v, bool) for v in arr.flat):
        # Python integers beyond int64 (2**70), Fractions, Decimals: real numbers NumPy keeps as objects
        try:
            arr = arr.astype(np.float64)
        except OverflowError:
            raise ValueError(f"{name} holds an integer beyond float64's range (about 1.8e308)") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or is_float_dtype(arr.dtype)):
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        want = {1: "a vector", 2: "a matrix (rows are tokens)"}.get(ndim, f"{ndim}-dimensional")
        raise ValueError(f"{name} must be {want}, with {ndim} dimension(s); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); attention needs at least one token and one feature")
    if np.issubdtype(arr.dtype, np.integer):
        arr = arr.astype(np.float64)
    return arr


def check_tau(tau) -> float:
    """Return the temperature τ as a float; it must be a finite real number > 0."""
    if isinstance(tau, bool) or not isinstance(tau, (Real, np.floating, np.integer)):
        raise ValueError(f"temperature tau must be a finite number > 0; got {tau!r}")
    tau = float(tau)
    if not math.isfinite(tau) or tau <= 0:
        raise ValueError(f"temperature tau must be a finite number > 0; got {tau!r}")
    return tau


def as_whole_number(name: str, n, what: str = "a whole number (an integer)") -> int:
    """Return ``n`` as a Python int (anything with ``__index__``, never a bool), or raise TypeError naming ``name``."""
    if not isinstance(n, bool):
        try:
            return operator.index(n)
        except TypeError:
            pass
    raise TypeError(f"{name} must be {what}; got {n!r}")


def check_axis(axis, ndim: int, name: str = "x") -> int | None:
    """Return ``axis`` as an int in [0, ndim) (negative counts from the end), or None (every entry at once).

    Refuses, naming ``axis``, what NumPy would refuse from deep inside a reduction (an axis out of
    range, a float, a tuple of axes).
    """
    if axis is None:
        return None
    axis = as_whole_number("axis", axis, "an integer or None")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for {name} with {ndim} dimension(s) (shape axes 0 to {ndim - 1})")
    return axis % ndim


def check_scale(scale, d_k: int) -> float:
    """Return the score scale as a float: ``1 / sqrt(d_k)`` when ``scale`` is None, else a finite real number."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, (Real, np.floating, np.integer)) or not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number (default 1/sqrt(d_k)); got {scale!r}")
    return float(scale)


def check_finite(name: str, arr: np.ndarray) -> None:
    """Raise if ``arr`` holds NaN or ±inf, naming the first bad entry."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite; {name}{list(where)} = {arr[where].item()!r}")


def check_mask(mask, shape: tuple[int, int]) -> np.ndarray:
    """Return ``mask`` as a boolean (T_q, T_k) array; True means "may read"."""
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(
            f"mask must be boolean (True = this query may read this key); got dtype {m.dtype}. "
            "An additive mask of 0 and -inf is a different convention: convert it with mask = (additive == 0)."
        )
    if m.shape != shape:
        raise ValueError(f"mask has shape {m.shape} but the score matrix Q Kᵀ has shape {shape} (T_q, T_k)")
    return m


EMPTY_ROW_POLICIES = ("raise", "zero")


def check_qk(Q, K) -> tuple[np.ndarray, np.ndarray]:
    """Return Q (T_q, d_k) and K (T_k, d_k) as float matrices that share the width d_k."""
    Q = as_float_array("Q", Q, ndim=2)
    K = as_float_array("K", K, ndim=2)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(
            f"Q has shape {Q.shape} and K has shape {K.shape}: queries and keys must share "
            f"the width d_k (got {Q.shape[1]} and {K.shape[1]})"
        )
    return Q, K


class AttentionInputs(NamedTuple):
    """The checked inputs of one attention call (what :func:`check_attention_inputs` returns)."""

    Q: np.ndarray  #: (T_q, d_k), float
    K: np.ndarray  #: (T_k, d_k), float; rows no query may read are zeros (a copy)
    V: np.ndarray  #: (T_k, d_v), float; likewise
    mask: np.ndarray | None  #: bool (T_q, T_k), or None: every key readable, no (T_q, T_k) array built
    empty: np.ndarray  #: bool (T_q,): the queries that may read no key
    tau: float  #: the temperature τ
    dtype: np.dtype  #: the dtype of the result


def check_attention_inputs(Q, K, V, mask, tau, empty_rows) -> AttentionInputs:
    """Every check that :func:`attn.attention` and :func:`attn.blocked_attention` share.

    Returns an :class:`AttentionInputs`: float matrices Q (T_q, d_k), K (T_k, d_k),
    V (T_k, d_v); ``mask`` a bool (T_q, T_k) array or ``None`` (everything readable;
    no (T_q, T_k) array is built, so a blocked caller stays O(T) in memory);
    ``empty`` a bool (T_q,) vector of the queries that may read no key; τ as a
    float; the result dtype. Key/value rows that no query may read (NaN or inf
    included) are replaced by zeros (in a copy). Raises the errors documented in
    :func:`attn.attention`.
    """
    if empty_rows not in EMPTY_ROW_POLICIES:
        raise ValueError(f"empty_rows must be one of {EMPTY_ROW_POLICIES}; got {empty_rows!r}")
    tau = check_tau(tau)
    Q, K = check_qk(Q, K)
    V = as_float_array("V", V, ndim=2)
    if K.shape[0] != V.shape[0]:
        raise ValueError(
            f"K has shape {K.shape} and V has shape {V.shape}: every key needs one value, "
            f"so T_k must agree (got {K.shape[0]} and {V.shape[0]})"
        )
    T_q, T_k = Q.shape[0], K.shape[0]
    dtype = result_dtype(Q, K, V)
    check_finite("Q", Q)

    if mask is None:
        empty = np.zeros(T_q, dtype=bool)
        read_by_some = None  # every key is read by every query
    else:
        mask = check_mask(mask, (T_q, T_k))
        empty = ~mask.any(axis=1)  # (T_q,)
        read_by_some = mask.any(axis=0)  # (T_k,)
    if empty.any() and empty_rows == "raise":
        rows = np.flatnonzero(empty).tolist()
        raise ValueError(
            f"query row(s) {rows} may read no key: every entry of mask in those rows is False. "
            "Fix the mask, or pass empty_rows='zero' to give those queries a zero output."
        )

    # A key or value row that holds NaN/inf is harmless only if no query may read it.
    bad = ~(np.isfinite(K).all(axis=1) & np.isfinite(V).all(axis=1))  # (T_k,)
    if bad.any():
        read_bad = bad if read_by_some is None else bad & read_by_some
        if read_bad.any():
            j = int(np.flatnonzero(read_bad)[0])
            raise ValueError(
                f"key/value row {j} holds NaN or inf and is readable by some query: "
                f"K[{j}] = {K[j]}, V[{j}] = {V[j]}"
            )
    if read_by_some is not None and not read_by_some.all():
        # a key no query reads is ignored, whatever it holds: its score could overflow float64, and its value
        # could set the scale of the weighted sum
        K = np.where(read_by_some[:, None], K, 0)
        V = np.where(read_by_some[:, None], V, 0)
    return AttentionInputs(Q, K, V, mask, empty, tau, dtype)


def check_count(name: str, n) -> int:
    """Return ``n`` as an int >= 1 (a number of tokens, features, heads or a block size), or raise naming it."""
    n = as_whole_number(name, n)
    if n < 1:
        raise ValueError(f"{name} must be at least 1; got {n}")
    return n


def check_probabilities(name: str, w, axis: int = -1) -> np.ndarray:
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
