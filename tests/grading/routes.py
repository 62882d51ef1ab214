"""How the grading tests walk the items: the by-hand route a learner takes, and every seed of a variant.

Shared by tests/grading/test_follow_through.py, test_grading.py and test_learner_copies_run.py."""
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


def for_every_seed(item_id: str, seeds: Iterable[int], check: Callable) -> None:
    """``check(item, seed)`` for the variant ``item_id`` at each seed (one test per variant, not per seed)."""
    it = get_item(item_id)
    for seed in seeds:
        check(it, seed)
