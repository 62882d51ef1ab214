"""How the grading tests walk the items: the by-hand route a learner takes, and every seed of a variant.

Shared by tests/grading/test_follow_through.py, test_grading.py, test_learner_copies_run.py and the
feedback-review tests (pencil_weights)."""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from attn.grading import get_item


def by_hand(it, seed=None) -> dict:
    """The by-hand route: each part rounded to the decimals the page asks for, the next computed from those."""
    ns = it.context(seed)
    out = {}
    for p in it.parts:
        if p.kind == "function":
            continue
        if p.uses:
            with np.errstate(all="ignore"):
                value = np.asarray(p.step(ns, **{u: out[u] for u in p.uses}), dtype=float)
        else:
            value = np.asarray(getattr(ns, p.name))
        if p.decimals is not None:
            value = np.round(value, p.decimals)
        out[p.name] = value
    return out


def pencil_weights(X, shift: bool, exp_decimals: int, sum_decimals: int | None):
    """Weights by hand from rows of logits X: optionally each row's maximum subtracted first (B02's hint), the
    exponentials rounded to ``exp_decimals``, their row sum to ``sum_decimals`` (None: unrounded), then divided.
    A logit of -inf (a masked score) gives an exponential of exactly 0."""
    X = np.asarray(X, dtype=float)
    if shift:
        X = X - X.max(axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        e = np.where(np.isfinite(X), np.round(np.exp(X), exp_decimals), 0.0)
    total = e.sum(axis=1, keepdims=True)
    if sum_decimals is not None:
        total = np.round(total, sum_decimals)
    return e / total


def for_every_seed(item_id: str, seeds: Iterable[int], check: Callable) -> None:
    """``check(item, seed)`` for the variant ``item_id`` at each seed (one test per variant, not per seed)."""
    it = get_item(item_id)
    for seed in seeds:
        check(it, seed)
