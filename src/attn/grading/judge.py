"""Judging one answer: read it, compare it with the right answer, name the mistake or describe what is seen.

Order of judgement for a value part (:func:`judge_value`):

1. read the answer (junk → a kind message; :mod:`attn.grading.answers`);
2. equal to the right answer within the part's tolerance → correct. The
   tolerance of a part computed from earlier parts is *propagated*: the
   precision the page asks for (half a unit in the last decimal asked for) is
   carried through the computation (:meth:`Item.tolerance`), so the by-hand
   route with rounded intermediates passes. Also correct: within the part's own
   tolerance of a value an honest rounded route reaches (:meth:`Item.honest`).
   When the learner's earlier answers are given and one of them is wrong, the
   carried tolerance alone does not make the answer correct;
3. follow-through: when the learner's own earlier answers are known
   (``given``), an answer that follows from them (by ``step`` or an honest
   route) is correct if they are, and otherwise told to fix them first;
4. equal to one or more known mistakes → their hints (both, when two
   mistakes give the same array);
5. a wrong shape → both shapes named;
6. generic diagnoses that fire only when they are the one explanation
   (a transpose, the wrong sign, a constant factor, rounding, an integer
   that wrapped around), else a description of what is observed (which rows do
   not sum to 1, how many entries are off and where the first one is).

A function part is run on its cases (:func:`judge_outcomes` takes the
outcomes, however they were computed), each outcome judged like a value.
"""
from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np

from . import answers as _answers
from .feedback import CORRECT, NOT_TRIED, NOT_YET, Feedback


def _fb(item: str, part, status: str, message: str, key: str | None = None) -> Feedback:
    return Feedback(item, part.name, status, message, key)


def where(index, ndim: int, counts_from: int) -> str:
    """An entry's place as the page counts: "row 2, column 1" (2-D), "entry 3" (1-D)."""
    idx = [int(i) + counts_from for i in index]
    if ndim == 2:
        return f"row {idx[0]}, column {idx[1]}"
    if ndim == 1:
        return f"entry {idx[0]}"
    return "index [" + ", ".join(str(i) for i in idx) + "]"


def _entries(n: int, size: int) -> str:
    return f"{n} of {size} entries {'is' if n == 1 else 'are'}"


def _transposed(part) -> str:
    if part.axes:
        return (f"Your answer is the transpose of the right one: its rows should be the {part.axes[0]} and its "
                f"columns the {part.axes[1]}.")
    return "Your answer is the transpose of the right one: swap its rows and columns."


def _wrapped(value, expected: np.ndarray) -> str | None:
    """A message when ``value`` is a NumPy integer that overflowed (wrapped around) on the way to ``expected``."""
    arr = np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else None
    if arr is None or not np.issubdtype(arr.dtype, np.integer) or arr.shape != np.shape(expected):
        return None
    info = np.iinfo(arr.dtype)
    if np.all(np.abs(expected) <= info.max):
        return None
    span = float(info.max) - float(info.min) + 1
    diff = (np.asarray(expected, dtype=np.float64) - arr.astype(np.float64)) / span
    if np.allclose(diff, np.round(diff), atol=1e-6) and np.any(np.round(diff) != 0):
        return (f"Your number wrapped around: NumPy's {arr.dtype} holds at most {info.max:,}, and the answer is "
                "larger, so the count overflowed (without an error). Compute with Python integers "
                "(int(T) * int(T) * ...) or with floats.")
    return None


def _row_is(part) -> str:
    """What one row of a weight matrix is, as the part names its rows: "one query", "one temperature"."""
    return f"one {_singular(part.axes[0])}" if part.axes else "one query"


