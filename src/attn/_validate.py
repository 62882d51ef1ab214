"""Input checks shared by the attention functions.

Every check raises ``ValueError`` (or ``TypeError`` for a non-numeric
argument) with a message that names the argument, the problem and the
offending value or shapes, so that a reader never meets a NaN or a
traceback from deep inside NumPy instead.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np


def as_float_array(name: str, x, ndim: int | None = None) -> np.ndarray:
    """Return ``x`` as a floating-point array, or raise a clear error.

    Integer and boolean-free real input is promoted to float64; float16,
    float32 and float64 keep their dtype.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be a numeric array; could not read it as one ({exc})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        want = {1: "a vector", 2: "a matrix (rows are tokens)"}.get(ndim, f"{ndim}-dimensional")
        raise ValueError(f"{name} must be {want}, with {ndim} dimension(s); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); attention needs at least one token and one feature")
    if not np.issubdtype(arr.dtype, np.floating):
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


def check_finite(name: str, arr: np.ndarray) -> None:
    """Raise if ``arr`` holds NaN or ±inf, naming the first bad entry."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite; {name}{list(where)} = {arr[where]!r}")


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
