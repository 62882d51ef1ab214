"""Items, parts, mistakes, and the ``check`` / ``hint`` / ``variant`` functions the learner calls.

See the package docstring (:mod:`attn.grading`) for how to declare an item.
"""
from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from . import answers as _answers
from . import run as _run
from .feedback import CORRECT, NOT_TRIED, NOT_YET, Feedback, Note, Report

KINDS = ("problem", "variant", "exercise")
PART_KINDS = ("number", "mask", "function")


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: ``answer(ns)`` computes it from the item's data, ``hint`` says what went wrong.

    For a ``"function"`` part, ``answer(ns)`` returns the *wrong function* (for
    example a softmax that does not subtract the maximum); it is run on the
    same test cases as the learner's.
    """

    key: str
    answer: Callable[[SimpleNamespace], Any]
    hint: str


@dataclass(frozen=True)
class Part:
    """One answer the learner gives. ``name`` is also the variable the learner assigns in the notebook.

    ``expected(ns)`` computes the right answer with :mod:`attn` from the item's
    data ``ns`` (which also holds the expected answers of the parts listed
    before this one, under their names). Tolerances: ``decimals=2`` accepts
    anything within 0.01 (rounded or not); otherwise ``atol``/``rtol``
    (default 1e-6 / 1e-5, which float32 answers meet).
    """

    name: str
    expected: Callable[[SimpleNamespace], Any]
    what: str = ""  # e.g. "the scores S, shape (T_q, T_k)"; used in messages
    decimals: int | None = None
    atol: float | None = None
    rtol: float | None = None
    kind: str = "number"  # "number", "mask" or "function"
    rows_sum_to_one: bool = False
    mistakes: Sequence[Mistake] = ()
    praise: str = ""  # one sentence added to "Correct."
    cases: Callable[[SimpleNamespace], list] | None = None  # function parts: list of argument tuples
    seconds: float = 2.0  # function parts: time limit per call

    def __post_init__(self):
        if self.kind not in PART_KINDS:
            raise ValueError(f"Part kind must be one of {PART_KINDS}; got {self.kind!r}")
        if self.kind == "function" and self.cases is None:
            raise ValueError(f"function part {self.name!r} needs cases")

    def tolerances(self) -> tuple[float, float]:
        if self.atol is not None or self.rtol is not None:
            return (self.atol or 0.0), (self.rtol or 0.0)
        if self.decimals is not None:
            return 10.0 ** -self.decimals + 1e-9, 0.0
        return 1e-6, 1e-5


@dataclass(frozen=True)
class Item:
    """A problem, variant or exercise: its data, its parts, its hints.

    ``data(rng)`` returns a dict of the given arrays; ``rng`` is ``None`` for a
    fixed problem and a ``numpy.random.Generator`` for a variant (``kind="variant"``).
    """

    id: str
    title: str
    page: str  # the book page, e.g. "exercises/b01-three-tokens"
    data: Callable[[Any], dict]
    parts: Sequence[Part]
    hints: Sequence[str] = ()
    kind: str = "problem"
    of: str | None = None  # a variant: the problem it varies
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Item kind must be one of {KINDS}; got {self.kind!r}")
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: duplicate part names {names}")

    @property
    def seeded(self) -> bool:
        return self.kind == "variant"

    @property
    def part_names(self) -> list[str]:
        return [p.name for p in self.parts]

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    def context(self, seed: int | None = None) -> SimpleNamespace:
        """The data and every expected answer, computed by attn (cached per seed)."""
        key = seed if self.seeded else None
        if key not in self._cache:
            rng = np.random.default_rng(seed) if self.seeded else None
            ns = SimpleNamespace(**self.data(rng))
            for p in self.parts:
                setattr(ns, p.name, p.expected(ns))
            self._cache[key] = ns
        return self._cache[key]

    def expected(self, seed: int | None = None) -> dict:
        ns = self.context(seed)
        return {p.name: getattr(ns, p.name) for p in self.parts}

    def judge(self, part: str, value, seed: int | None = None, given: dict | None = None) -> Feedback:
        """The verdict on one answer (no recording). Unknown parts raise KeyError: that is the caller's bug.

        ``given`` holds the learner's own answers to the item's other parts
        (``{"weights": [[...]], ...}``): a part computed from earlier parts is
        also judged against what follows from those (follow-through marking).
        A function ``value`` is run in this process on :meth:`cases` with
        :func:`attn.grading.run.call`, then judged by :meth:`judge_outcomes`.
        """
        p = self.part(part)
        ns = self.context(seed)
        if p.kind == "function":
            problem = _function_problem(self.id, p, value)
            if problem is not None:
                return problem
            outcomes = (_run.call(value, *copy.deepcopy(args), seconds=p.seconds) for args in self.cases(part, seed))
            return self.judge_outcomes(part, outcomes, seed)
        return _judge_value(self.id, p, ns, value)

    def cases(self, part: str, seed: int | None = None) -> list[tuple]:
        """The argument tuples the function part ``part`` is tested on (fresh copies of plain arrays and numbers)."""
        p = self.part(part)
        if p.kind != "function":
            raise ValueError(f"{self.id} part {part!r} is not a function part")
        return [tuple(copy.deepcopy(tuple(args))) for args in p.cases(self.context(seed))]

    def judge_outcomes(self, part: str, outcomes, seed: int | None = None) -> Feedback:
        """Judge a function part from outcomes computed elsewhere: one :class:`attn.grading.run.Outcome`
        per case, in :meth:`cases` order (an iterable; judging stops at the first failing case)."""
        p = self.part(part)
        if p.kind != "function":
            raise ValueError(f"{self.id} part {part!r} is not a function part")
        return _judge_outcomes(self.id, p, self.context(seed), self.cases(part, seed), outcomes)


# ----------------------------------------------------------------------------- judging

def _fb(item: str, part: Part, status: str, message: str, key: str | None = None) -> Feedback:
    return Feedback(item, part.name, status, message, key)


def _diagnose(arr: np.ndarray, expected: np.ndarray, part: Part) -> tuple[str, str]:
    """(key, message) for a wrong answer of the right shape that no known mistake matches."""
    atol, rtol = part.tolerances()
    a = arr.reshape(expected.shape)
    if part.decimals is not None:
        for d in range(part.decimals):
            if _answers.close(a, np.round(expected, d), 0.5 * 10.0 ** -part.decimals, 0.0):
                return "rounding", (
                    f"Close, but rounded to {d} decimal{'s' if d != 1 else ''}: "
                    f"give {part.decimals} decimals (or leave the value unrounded)."
                )
    if part.rows_sum_to_one and a.ndim == 2:
        slack = 0.02 if part.decimals is not None else 1e-4
        rows, cols = a.sum(axis=1), a.sum(axis=0)
        if not np.allclose(rows, 1, atol=slack):
            if np.allclose(cols, 1, atol=slack):
                return "columns", (
                    "Your columns sum to 1, but each row should: the softmax normalises along each row "
                    "(one query's weights over all the keys), not down each column."
                )
            i = int(np.argmax(np.abs(rows - 1)))
            return "rows_sum", (
                f"Row {i} of your answer sums to {rows[i]:.3g}, not 1. Each row holds one query's weights "
                "over all the keys, and a softmax row always sums to 1."
            )
        if (a < -slack).any():
            return "negative", "A weight is negative; softmax weights are never below 0."
    if _answers.close(-a, expected, atol, rtol) and np.abs(expected).max() > atol:
        return "sign", "Every entry has the wrong sign. Look for a minus sign that crept in."
    if a.ndim == 2 and a.shape[0] == a.shape[1] and _answers.close(a.T, expected, atol, rtol):
        return "transposed", (
            "Your answer is the transpose of the right one: rows are queries and columns are keys."
        )
    nz = np.abs(expected) > 1e-9
    if nz.any() and (np.abs(a[~nz]) <= atol).all() and a.size > 1:
        ratio = a[nz] / expected[nz]
        if np.allclose(ratio, ratio.flat[0], rtol=1e-3) and not np.isclose(ratio.flat[0], 1.0, rtol=1e-3):
            return "factor", (
                "Every entry is off by the same factor: look at the scaling (a division missing, doubled, or "
                "by the wrong number)."
            )
    off = ~np.isclose(a, expected, atol=atol, rtol=rtol)
    if expected.ndim == 0:
        tol = f" (answers within {atol:.2g} count as right)" if part.decimals is not None else ""
        return "value", f"That is not the value yet{tol}. Check the arithmetic, or ask for a hint."
    first = [int(i) for i in np.argwhere(off)[0]]
    return "value", (
        f"{int(off.sum())} of {off.size} {'entry is' if off.sum() == 1 else 'entries are'} not right yet "
        f"(the first at index {first}). "
        "Check the arithmetic there, or ask for a hint."
    )


def _shape_message(arr: np.ndarray, expected: np.ndarray, part: Part) -> str:
    want = part.what or "this answer"
    msg = f"Your answer has shape {arr.shape}, but {want} has shape {expected.shape}."
    if arr.ndim == expected.ndim == 2 and arr.shape == expected.shape[::-1]:
        msg += " That is the transposed shape: the answer has one row per query."
    elif arr.size == expected.size and arr.shape != expected.shape:
        msg += " The right number of entries in the wrong arrangement: check the nesting of your brackets."
    return msg


def _compare(item_id: str, part: Part, ns, arr: np.ndarray, expected, wrongs: list[tuple[Mistake, Any]]):
    """Feedback for an answer already read as an array (NaN allowed only to match a known mistake)."""
    atol, rtol = part.tolerances()
    expected = np.asarray(expected)
    finite = arr.dtype == bool or bool(np.isfinite(arr).all())
    if finite and _answers.close(arr, expected, atol, rtol):
        return _fb(item_id, part, CORRECT, ("Well done. " + part.praise).strip())
    for m, wrong in wrongs:
        wrong = np.asarray(wrong)
        if _answers.close(wrong, expected, atol, rtol, equal_nan=True):
            continue  # for these numbers the mistake cannot be told apart from the right answer
        if _answers.close(arr, wrong, atol, rtol, equal_nan=True):
            return _fb(item_id, part, NOT_YET, m.hint, m.key)
    if not finite:
        _, prob = _answers.read(arr, part.kind)
        return _fb(item_id, part, NOT_YET, prob.message, prob.key)
    if not _answers.same_shape(arr, expected):
        return _fb(item_id, part, NOT_YET, _shape_message(arr, expected, part), "shape")
    if part.kind == "mask":
        a = arr.reshape(expected.shape)
        off = np.argwhere(a != expected)
        return _fb(item_id, part, NOT_YET,
                   f"{len(off)} of {a.size} {'entry is' if len(off) == 1 else 'entries are'} not right yet "
                   f"(the first at index {[int(i) for i in off[0]]}). "
                   "True means: this query may read this key.", "value")
    key, msg = _diagnose(arr, expected, part)
    return _fb(item_id, part, NOT_YET, msg, key)


def _judge_value(item_id: str, part: Part, ns, value) -> Feedback:
    arr, prob = _answers.read(value, part.kind)
    if prob is not None:
        status = NOT_TRIED if prob.key == "not_tried" else NOT_YET
        return _fb(item_id, part, status, prob.message, None if status == NOT_TRIED else prob.key)
    return _compare(item_id, part, ns, arr, getattr(ns, part.name), _wrongs(part, ns))


def _wrongs(part: Part, ns, *args) -> list[tuple[Mistake, Any]]:
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


def _describe_args(args) -> str:
    bits = []
    for a in args:
        a_ = np.asarray(a) if not callable(a) else None
        if a_ is not None and a_.dtype != object and a_.ndim:
            bits.append(f"an array of shape {a_.shape}")
        else:
            bits.append(repr(a) if len(repr(a)) < 30 else type(a).__name__)
    return ", ".join(bits)


def _function_problem(item_id: str, part: Part, fn) -> Feedback | None:
    """Feedback when ``fn`` is not a function to run (a stub, or not callable); None otherwise."""
    if fn is Ellipsis or _run.is_stub(fn):
        return _fb(item_id, part, NOT_TRIED, "The function is still `...`: write it, run its cell, then check again.")
    if not callable(fn):
        return _fb(item_id, part, NOT_YET, f"This part asks for a function, but `{part.name}` is "
                   f"{_answers._describe(fn)}. Define it with `def {part.name}(...):`.", "type")
    return None


def _judge_outcomes(item_id: str, part: Part, ns, cases: list[tuple], outcomes) -> Feedback:
    reference = getattr(ns, part.name)
    n = 0
    warned: list[tuple[int, str]] = []
    for n, (args, out) in enumerate(zip(cases, outcomes), 1):
        where = f"On test {n} of {len(cases)} ({_describe_args(args)}): "
        said = _warned(getattr(out, "warnings", ()))
        if out.timed_out:
            return _fb(item_id, part, NOT_YET, where + f"your function did not return within {part.seconds:g} s. "
                       "Is there a loop that never ends?", "timeout")
        if out.error is not None:
            return _fb(item_id, part, NOT_YET, where + out.error + said, "raised")
        if out.value is None:
            return _fb(item_id, part, NOT_YET, where + "your function returned None. Does it `print` its result "
                       "instead of `return`ing it, or is a `return` missing?" + said, "none")
        try:
            arr = np.asarray(out.value)
            numeric = arr.dtype != object and np.issubdtype(arr.dtype, np.number)
        except Exception:
            numeric = False
        if not numeric:
            arr, prob = _answers.read(out.value, part.kind)
            if prob is not None:
                return _fb(item_id, part, NOT_YET, where + "it returned something unexpected. " + prob.message + said,
                           prob.key)
        else:
            arr = arr.astype(np.float64)
        with np.errstate(all="ignore"):
            right = reference(*copy.deepcopy(args))
        fb = _compare(item_id, part, ns, arr, right, _wrongs(part, ns, *args))
        if not fb.correct:
            return _fb(item_id, part, NOT_YET, where + fb.message + said, fb.mistake)
        if said:
            warned.append((n, "; ".join(out.warnings)))
    if n < len(cases):
        return _fb(item_id, part, NOT_YET, f"Only {n} of {len(cases)} test outcomes arrived.", "incomplete")
    extra = (f" On test {warned[0][0]}, though, NumPy warned: {warned[0][1]} (a sign of a step that could "
             "overflow or divide by zero)." if warned else "")
    return _fb(item_id, part, CORRECT, (f"Well done: all {len(cases)} tests pass. " + part.praise).strip() + extra)


def _warned(found) -> str:
    """A sentence naming the NumPy warnings the learner's function raised on one test ('' if none)."""
    if not found:
        return ""
    return f" While it ran, NumPy warned: {'; '.join(found)}."


