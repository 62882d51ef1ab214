"""The dtype policy of :mod:`attn`, declared once.

Policy
------
Floats narrower than float32 (float16, and bfloat16 or the float8 types of
``ml_dtypes`` when a caller brings them) are computed in float32, as fused
attention kernels do; float32 and float64 are computed in their own precision,
and the functions whose results are logarithms or cosines widen to float64 and
round once at the end. Every result comes back in the input's float dtype
(integers give float64); a result that this dtype cannot hold, or an
intermediate that overflows even float64, is refused with a ``ValueError``
naming the caller's argument, the position and the dtype, never returned as
inf or NaN.

A float32 computation whose scores overflow float32 is redone in float64 before
anything is refused (:func:`widening`), so a refusal means that float64 fails
too, or that the caller's dtype cannot hold the answer.
"""
from __future__ import annotations

import sys

import numpy as np

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def _ml_dtypes():
    """``ml_dtypes`` if the caller imported it (an array of its dtypes can exist only then), else None."""
    return sys.modules.get("ml_dtypes")


def is_float_dtype(dtype) -> bool:
    """True for NumPy's floating dtypes and for the float types of ``ml_dtypes`` (bfloat16, float8_*)."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return True
    ml = _ml_dtypes()
    if ml is None or dtype.kind != "V":
        return False
    try:
        ml.finfo(dtype)
    except Exception:
        return False
    return True


def finfo(dtype):
    """``numpy.finfo`` for NumPy floats, ``ml_dtypes.finfo`` for bfloat16 and the float8 types."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.finfo(dtype)
    return _ml_dtypes().finfo(dtype)


def is_narrow(dtype) -> bool:
    """True for a float dtype with a smaller range or precision than float32 (float16, bfloat16, float8)."""
    dtype = np.dtype(dtype)
    return dtype != F64 and (not np.issubdtype(dtype, np.floating) or dtype.itemsize < 4)


def working_dtype(dtype) -> np.dtype:
    """The dtype a computation on inputs of ``dtype`` runs in: float32 for narrow floats, else the dtype itself."""
    dtype = np.dtype(dtype)
    return F32 if is_narrow(dtype) else dtype


def wide_dtype(dtype) -> np.dtype:
    """float64, or the dtype itself if it is wider (long double): where log-domain results and cosines are computed."""
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.floating) and dtype.itemsize > 8 else F64


def result_dtype(*arrays) -> np.dtype:
    """The float dtype of a result computed from ``arrays`` (already float arrays)."""
    try:
        return np.result_type(*arrays)
    except TypeError:  # two unrelated narrow types (bfloat16 with float16): their common wider type
        return F32


def widening(work) -> tuple[np.dtype, ...]:
    """The dtypes to try in turn: ``work``, then float64 if ``work`` is narrower."""
    work = np.dtype(work)
    return (work,) if work.itemsize >= 8 else (work, F64)


def dtype_name(dtype) -> str:
    return np.dtype(dtype).name


def locate(bad: np.ndarray, labels=None) -> str:
    """Where the first True of ``bad`` is, in the caller's words ("query 0, key 2") or as an index."""
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    if not index:
        return "its only entry"
    if labels is None or len(labels) != len(index):
        return f"index {index}"
    return ", ".join(f"{label} {i}" for label, i in zip(labels, index))


class NotFinite(ArithmeticError):
    """Internal: a stage of a computation overflowed the dtype it ran in (caught by :func:`compute`)."""

    def __init__(self, what: str, where: str, dtype, hint: str = ""):
        super().__init__(what, where)
        self.what, self.where, self.dtype, self.hint = what, where, np.dtype(dtype), hint

    def error(self) -> ValueError:
        biggest = float(finfo(self.dtype).max)
        return ValueError(
            f"{self.what} overflows {dtype_name(self.dtype)} at {self.where}: the value is beyond "
            f"{dtype_name(self.dtype)}'s largest finite number, {biggest:.4g}, so it cannot be computed{self.hint}"
        )


