"""Items, parts and mistakes (the model), and the registry of every item.

Judging lives in :mod:`attn.grading.judge`; the functions the learner calls
(``check``, ``hint``, ``variant``) in :mod:`attn.grading.learner_api`, and are
re-exported here so ``from attn.grading.items import check`` keeps working.
See the package docstring (:mod:`attn.grading`) for how to declare an item.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from . import answers as _answers
from . import judge as _judge
from . import run as _run
from .feedback import Feedback

KINDS = ("problem", "variant", "exercise")
CHAPTER = "II.3"  # the chapter's number: item B01's full name is "II.3.B01"


def full_id(item_id: str) -> str:
    """An item's name in the chapter's numbering: ``"B01"`` -> ``"II.3.B01"``."""
    return f"{CHAPTER}.{short_id(item_id)}"


def short_id(item_id) -> str:
    """An item's key in the registry: ``"II.3.b01"`` or ``"b01"`` -> ``"B01"`` (no check that it exists)."""
    return str(item_id).upper().removeprefix(f"{CHAPTER}.")
PART_KINDS = ("number", "mask", "function")


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: ``answer(ns)`` computes it from the item's data, ``hint`` says what went wrong.

    For a ``"function"`` part, ``answer(ns)`` returns the *wrong function* (for
    example a softmax that does not subtract the maximum); it is run on the
    same test cases as the learner's.

    ``atol`` (a value part only): the mistake is recognised only within this absolute distance of its wrong
    answer, instead of the part's tolerance. Give it when the wrong answer lies close to the right one (E08's
    closed-form slip is 0.04 from the right τ, the part allows 0.023): with the part's tolerance, a near-right
    answer reached by an honest but inaccurate route would be told it made this mistake.
    """

    key: str
    answer: Callable[[SimpleNamespace], Any]
    hint: str
    atol: float | None = None


@dataclass(frozen=True)
class Part:
    """One answer the learner gives. ``name`` is also the variable the learner assigns in the notebook.

    ``expected(ns)`` computes the right answer with :mod:`attn` from the item's
    data ``ns`` (which also holds the expected answers of the parts listed
    before this one, under their names). Tolerances: ``decimals=2`` accepts
    anything within 0.01 (rounded or not); otherwise ``atol``/``rtol``
    (default 1e-6 / 1e-5, which float32 answers meet).

    Follow-through: ``uses`` names the earlier parts this one is computed from
    and ``step(ns, **{name: value})`` computes it from them. The tolerance then
    grows by the rounding of those parts carried through ``step``, and an
    answer that follows from the learner's own earlier answers is recognised.
    ``axes`` names what the rows and columns of a 2-D answer are, for the
    transposed-answer message. ``choices`` (> 0) makes the part a multiple
    choice: an answer that is not one of 1 … ``choices`` is told so.
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
    uses: tuple = ()  # earlier parts this one is computed from
    step: Callable[..., Any] | None = None  # step(ns, **{used part: value}) -> this part
    axes: tuple = ()  # (what the rows are, what the columns are), e.g. ("queries", "keys")
    choices: int = 0  # a multiple-choice part: the number of choices (the answer is one of 1 … choices)
    routes: Callable[..., list] | None = None  # routes(ns, **{used part: value}) -> honest by-hand values

    # ``routes`` gives the values an honest by-hand route reaches with rounded intermediate steps that the
    # carried tolerance does not cover (a softmax with its exponentials rounded to 2 decimals): each is accepted
    # within the part's own tolerance, and so is what the later parts compute from it (:meth:`Item.honest`).

    def __post_init__(self):
        if self.kind not in PART_KINDS:
            raise ValueError(f"Part kind must be one of {PART_KINDS}; got {self.kind!r}")
        if self.kind == "function" and self.cases is None:
            raise ValueError(f"function part {self.name!r} needs cases")
        if bool(self.uses) != (self.step is not None):
            raise ValueError(f"part {self.name!r}: give both uses and step, or neither")

    def tolerances(self) -> tuple[float, float]:
        """The part's own tolerances (atol, rtol), before any propagation from earlier parts."""
        if self.atol is not None or self.rtol is not None:
            return (self.atol or 0.0), (self.rtol or 0.0)
        if self.decimals is not None:
            return 10.0 ** -self.decimals + 1e-9, 0.0
        return 1e-6, 1e-5

    def rounding_error(self, value) -> Any:
        """The largest error of this part's answer given as the page asks (half a unit in the last decimal)."""
        if self.kind != "number":
            return 0.0
        if self.decimals is not None:
            return 0.5 * 10.0 ** -self.decimals
        atol, rtol = self.tolerances()
        return atol + rtol * np.abs(np.asarray(value, dtype=np.float64))


