"""What the learner calls: ``check``, ``hint``, ``variant`` (and :class:`Variant`), ``progress``.

``check`` never raises on a wrong or junk answer, and whatever it returns is
truthy only for a correct verdict: a :class:`Note` (a misuse, an unknown item,
the checker's own problem) is always falsy.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .feedback import NOT_TRIED, Feedback, Note, Report
from .items import Item, full_id, get_item, items

_hints_shown: dict[str, int] = {}

# Called as ``listen(item_id, seed, judged, namespace)`` by every check with the answers it judges, before judging
# them: the values given (``check("B01", scores=S)``: ``{"scores": S}``) and the variables read for the parts
# named (``check("B01", "scores")``: ``{"scores": scores}``). The teachers' grader listens here inside
# the learner's kernel to hand those answers over as data (runner/kernel_side.py); a listener never sees a verdict.
# A listener that returns a Note takes the verdict's place: check returns that note and judges nothing (in the
# grader's kernel no check may be an oracle).
answer_listeners: list = []


def _strict() -> bool:
    return os.environ.get("ATTN_GRADING_STRICT", "") not in ("", "0")


def _unknown_item(item_id) -> Note:
    known = ", ".join(it.id for it in items())
    return Note("Unknown item", f"There is no item {item_id!r}. The items are: {known}.")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_part_name(item: Item, x) -> bool:
    return isinstance(x, str) and x in item.part_names


def _read_positional(item: Item, names) -> tuple[list[str], dict, Note | None]:
    """Split ``check``'s positional arguments into part names and ``{part: value}`` (a value follows its part)."""
    wanted: list[str] = []
    answers: dict = {}
    names = list(names)
    i = 0
    while i < len(names):
        x = names[i]
        if _is_part_name(item, x):
            nxt = names[i + 1] if i + 1 < len(names) else None
            if i + 1 < len(names) and not _is_part_name(item, nxt) and not (
                    isinstance(nxt, str) and nxt.isidentifier()):
                answers[x] = nxt  # check("B01", "scores", S): the value after a part's name is its answer
                i += 2
                continue
            wanted.append(x)
            i += 1
            continue
        if isinstance(x, str):
            return [], {}, Note(f"{item.id} has no part {x!r}", f"Its parts are: {', '.join(item.part_names)}.")
        if len(item.parts) == 1 and not wanted and not answers and len(names) == 1:
            answers[item.part_names[0]] = x  # check("E01", softmax): the one part
            i += 1
            continue
        return [], {}, Note(f"Which part of {item.id} is {_short(x)}?",
                            f"Name the part before its value: check({item.id!r}, {item.part_names[0]!r}, your_value), "
                            f"or check({item.id!r}, {item.part_names[0]}=your_value). "
                            f"Its parts are: {', '.join(item.part_names)}.")
    return wanted, answers, None


def _valid_seed(seed) -> bool:
    return not isinstance(seed, bool) and isinstance(seed, (int, np.integer)) and seed >= 0


def _check(item_id, names, answers, seed, namespace) -> Feedback | Report | Note:
    try:
        item = get_item(item_id)
    except (KeyError, TypeError):
        return _unknown_item(item_id)
    if item.seeded and seed is None:
        return Note(f"{item.id} needs a seed", f"A variant is drawn from a seed: check({item.id!r}, ..., seed=7), "
                    f"or use v = variant({item.id!r}, 7) and v.check(...).")
    if item.seeded and not _valid_seed(seed):
        return Note("A seed is a whole number ≥ 0", f"Got seed={seed!r}; try check({item.id!r}, ..., seed=7).")
    if item.seeded:
        seed = int(seed)
    names, positional, note = _read_positional(item, names)
    if note is not None:
        return note
    unknown = [n for n in answers if n not in item.part_names]
    if unknown:
        return Note(f"{item.id} has no part {unknown[0]!r}", f"Its parts are: {', '.join(item.part_names)}.")
    given = {**positional, **answers}
    if not names and not given:
        names = item.part_names
    # what this check judges, part by part: the values given, and the variables it reads for the parts named
    judged = {**{n: namespace[n] for n in names if n in namespace and n in item.part_names}, **given}
    replies = []
    for listen in list(answer_listeners):
        try:
            replies.append(listen(item.id, seed, judged, namespace))
        except Exception:  # noqa: BLE001 - a listener's problem is never the learner's
            pass
    reply = next((r for r in replies if isinstance(r, Note)), None)
    if reply is not None:  # a listener that keeps the answers instead (the teachers' grader): no verdict here
        return reply
    # the learner's own answers to every part, for follow-through marking
    own = {n: namespace[n] for n in item.part_names if n in namespace and namespace[n] is not Ellipsis}
    own.update(given)
    results = []
    for n in item.part_names:
        if n in given:
            fb = item.judge(n, given[n], seed, own)
        elif n in names:
            if n in namespace:
                fb = item.judge(n, namespace[n], seed, own)
            else:
                fb = Feedback(item.id, n, NOT_TRIED, f"There is no variable `{n}` yet: run the cell with "
                              f"`{n} = ...` (your answer) first, then check again.")
        else:
            continue
        results.append(fb)
    from . import progress_file as _progress

    _progress.record(results)
    return results[0] if len(results) == 1 else Report(results)