# ----------------------------------------------------------------------------- registry and learner API

REGISTRY: dict[str, Item] = {}
_hints_shown: dict[str, int] = {}


def register(item: Item) -> Item:
    """Add an item to the registry (ids are unique); returns it, so it can be used as ``B01 = register(Item(...))``."""
    if item.id in REGISTRY:
        raise ValueError(f"an item with id {item.id!r} is already registered")
    REGISTRY[item.id] = item
    return item


def items() -> list[Item]:
    """Every registered item: problems, then variants, then exercises, each in id order."""
    return sorted(REGISTRY.values(), key=lambda it: (KINDS.index(it.kind), it.id))


def get_item(item_id: str) -> Item:
    key = str(item_id).upper().removeprefix("II.3.")
    if key not in REGISTRY:
        raise KeyError(item_id)
    return REGISTRY[key]


def _strict() -> bool:
    return os.environ.get("ATTN_GRADING_STRICT", "") not in ("", "0")


def _unknown_item(item_id) -> Note:
    known = ", ".join(it.id for it in items())
    return Note("Unknown item", f"There is no item {item_id!r}. The items are: {known}.")


def _check(item_id, names, answers, seed, namespace) -> Feedback | Report | Note:
    try:
        item = get_item(item_id)
    except KeyError:
        return _unknown_item(item_id)
    if item.seeded and seed is None:
        return Note(f"{item.id} needs a seed", f"A variant is drawn from a seed: check({item.id!r}, ..., seed=7), "
                    f"or use v = variant({item.id!r}, 7) and v.check(...).")
    unknown = [n for n in list(names) + list(answers) if n not in item.part_names]
    if unknown:
        return Note(f"{item.id} has no part {unknown[0]!r}", f"Its parts are: {', '.join(item.part_names)}.")
    if not names and not answers:
        names = item.part_names
    given = dict(answers)
    results = []
    for n in item.part_names:
        if n in given:
            fb = item.judge(n, given[n], seed)
        elif n in names:
            if n in namespace:
                fb = item.judge(n, namespace[n], seed)
            else:
                fb = Feedback(item.id, n, NOT_TRIED, f"There is no variable `{n}` yet: run the cell with "
                              f"`{n} = ...` (your answer) first, then check again.")
        else:
            continue
        results.append(fb)
    from . import progress_file as _progress

    _progress.record(results)
    return results[0] if len(results) == 1 else Report(results)