@dataclass(frozen=True)
class Item:
    """A problem, variant or exercise: its data, its parts, its hints.

    ``data(rng)`` returns a dict of the given arrays; ``rng`` is ``None`` for a
    fixed problem and a ``numpy.random.Generator`` for a variant (``kind="variant"``),
    ``default_rng(seed)``, or ``default_rng([seed, *stream])`` for a variant with a ``stream`` of its own.
    Rows, columns and entries are counted in messages as the page counts them:
    from 1 for problems and variants, from 0 for exercises (``counts_from``).
    """

    id: str
    title: str
    page: str  # the book page, e.g. "exercises/b01-three-tokens"
    data: Callable[[Any], dict]
    parts: Sequence[Part]
    hints: Sequence[str] = ()
    kind: str = "problem"
    of: str | None = None  # a variant: the problem it varies
    # a variant's own random stream: its numbers come from default_rng([seed, *stream]) (default_rng(seed) when
    # empty), so that two variants given the same seed do not draw the same integers
    stream: tuple[int, ...] = ()
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Item kind must be one of {KINDS}; got {self.kind!r}")
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: duplicate part names {names}")
        for i, p in enumerate(self.parts):
            if not set(p.uses) <= set(names[:i]):
                raise ValueError(f"{self.id}: part {p.name!r} uses parts that do not come before it: {p.uses}")

    @property
    def full_id(self) -> str:
        """The item's name in the chapter's numbering, e.g. ``"II.3.B01"``."""
        return full_id(self.id)

    @property
    def seeded(self) -> bool:
        return self.kind == "variant"

    @property
    def counts_from(self) -> int:
        return 0 if self.kind == "exercise" else 1

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
            rng = (np.random.default_rng([seed, *self.stream] if self.stream else seed)) if self.seeded else None
            ns = SimpleNamespace(**self.data(rng))
            for p in self.parts:
                setattr(ns, p.name, p.expected(ns))
            self._cache[key] = ns
        return self._cache[key]

    def expected(self, seed: int | None = None) -> dict:
        ns = self.context(seed)
        return {p.name: getattr(ns, p.name) for p in self.parts}

    # ------------------------------------------------------------------ tolerances carried through the steps
    def rounding_error(self, part: str, seed: int | None = None):
        """The largest error of ``part`` on the by-hand route: every part rounded as the page asks, each
        computed from the rounded parts before it (to first order; per entry)."""
        key = ("err", part, seed if self.seeded else None)
        if key not in self._cache:
            p = self.part(part)
            ns = self.context(seed)
            self._cache[key] = p.rounding_error(getattr(ns, part)) + self._carried(p, seed)
        return self._cache[key]

    def _carried(self, p: Part, seed):
        """Σ over the used parts' entries of |∂ step / ∂ entry| × that entry's rounding error (central differences)."""
        if not p.uses:
            return 0.0
        ns = self.context(seed)
        exact = {u: np.asarray(getattr(ns, u)) for u in p.uses}
        with np.errstate(all="ignore"):
            total = np.zeros(np.shape(p.step(ns, **exact)))
        for u in p.uses:
            if self.part(u).kind != "number":
                continue
            x = exact[u].astype(np.float64)
            err = np.broadcast_to(self.rounding_error(u, seed), x.shape).ravel()
            total = total + np.tensordot(err, np.abs(_jacobian(p.step, ns, exact, u, x)), axes=1)
        return total

    def honest(self, part: str, seed: int | None = None) -> list[np.ndarray]:
        """The values honest by-hand routes reach for ``part``: the used parts' honest values, exact or rounded to
        their decimals or one more, carried through ``step`` and the part's ``routes`` (empty for a part with
        neither). Each is accepted within the part's own tolerance."""
        key = ("honest", part, seed if self.seeded else None)
        if key not in self._cache:
            p = self.part(part)
            ns = self.context(seed)
            out: list[np.ndarray] = []
            if p.kind == "number" and p.decimals is not None:
                if not p.uses:
                    out = [np.asarray(v, dtype=np.float64) for v in (p.routes(ns) if p.routes else [])]
                else:
                    options = []
                    for u in p.uses:
                        q = self.part(u)
                        base = [np.asarray(getattr(ns, u))] + self.honest(u, seed)
                        if q.kind == "number" and q.decimals is not None:
                            base = [np.round(np.asarray(b, dtype=np.float64), d) if d is not None else b
                                    for b in base for d in (None, q.decimals, q.decimals + 1)]
                        options.append(base)
                    for combo in itertools.product(*options):
                        used = dict(zip(p.uses, combo))
                        with np.errstate(all="ignore"):
                            try:
                                vals = [p.step(ns, **used)] + (list(p.routes(ns, **used)) if p.routes else [])
                            except Exception:
                                continue
                        out += [np.asarray(v, dtype=np.float64) for v in vals]
                out = _distinct([v for v in out if np.isfinite(v).all()])
            self._cache[key] = out
        return self._cache[key]

    def tolerance(self, part: str, seed: int | None = None) -> tuple[Any, float]:
        """``(atol, rtol)`` for ``part``: its own, plus the earlier parts' rounding carried through (atol per entry)."""
        key = ("tol", part, seed if self.seeded else None)
        if key not in self._cache:
            p = self.part(part)
            atol, rtol = p.tolerances()
            carried = self._carried(p, seed) if p.kind == "number" else 0.0
            self._cache[key] = (atol + carried if np.any(carried) else atol, rtol)
        return self._cache[key]

    # ------------------------------------------------------------------ judging
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
            problem = _judge.function_problem(self.id, p, value)
            if problem is not None:
                return problem
            outcomes = (_run.call(value, *args, seconds=p.seconds) for args in self.cases(part, seed))
            return self.judge_outcomes(part, outcomes, seed)
        atol, rtol = self.tolerance(part, seed)
        key = ("wrongs", part, seed if self.seeded else None)
        if key not in self._cache:
            self._cache[key] = _judge.wrongs(p, ns)
        return _judge.judge_value(self.id, p, ns, value, atol, rtol, self.counts_from,
                                  self._follow(p, seed, given), self._cache[key],
                                  seed=seed if self.seeded else None, honest=self.honest(part, seed))

    def _follow(self, p: Part, seed, given):
        """``(value following from the learner's earlier answers, those of them not correct)``, or None."""
        if not given or not p.uses or any(u not in given for u in p.uses):
            return None
        values = {}
        for u in p.uses:
            arr, prob = _answers.read(given[u], self.part(u).kind)
            if prob is not None:
                return None
            values[u] = arr.reshape(np.shape(getattr(self.context(seed), u))) if arr.size == np.size(
                getattr(self.context(seed), u)) else arr
        try:
            with np.errstate(all="ignore"):
                follows = [np.asarray(v, dtype=np.float64) for v in [p.step(self.context(seed), **values)]
                           + (list(p.routes(self.context(seed), **values)) if p.routes else [])]
        except Exception:
            return None
        follows = [v for v in follows if np.isfinite(v).all()]
        if not follows:
            return None
        others = {k: v for k, v in given.items() if k != p.name}
        not_correct = [u for u in p.uses if not self.judge(u, given[u], seed, others).correct]
        return follows, not_correct

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
        return _judge.judge_outcomes(self.id, p, self.context(seed), self.cases(part, seed), outcomes,
                                     self.counts_from)