def _diagnose(a: np.ndarray, expected: np.ndarray, part, atol, rtol, counts_from: int) -> tuple[str, str]:
    """(key, message) for a wrong answer of the right shape that no known mistake matches."""
    t = float(np.max(atol))
    if part.choices and expected.ndim == 0:
        v = float(a.reshape(()))
        if not (v == round(v) and 1 <= v <= part.choices):
            return "not_a_choice", (f"Give the number of one of the {part.choices} choices: a whole number from 1 "
                                    f"to {part.choices}.")
        return "value", "That is not the right choice yet. Read the choices again, or ask for a hint."
    if part.decimals is not None:
        for d in range(part.decimals):
            rounded = np.round(expected, d)
            if d == 0 and np.any(np.abs(rounded - expected) > 0.1 * np.abs(expected)):
                continue  # whole numbers that far from the answer (1 for 0.64) are a different answer, not rounding
            if _answers.close(a, rounded, 0.5 * 10.0 ** -part.decimals, 0.0):
                return "rounding", (
                    f"Close, but rounded to {d} decimal{'s' if d != 1 else ''}: "
                    f"give {part.decimals} decimals (or leave the value unrounded)."
                )
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 1 and not _answers.close(expected.T, expected, atol, rtol) \
            and _answers.close(a.T, expected, atol, rtol):
        return "transposed", _transposed(part)
    if np.abs(expected).max() > t and _answers.close(-a, expected, atol, rtol):
        return "sign", ("Your answer has the wrong sign." if expected.ndim == 0 else
                        "Every entry has the wrong sign.") + " Look for a minus sign that crept in."
    if not np.any(a) and np.any(np.abs(expected) > t):
        return "zeros", ("Your answer is 0, and the right answer is not." if expected.ndim == 0 else
                         "Every entry of your answer is 0, and the right answer is not all zeros.")
    if part.rows_sum_to_one and a.ndim == 2:
        slack = 0.02 if part.decimals is not None else 1e-4
        rows, cols = a.sum(axis=1), a.sum(axis=0)
        if not np.allclose(rows, 1, atol=slack):
            bad = [int(i) for i in np.flatnonzero(~np.isclose(rows, 1, atol=slack))]
            if np.allclose(cols, 1, atol=slack):
                return "columns", (
                    "Your columns each sum to 1, but your rows do not. Each row holds one query's weights over all "
                    "the keys, so each row should sum to 1: a softmax along each row."
                )
            whole_slack = (0.5 * 10.0 ** -part.decimals * a.size if part.decimals is not None else 0.0) + 1e-4
            if len(rows) > 1 and len(bad) == len(rows) and abs(a.sum() - 1) <= whole_slack:
                return "whole", (
                    "All your entries together sum to 1, but no row does: you normalised once over the whole "
                    f"matrix. Each row ({_row_is(part)}) is a softmax of its own: divide by each row's sum."
                )
            i = bad[0]
            first = f"row {i + counts_from} sums to {rows[i]:.3g}"
            which = (f"Row {i + counts_from} of your answer sums to {rows[i]:.3g}, not 1." if len(bad) == 1 else
                     f"None of your {len(rows)} rows sums to 1 ({first})." if len(bad) == len(rows) else
                     f"{len(bad)} of your {len(rows)} rows do not sum to 1 ({first}).")
            return "rows_sum", (
                f"{which} Each row ({_row_is(part)}) is a softmax over the keys, and a softmax always sums to 1."
            )
        if (a < -slack).any():
            return "negative", "A weight is negative; softmax weights are never below 0."
    nz = np.abs(expected) > 1e-9
    if nz.any() and a.size > 1 and (np.abs(a[~nz]) <= t).all():
        ratio = a[nz] / expected[nz]
        r = ratio.flat[0]
        if np.allclose(ratio, r, rtol=1e-3) and abs(r) > 1e-3 and not np.isclose(r, 1.0, rtol=1e-3) \
                and not np.isclose(r, -1.0, rtol=1e-3):
            return "factor", (
                "Every entry is off by the same factor: look at the scaling (a division missing, doubled, or "
                "by the wrong number)."
            )
    off = ~np.isclose(a, expected, atol=atol, rtol=rtol)
    if expected.ndim == 0:
        tol = f" (answers within {t:.2g} count as right)" if part.decimals is not None else ""
        return "value", f"That is not the value yet{tol}. Check the arithmetic, or ask for a hint."
    first = np.argwhere(off)[0]
    own = part.tolerances()[0]
    if part.rows_sum_to_one and part.decimals is not None and np.max(np.abs(a - expected)) <= 2 * own:
        return "close", (
            f"Close: {_entries(int(off.sum()), off.size)} just outside {own:.2g} of the right value (the first: "
            f"{where(first, a.ndim, counts_from)}). Redo that row carrying more digits (three decimals in the "
            "exponentials and their sum), then round the weights."
        )
    return "value", (
        f"{_entries(int(off.sum()), off.size)} not right yet (the first: {where(first, a.ndim, counts_from)}). "
        "Check the arithmetic there, or ask for a hint."
    )