def check(item_id: str | None = None, *names: str, seed: int | None = None, **answers) -> Feedback | Report | Note:
    """Check answers to an item and return kind, specific feedback (never raises on a wrong or junk answer).

    ``check("B01", "scores")`` checks the variable ``scores`` of your notebook;
    ``check("B01")`` checks every part; ``check("B01", scores=S)`` checks the value S.
    Variants take their seed: ``check("V01", "weights", seed=7)``.
    """
    if item_id is None:
        return Note("Which item?", "Name the item and, if you like, the part: check('B01', 'scores') checks your "
                    "variable scores for problem II.3.B01; check('B01') checks every part.")
    namespace = sys._getframe(1).f_globals
    try:
        return _check(item_id, names, answers, seed, namespace)
    except Exception as exc:  # the checker's own bug must not look like the learner's
        if _strict():
            raise
        return Note("The checker hit a problem of its own",
                    f"{type(exc).__name__}: {exc}. This is not your mistake; please report it.")


def hint(item_id: str | None = None, n: int | None = None) -> Note:
    """The next hint for an item (one more each call), or hint ``n`` (1-based) again."""
    if item_id is None:
        return Note("Which item?", "Name the item: hint('B01') gives the next hint for problem II.3.B01.")
    try:
        item = get_item(item_id)
    except KeyError:
        return _unknown_item(item_id)
    hints = list(item.hints) or ["There are no hints for this item."]
    if n is None:
        shown = _hints_shown.get(item.id, 0)
        if shown >= len(hints):
            return Note(f"{item.id}: no more hints",
                        f"You have seen all {len(hints)}. hint({item.id!r}, 1) shows the first again; "
                        "the worked solution is folded at the end of the item's page in the book.")
        n = shown + 1
        _hints_shown[item.id] = n
    if not (isinstance(n, int) and 1 <= n <= len(hints)):
        return Note(f"{item.id}: no hint {n!r}", f"Hints are numbered 1 to {len(hints)}.")
    return Note(f"{item.id} hint {n} of {len(hints)}", hints[n - 1])