def _distinct(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The arrays with exact repeats left out (routes often agree)."""
    seen, out = set(), []
    for a in arrays:
        k = (a.shape, np.round(a, 12).tobytes())
        if k not in seen:
            seen.add(k)
            out.append(a)
    return out


def _jacobian(step, ns, exact: dict, u: str, x: np.ndarray) -> np.ndarray:
    """∂ step / ∂ x by central differences, shape (x.size, *out.shape); all entries in one batched call when
    ``step`` broadcasts over a leading axis (softmax along the last axis, ``@``, division), else one by one."""
    h = 1e-6 * np.maximum(1.0, np.abs(x)).ravel()  # (n,)
    eye = np.eye(x.size) * h[:, None]  # (n, n): one perturbation per row
    up = x.ravel()[None, :] + eye
    down = x.ravel()[None, :] - eye
    with np.errstate(all="ignore"):
        out_shape = np.shape(step(ns, **exact))
        try:
            hi = np.asarray(step(ns, **{**exact, u: up.reshape((x.size,) + x.shape)}), dtype=np.float64)
            lo = np.asarray(step(ns, **{**exact, u: down.reshape((x.size,) + x.shape)}), dtype=np.float64)
            if hi.shape != (x.size,) + out_shape:
                raise ValueError("step does not broadcast")
        except Exception:
            hi = np.stack([np.asarray(step(ns, **{**exact, u: r.reshape(x.shape)}), dtype=np.float64) for r in up])
            lo = np.stack([np.asarray(step(ns, **{**exact, u: r.reshape(x.shape)}), dtype=np.float64) for r in down])
    d = (hi - lo) / (2 * h.reshape((-1,) + (1,) * len(out_shape)))
    return np.nan_to_num(d)


# ----------------------------------------------------------------------------- registry

REGISTRY: dict[str, Item] = {}


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
    key = short_id(item_id)
    if key not in REGISTRY:
        raise KeyError(item_id)
    return REGISTRY[key]


from .learner_api import Variant, _hints_shown, check, hint, variant  # noqa: E402  (re-exported)

__all__ = ["CHAPTER", "Item", "Mistake", "Part", "REGISTRY", "full_id", "short_id", "Variant", "check", "get_item", "hint", "items", "register",
           "variant", "_hints_shown"]
