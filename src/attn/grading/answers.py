"""Reading a learner's answer and comparing it with the right one: never raises on junk.

``read(value, kind)`` turns whatever the learner typed into a float (or bool)
NumPy array, or into a ``Problem`` (a mistake key and a kind message).
``close(a, b, ...)`` compares two arrays of the *same shape only*: no
broadcasting can make a (3,) answer pass for a (3, 3) one.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Problem(NamedTuple):
    key: str  # "not_tried", "none", "text", "ragged", "tuple", "type", "nan", "partial", ...
    message: str


def _describe(value) -> str:
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return {"str": "text", "NoneType": "None", "function": "a function", "dict": "a dictionary"}.get(
        name, f"{article} {name}")


def _shape_of(v) -> str:
    return f"an array of shape {v.shape}" if isinstance(v, np.ndarray) else _describe(v)


def _has_ellipsis(value, depth: int = 0) -> bool:
    if value is Ellipsis:
        return True
    if depth < 4 and isinstance(value, (list, tuple)):
        return any(_has_ellipsis(v, depth + 1) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return any(v is Ellipsis for v in value.flat)
    return False


def read(value, kind: str = "number"):
    """Return ``(array, None)`` or ``(None, Problem)``.

    ``kind`` is ``"number"`` (a float array, scalars included) or ``"mask"``
    (a boolean array; 0/1 integers are accepted as False/True).
    """
    if value is Ellipsis:
        return None, Problem("not_tried", "The answer is still `...`: replace it with your answer and run the cell again.")
    if value is None:
        return None, Problem(
            "none",
            "The answer is None. Did you assign the result of a function that prints instead of returning, "
            "or forget to write the value after `=`?",
        )
    if isinstance(value, (str, bytes)):
        example = "0.25, not '0.25'"
        try:
            if isinstance(value, str) and np.isfinite(float(value)) and len(value.strip()) <= 20:
                example = f"{value.strip()}, not {value!r}"  # the learner's own number, without the quotes
        except ValueError:
            pass
        return None, Problem(
            "text", f"The answer is text ({value!r:.40}). Enter numbers, not a string: for example {example}."
        )
    if callable(value):
        return None, Problem("type", "The answer is a function. Call it and give its result.")
    if isinstance(value, (dict, set)):
        return None, Problem("type", f"The answer is {_describe(value)}. Enter a number, a list of numbers or a NumPy array.")
    if _has_ellipsis(value):
        return None, Problem("partial", "Some entries are still `...`. Fill in every entry, then run the cell again.")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        if isinstance(value, tuple) and any(np.ndim(v) >= 1 for v in value if isinstance(v, np.ndarray)):
            parts = ", ".join(_shape_of(v) for v in value[:4]) + (", ..." if len(value) > 4 else "")
            return None, Problem(
                "tuple", f"The answer is a tuple of {len(value)} values ({parts}), not one array: `return a, b` "
                "(or `x = a, b`) makes a tuple. Give only the array this part asks for.")
        return None, Problem(
            "ragged", "The rows of the answer have different lengths. Every row needs the same number of entries."
        )
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except OverflowError:
            return None, Problem("too_large", "The answer holds a whole number too large for a float (beyond about "
                                 "1.8e308). Check the formula: the answers here are far smaller.")
        except (ValueError, TypeError):
            return None, Problem(
                "type", "The answer holds something that is not a number (text, None or a nested list?). "
                "Every entry must be a number."
            )
    if kind == "mask":
        if arr.dtype == bool:
            return arr, None
        if np.issubdtype(arr.dtype, np.number) and np.isin(arr, (0, 1)).all():
            return arr.astype(bool), None
        return None, Problem("type", "A mask holds True (may read) or False (may not read) in every entry.")
    if arr.dtype.kind in "US":
        return None, Problem("text", "The answer holds text. Enter numbers, not strings: 0.25, not '0.25'.")
    if np.iscomplexobj(arr):
        return None, Problem("type", "The answer holds complex numbers; every entry here is a real number.")
    if arr.dtype == bool:
        return None, Problem("type", "The answer holds True/False values; this part asks for numbers.")
    if not np.issubdtype(arr.dtype, np.number):
        return None, Problem("type", f"The answer has dtype {arr.dtype}; enter numbers.")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if arr.ndim else ()
        at = f" at index {list(where)}" if where else ""
        if np.isnan(arr[where]):
            return None, Problem("nan", f"The answer holds NaN{at}. NaN usually comes from 0/0 or inf/inf, "
                                 "for example exp() overflowing to inf before you divide.")
        return None, Problem("inf", f"The answer holds an infinity{at}. exp() of a large number overflows to inf: "
                             "subtract the row maximum before exponentiating.")
    return arr, None


def same_shape(answer: np.ndarray, expected: np.ndarray) -> bool:
    """Shapes agree; a scalar answer may be given as any size-1 array."""
    if expected.ndim == 0:
        return answer.size == 1
    return answer.shape == expected.shape


def close(answer: np.ndarray, expected, atol: float, rtol: float, equal_nan: bool = False) -> bool:
    """Same shape (no broadcasting) and equal within the tolerances."""
    expected = np.asarray(expected)
    if not same_shape(answer, expected):
        return False
    a = answer.reshape(expected.shape)
    if expected.dtype == bool or a.dtype == bool:
        return bool(np.array_equal(a.astype(bool), expected.astype(bool)))
    try:
        return bool(np.allclose(a, expected.astype(np.float64), atol=atol, rtol=rtol, equal_nan=equal_nan))
    except (TypeError, ValueError):
        return False