class Variant:
    """One drawn variant: ``v = variant("V01", 7)``; ``v.Q`` etc. are its data; ``v.check("weights")``; ``v.hint()``."""

    def __init__(self, item: Item, seed: int):
        self.item, self.seed = item, seed
        ns = item.context(seed)
        self._data = {k: v for k, v in vars(ns).items() if k not in item.part_names}
        for k, v in self._data.items():
            setattr(self, k, v)

    def check(self, *names: str, **answers):
        namespace = sys._getframe(1).f_globals
        try:
            return _check(self.item.id, names, answers, self.seed, namespace)
        except Exception as exc:
            if _strict():
                raise
            return Note("The checker hit a problem of its own", f"{type(exc).__name__}: {exc}. Please report it.")

    def hint(self, n: int | None = None) -> Note:
        return hint(self.item.id, n)

    def _givens(self) -> list[tuple[str, str]]:
        out = []
        for k, v in self._data.items():
            if isinstance(v, np.ndarray):
                out.append((k, np.array2string(v, separator=", ", precision=4, suppress_small=True)))
            elif isinstance(v, (int, float, np.number)):
                out.append((k, f"{v:g}"))
            elif isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
                out.append((k, repr(list(v))))
        return out

    def __str__(self) -> str:
        lines = [f"{self.item.id} (seed {self.seed}): {self.item.title}"]
        for k, s in self._givens():
            body = s.replace("\n", "\n" + " " * (len(k) + 3))
            lines.append(f"{k} = {body}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return "<pre>" + html.escape(str(self)) + "</pre>"


def variant(item_id: str, seed: int = 0) -> Variant | Note:
    """Draw variant ``item_id`` from ``seed`` (any integer ≥ 0): same seed, same numbers."""
    try:
        item = get_item(item_id)
    except KeyError:
        return _unknown_item(item_id)
    if not item.seeded:
        return Note(f"{item.id} is not a variant", "Variants are " + ", ".join(i.id for i in items() if i.seeded) + ".")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        return Note("A seed is a whole number ≥ 0", f"Got {seed!r}; try variant({item.id!r}, 7).")
    return Variant(item, int(seed))