def _guarded(item_id, names, answers, seed, namespace):
    try:
        return _check(item_id, names, answers, seed, namespace)
    except Exception as exc:  # the checker's own bug must not look like the learner's
        if _strict():
            raise
        return Note("The checker hit a problem of its own",
                    f"{type(exc).__name__}: {exc}. This is not your mistake; please report it.")


def check(item_id: str | None = None, *names, seed: int | None = None, **answers) -> Feedback | Report | Note:
    """Check answers to an item and return kind, specific feedback (never raises on a wrong or junk answer).

    ``check("B01", "scores")`` checks the variable ``scores`` of your notebook;
    ``check("B01")`` checks every part; ``check("B01", "scores", S)`` or
    ``check("B01", scores=S)`` checks the value S.
    Variants take their seed: ``check("V01", "weights", seed=7)``.
    The result is truthy only when every part checked is correct.
    """
    if item_id is None:
        return Note("Which item?", "Name the item and, if you like, the part: check('B01', 'scores') checks your "
                    f"variable scores for problem {full_id('B01')}; check('B01') checks every part.")
    return _guarded(item_id, names, answers, seed, sys._getframe(1).f_globals)


def hint(item_id: str | None = None, n: int | None = None) -> Note:
    """The next hint for an item (one more each call), or hint ``n`` (1-based) again."""
    if item_id is None:
        return Note("Which item?", f"Name the item: hint('B01') gives the next hint for problem {full_id('B01')}.")
    try:
        item = get_item(item_id)
    except (KeyError, TypeError):
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
    if isinstance(n, bool) or not (isinstance(n, (int, np.integer)) and 1 <= n <= len(hints)):
        return Note(f"{item.id}: no hint {n!r}", f"Hints are numbered 1 to {len(hints)}.")
    return Note(f"{item.id} hint {n} of {len(hints)}", hints[int(n) - 1])


class Variant:
    """One drawn variant: ``v = variant("V01", 7)``; ``v.Q`` etc. are its data; ``v.check("weights")``; ``v.hint()``."""

    def __init__(self, item: Item, seed: int):
        # the item's id and title only: a Variant holds no Item (whose methods compute the expected answers), so
        # nothing reached from the learner's variable (a deepcopy's memo, its attributes) leads to them
        self.item_id, self.title, self.seed = item.id, item.title, seed
        ns = item.context(seed)
        self._data = {k: v for k, v in vars(ns).items() if k not in item.part_names}
        for k, v in self._data.items():
            setattr(self, k, v)

    def check(self, *names, seed=None, **answers):
        """Check answers to this variant, as :func:`check` does (its seed is this variant's)."""
        if seed is not None and not (_valid_seed(seed) and int(seed) == self.seed):
            return Note(f"This variant is seed {self.seed}",
                        f"v.check(...) checks the numbers drawn from seed {self.seed}. For seed {seed!r}, draw them "
                        f"first: v = variant({self.item_id!r}, {seed!r}), then v.check(...).")
        return _guarded(self.item_id, names, answers, self.seed, sys._getframe(1).f_globals)

    def hint(self, n: int | None = None) -> Note:
        return hint(self.item_id, n)

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
        lines = [f"{self.item_id} (seed {self.seed}): {self.title}"]
        for k, s in self._givens():
            body = s.replace("\n", "\n" + " " * (len(k) + 3))
            lines.append(f"{k} = {body}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return '<pre class="attn-variant">' + html.escape(str(self)) + "</pre>"


def variant(item_id: str, seed: int = 0) -> Variant | Note:
    """Draw variant ``item_id`` from ``seed`` (any integer ≥ 0): same seed, same numbers."""
    try:
        item = get_item(item_id)
    except (KeyError, TypeError):
        return _unknown_item(item_id)
    if not item.seeded:
        return Note(f"{item.id} is not a variant", "Variants are " + ", ".join(i.id for i in items() if i.seeded) + ".")
    if not _valid_seed(seed):
        return Note("A seed is a whole number ≥ 0", f"Got {seed!r}; try variant({item.id!r}, 7).")
    return Variant(item, int(seed))


def progress(folder=None):
    """A table of every item (not tried / not yet / correct) from the saved progress file.

    ``folder`` defaults to the file being recorded to, else the working directory; ``progress("B01")``
    shows the whole table (B01 is in it).
    """
    from pathlib import Path

    from . import progress_file as _store

    if folder is not None and not isinstance(folder, (str, os.PathLike)):
        return _store.not_a_folder("progress", folder)
    if folder is not None and not Path(folder).is_dir():
        try:
            get_item(folder)
            folder = None  # progress("B01"): the learner wants the table, which lists B01 among the rest
        except (KeyError, TypeError):
            pass
    return _store.table(items(), folder)


__all__ = ["Variant", "check", "hint", "progress", "variant"]