def nonfinite(arr: np.ndarray, part, counts_from: int) -> tuple[str, str]:
    """(key, message) for an answer holding NaN or ±∞: its first place as the page counts, and advice that fits.

    The exp-overflow advice is given only where a softmax is computed (weights, a function part); −∞ is named
    as a masked score; a plain number that is infinite is only told that every answer here is finite.
    """
    arr = np.asarray(arr, dtype=np.float64)
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0]) if arr.ndim else ()
    at = f" at {where(idx, arr.ndim, counts_from)}" if arr.ndim else ""
    x = arr[idx]
    softmaxed = part.rows_sum_to_one or part.kind == "function"
    if np.isnan(x):
        cause = ("NaN usually comes from 0/0 or inf/inf, for example exp() overflowing to inf before you divide."
                 if softmaxed else "NaN comes from an undefined step such as 0/0, inf/inf or inf − inf: look at the "
                 "step that made it.")
        return "nan", f"The answer holds NaN{at}. {cause}"
    if x < 0:
        if softmaxed:
            return "inf", (f"The answer holds −∞{at}. −∞ is what a masked score is set to, not a weight: the softmax "
                           "turns it into exp(−∞) = 0.")
        return "inf", f"The answer holds −∞{at}; every answer here is a finite number."
    if softmaxed:
        return "inf", (f"The answer holds an infinity{at}. exp() of a large number overflows to inf: subtract the "
                       "row maximum before exponentiating.")
    return "inf", f"The answer holds an infinity{at}; every answer here is a finite number."


def _shape_name(shape) -> str:
    return "a single number" if shape == () else f"shape {shape}"


def _singular(axis: str) -> str:
    word = axis.split()[0]
    return word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") else word


def _shape_message(arr: np.ndarray, expected: np.ndarray, part) -> str:
    want = part.what or "this answer"
    if expected.ndim == 0:
        want = re.sub(r",\s*a number$", "", want)
        return (f"This part asks for a single number, {want}; your answer holds {arr.size} numbers "
                f"(shape {arr.shape}).")
    if arr.ndim == 0:
        return f"Your answer is a single number, but {want} has shape {expected.shape}."
    msg = f"Your answer has {_shape_name(arr.shape)}, but {want} has {_shape_name(expected.shape)}."
    if arr.ndim == expected.ndim == 2 and arr.shape == expected.shape[::-1]:
        msg += " That is the transposed shape"
        msg += f": the answer has one row per {_singular(part.axes[0])}." if part.axes else "."
    elif arr.size == expected.size and arr.shape != expected.shape:
        msg += (" The right number of entries in the wrong arrangement: a reshape or a transpose is missing, or "
                "they come in the wrong order." if part.kind == "function" else
                " The right number of entries in the wrong arrangement: check the nesting of your brackets.")
    return msg


def row_sum_slack(part, n: int) -> float:
    """How far from 1 a row of ``n`` weights given to ``part.decimals`` decimals can sum by rounding alone.

    Rounding each of the n entries moves the sum by at most n half-units of the last decimal; one more
    half-unit allows for a row sum of exponentials rounded to that many decimals before dividing (the sum is
    at least 1 in every item here, the largest exponential being exp(max score) with a max score ≥ 0).
    Rounding to more decimals than asked moves it less, so every honest route is inside this bound.
    """
    return (n + 1) * 0.5 * 10.0 ** -part.decimals + 1e-9