def require_finite(arr: np.ndarray, what: str, labels=None, hint: str = "") -> np.ndarray:
    """Return ``arr`` if every entry is finite; else raise :class:`NotFinite` naming the first bad entry.

    The test is a maximum and a minimum (NaN propagates through both, ±inf is one of them), so no
    boolean array of ``arr``'s size is made unless there is something to name: ``arr`` is often
    the (T_q, T_k) score matrix, whose single copy is the memory Proposition 5 measures.
    """
    if arr.size and np.isfinite(np.max(arr)) and np.isfinite(np.min(arr)):
        return arr
    ok = np.isfinite(arr)
    if not ok.all():
        raise NotFinite(what, locate(~ok, labels), arr.dtype, hint)
    return arr


def compute(fn, work):
    """``fn(dtype)`` for each dtype of :func:`widening`, until one does not raise :class:`NotFinite`.

    Overflow and invalid-operation warnings are silenced inside ``fn``: every stage
    that can overflow checks its result with :func:`require_finite`, so an inf or
    NaN becomes a retry in float64, then a ``ValueError``, never a warning.
    """
    last = None
    for dt in widening(work):
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                return fn(dt)
        except NotFinite as exc:
            last = exc
    raise last.error() from None


def to_dtype(arr: np.ndarray, dtype, what: str, labels=None, hint: str = "") -> np.ndarray:
    """``arr`` cast to ``dtype``; a finite entry that ``dtype`` cannot hold raises ``ValueError`` naming it."""
    dtype = np.dtype(dtype)
    if arr.dtype == dtype:
        return arr
    with np.errstate(over="ignore", invalid="ignore"):
        out = arr.astype(dtype)
    bad = np.isfinite(arr) & ~np.isfinite(out)
    if bad.any():
        value = float(arr[tuple(np.argwhere(bad)[0])])
        raise ValueError(
            f"{what} overflows {dtype_name(dtype)} at {locate(bad, labels)}: the value {value:.6g} is beyond "
            f"{dtype_name(dtype)}'s largest finite number, {float(finfo(dtype).max):.6g}{hint}"
        )
    return out


def divide_by_tau(x: np.ndarray, tau: float) -> np.ndarray:
    """``x / tau`` in place, without ever casting τ to a dtype where it rounds to 0, to inf or to a subnormal.

    NumPy casts a Python float to the array's dtype, so ``x /= 1e-50`` on float32
    divides by 0. When τ is not a normal number of ``x``'s dtype the division is
    done in float64 and the quotients written back (an overflow becomes -inf, whose
    exponential is the exact weight 0; callers that return logarithms check for it).
    """
    if tau == 1.0:
        return x
    info = finfo(x.dtype)
    with np.errstate(over="ignore", under="ignore"):
        if float(info.tiny) <= tau <= float(info.max):
            x /= x.dtype.type(tau)
        else:
            x[...] = x.astype(F64) / tau
    return x


def subtract_and_divide(x: np.ndarray, shift: np.ndarray, tau: float) -> np.ndarray:
    """``(x - shift) / τ`` in place, ``shift`` (same dtype, broadcast against ``x``) at least every entry of ``x``.

    ``x - shift`` overflows when ``shift - x`` exceeds the dtype's largest number, which a
    positive shift of at least half the spacing of that number makes possible; with τ > 1 the
    quotient can still be moderate, so then both are divided by τ first, by the same operation,
    so that an entry equal to its shift still gives exactly 0 (never a positive exponent). Otherwise
    an overflow to -inf is kept: with τ ≤ 1 its exponential, 0, is the right weight.
    """
    info = finfo(x.dtype)
    with np.errstate(over="ignore"):  # a quotient still below the dtype's range: -inf, weight 0, right for τ ≤ 2
        if tau > 1 and np.any(shift >= info.max * info.eps / 4):  # about half the spacing of max, in x's dtype
            divide_by_tau(x, tau)
            x -= divide_by_tau(np.array(shift, dtype=x.dtype), tau)
        else:
            x -= shift
            divide_by_tau(x, tau)
    return x


def multiply_by(x: np.ndarray, factor: float) -> np.ndarray:
    """``x * factor`` in place, the factor never cast to a dtype where it rounds to 0, inf or a subnormal."""
    if factor == 1.0:
        return x
    info = finfo(x.dtype)
    with np.errstate(over="ignore", under="ignore"):
        if factor == 0 or float(info.tiny) <= abs(factor) <= float(info.max):
            x *= x.dtype.type(factor)
        else:
            x[...] = x.astype(F64) * factor
    return x