def _row_sums_off(arr: np.ndarray, expected: np.ndarray, part, counts_from: int) -> str | None:
    """A message when a weight matrix given to ``part.decimals`` decimals has a row whose sum is further from 1
    than rounding explains (None otherwise, and for parts that are not rows of weights)."""
    if not part.rows_sum_to_one or part.decimals is None or arr.dtype == bool or arr.shape != expected.shape \
            or arr.ndim != 2:
        return None
    n = arr.shape[1]
    slack = row_sum_slack(part, n)
    sums = arr.astype(np.float64).sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > slack)
    if not bad.size:
        return None
    i = int(bad[0])
    first = f"row {i + counts_from} sums to {sums[i]:.3f}"
    which = (f"Row {i + counts_from} of your weights sums to {sums[i]:.3f}" if bad.size == 1 else
             f"None of your {len(sums)} rows sums to 1 ({first})" if bad.size == len(sums) else
             f"{bad.size} of your {len(sums)} rows do not sum to 1 ({first})")
    half = 0.5 * 10.0 ** -part.decimals
    return (f"Close, entry by entry, but not yet right. {which}. Each row ({_row_is(part)}) is a softmax and "
            f"sums to 1; rounding its {n} entries to {part.decimals} decimals moves the sum by at most "
            f"{n} × {half:g} = {n * half:.{part.decimals + 1}f}, so more than rounding is off. If you cut the "
            f"digits off (truncated), round to the nearest instead; otherwise redo that row with more digits in "
            f"the exponentials, and check that its entries add up to 1.")


def _matching_mistakes(arr, expected, wrongs, atol, rtol):
    """The known mistakes the answer equals (skipping those that coincide with the right answer here)."""
    found = []
    for m, wrong in wrongs:
        wrong = np.asarray(wrong)
        if _answers.close(wrong, expected, atol, rtol, equal_nan=True):
            continue  # for these numbers the mistake cannot be told apart from the right answer
        tol = atol if np.shape(wrong) == np.shape(expected) else float(np.max(atol))  # per-entry atol fits expected
        tol, m_rtol = (tol, rtol) if m.atol is None else (m.atol, 0.0)  # a mistake near the answer: its own band
        if _answers.close(arr, wrong, tol, m_rtol, equal_nan=True) and all(m.key != f.key for f in found):
            found.append(m)
    return found


def _mistake_feedback(item_id, part, found) -> Feedback:
    if len(found) == 1:
        return _fb(item_id, part, NOT_YET, found[0].hint, found[0].key)
    body = " Or: ".join(m.hint for m in found)
    count = "Two different mistakes" if len(found) == 2 else f"{len(found)} different mistakes"
    return _fb(item_id, part, NOT_YET, f"{count} give exactly this answer here; either: {body}",
               "|".join(m.key for m in found))


def compare(item_id: str, part, arr: np.ndarray, expected, wrongs, atol, rtol, counts_from: int = 1,
            follow=None, raw=None, seed: int | None = None, honest=()) -> Feedback:
    """Feedback for an answer already read as an array (NaN allowed only to match a known mistake).

    ``follow`` is ``(values, names_not_correct)`` for follow-through marking, or None: ``values`` is what
    follows from the learner's own earlier answers (one array, or a list of them along honest routes).
    ``raw`` is the answer as given (to recognise an integer overflow).
    ``seed`` is a variant's seed, so that the ``check(...)`` call a message suggests works as typed.
    ``honest`` lists the values honest by-hand routes reach (:meth:`Item.honest`), each accepted within the
    part's own tolerance.

    When the learner's earlier answers are given and one of them is not correct, the tolerance carried
    through from them does not make this part correct: it is correct only within its own tolerance of the
    right answer or of an honest route, and otherwise judged by what follows from those wrong answers.
    """
    expected = np.asarray(expected)
    base_atol, base_rtol = part.tolerances()
    finite = arr.dtype == bool or bool(np.isfinite(arr).all())
    row_sums = _row_sums_off(arr, expected, part, counts_from) if finite else None
    on_route = finite and (_answers.close(arr, expected, base_atol, base_rtol)
                           or any(_answers.close(arr, h, base_atol, base_rtol) for h in honest))
    earlier_wrong = follow is not None and bool(follow[1])
    if finite and (on_route or (not earlier_wrong and _answers.close(arr, expected, atol, rtol))):
        if row_sums is not None:
            return _fb(item_id, part, NOT_YET, row_sums, "rows_sum_rounding")
        return _fb(item_id, part, CORRECT, ("Well done. " + part.praise).strip())
    if finite and follow is not None:
        follows, not_correct = follow
        follows = follows if isinstance(follows, list) else [follows]
        if any(_answers.close(arr, f, base_atol, base_rtol) for f in follows):
            if row_sums is not None:
                return _fb(item_id, part, NOT_YET, row_sums, "rows_sum_rounding")
            names = " and ".join(f"`{n}`" for n in (not_correct or part.uses))
            if not not_correct:
                return _fb(item_id, part, CORRECT, (f"Correct, given your {names}: this follows from them. "
                                                    + part.praise).strip())
            first = not_correct[0]
            call = f"check({item_id!r}, {first!r}" + (f", seed={seed})" if seed is not None else ")")
            return _fb(item_id, part, NOT_YET,
                       f"This follows correctly from your {names}, but `{first}` is not right yet: fix it first "
                       f"(`{call}` says what is wrong), then compute this part again from it.",
                       "follows_from_wrong")
    found = _matching_mistakes(arr, expected, wrongs, atol, rtol)
    if found:
        return _mistake_feedback(item_id, part, found)
    if not finite:
        key, msg = nonfinite(arr, part, counts_from)
        return _fb(item_id, part, NOT_YET, msg, key)
    if not _answers.same_shape(arr, expected):
        return _fb(item_id, part, NOT_YET, _shape_message(arr, expected, part), "shape")
    a = arr.reshape(expected.shape)
    if part.kind == "mask":
        off = np.argwhere(a != expected)
        if a.ndim == 2 and a.shape[0] == a.shape[1] and np.array_equal(a.T, expected):
            return _fb(item_id, part, NOT_YET, _transposed(part), "transposed")
        return _fb(item_id, part, NOT_YET,
                   f"{_entries(len(off), a.size)} not right yet (the first: {where(off[0], a.ndim, counts_from)}). "
                   "True means: this query may read this key.", "value")
    if raw is not None:
        msg = _wrapped(raw, expected)
        if msg:
            return _fb(item_id, part, NOT_YET, msg, "int_overflow")
    key, msg = _diagnose(a, expected, part, atol, rtol, counts_from)
    return _fb(item_id, part, NOT_YET, msg, key)


def judge_value(item_id: str, part, ns, value, atol, rtol, counts_from: int = 1, follow=None,
                known=None, seed: int | None = None, honest=()) -> Feedback:
    """``known``: the mistakes' wrong answers (:func:`wrongs`), if already computed; ``seed``: a variant's seed;
    ``honest``: the values honest by-hand routes reach (see :func:`compare`)."""
    arr, prob = _answers.read(value, part.kind)
    if prob is not None and prob.key in ("nan", "inf"):
        try:
            key, msg = nonfinite(np.asarray(value, dtype=np.float64), part, counts_from)
        except (TypeError, ValueError):
            key, msg = prob.key, prob.message
        return _fb(item_id, part, NOT_YET, msg, key)
    if prob is not None:
        status = NOT_TRIED if prob.key == "not_tried" else NOT_YET
        return _fb(item_id, part, status, prob.message, None if status == NOT_TRIED else prob.key)
    known = wrongs(part, ns) if known is None else known
    expected = np.asarray(getattr(ns, part.name))
    if expected.ndim == 1 and arr.ndim > 1 and arr.size == expected.size and max(arr.shape) == arr.size:
        arr = arr.reshape(expected.shape)  # a list of n numbers given as one row or one column: the same list
    return compare(item_id, part, arr, expected, known, atol, rtol, counts_from, follow, raw=value,
                   seed=seed, honest=honest)


def wrongs(part, ns, *args) -> list[tuple[Any, Any]]:
    """Each mistake's wrong answer; a mistake that cannot be computed for this data (it raises) is left out."""
    out = []
    for m in part.mistakes:
        try:
            with np.errstate(all="ignore"):
                w = m.answer(ns)(*copy.deepcopy(args)) if part.kind == "function" else m.answer(ns)
            out.append((m, np.asarray(w)))
        except Exception:
            continue
    return out


def describe_args(args) -> str:
    bits = []
    for a in args:
        a_ = np.asarray(a) if not callable(a) else None
        if a_ is not None and a_.dtype == bool and a_.ndim:
            bits.append(f"a mask of shape {a_.shape}")
        elif a_ is not None and a_.dtype != object and a_.ndim:
            bits.append(f"an array of shape {a_.shape}")
        else:
            bits.append(repr(a) if len(repr(a)) < 30 else type(a).__name__)
    return ", ".join(bits)


def function_problem(item_id: str, part, fn) -> Feedback | None:
    """Feedback when ``fn`` is not a function to run (a stub, or not callable); None otherwise."""
    from . import run as _run

    if fn is Ellipsis or _run.is_stub(fn):
        return _fb(item_id, part, NOT_TRIED, "The function is still `...`: write it, run its cell, then check again.")
    if not callable(fn):
        return _fb(item_id, part, NOT_YET, f"This part asks for a function, but `{part.name}` is "
                   f"{_answers._describe(fn)}. Define it with `def {part.name}(...):`.", "type")
    return None


def _warned(found) -> str:
    """A sentence naming the NumPy warnings the learner's function raised on one test ('' if none)."""
    return f" While it ran, NumPy warned: {'; '.join(found)}." if found else ""


def judge_outcomes(item_id: str, part, ns, cases: list[tuple], outcomes, counts_from: int = 0) -> Feedback:
    """Judge a function part from one outcome per case (judging stops at the first failing case)."""
    reference = getattr(ns, part.name)
    atol, rtol = part.tolerances()
    n = 0
    warned: list[tuple[int, str]] = []
    for n, (args, out) in enumerate(zip(cases, outcomes), 1):
        at = f"On test {n} of {len(cases)} ({describe_args(args)}): "
        said = _warned(getattr(out, "warnings", ()))
        if out.timed_out:
            return _fb(item_id, part, NOT_YET, at + f"your function did not return within {part.seconds:g} s. "
                       "Is there a loop that never ends?", "timeout")
        if out.error is not None:
            return _fb(item_id, part, NOT_YET, at + out.error + said, "raised")
        if out.value is None:
            return _fb(item_id, part, NOT_YET, at + "your function returned None. Does it `print` its result "
                       "instead of `return`ing it, or is a `return` missing?" + said, "none")
        try:
            arr = np.asarray(out.value)
            numeric = arr.dtype != object and np.issubdtype(arr.dtype, np.number)
        except Exception:
            numeric = False
        if not numeric:
            arr, prob = _answers.read(out.value, part.kind)
            if prob is not None:
                return _fb(item_id, part, NOT_YET, at + "it returned something unexpected. " + prob.message + said,
                           prob.key)
        else:
            arr = arr.astype(np.float64)
        with np.errstate(all="ignore"):
            right = reference(*copy.deepcopy(args))
        fb = compare(item_id, part, arr, right, wrongs(part, ns, *args), atol, rtol, counts_from)
        if not fb.correct and fb.mistake == "value" and getattr(out.value, "dtype", None) == np.float16 \
                and _answers.close(arr, np.asarray(right, dtype=np.float64), 2e-3, 2e-3):
            return _fb(item_id, part, NOT_YET, at + "your function returns float16 numbers, which keep only about 3 "
                       "significant digits: right to that precision, but not to the checker's. Compute and return "
                       "in float64 (or in the dtype of the input)." + said, "float16")
        if not fb.correct:
            return _fb(item_id, part, NOT_YET, at + fb.message + said, fb.mistake)
        if said:
            warned.append((n, "; ".join(out.warnings)))
    if n < len(cases):
        return _fb(item_id, part, NOT_YET, f"Only {n} of {len(cases)} test outcomes arrived.", "incomplete")
    extra = (f" On test {warned[0][0]}, though, NumPy warned: {warned[0][1]} (a sign of a step that could "
             "overflow or divide by zero)." if warned else "")
    return _fb(item_id, part, CORRECT, (f"Well done: all {len(cases)} tests pass. " + part.praise).strip() + extra)
