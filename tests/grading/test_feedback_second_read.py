"""What the second read of the exercise pages (reader s5) found in the feedback and the variants, kept away.

- Finding 15: hints and messages are plain text, nothing renders TeX in them: E08 once wrote "e^{2/τ}" where every
  other item writes "exp(2/τ)".
- Finding 13: V01, V03 and V04 drew their integers from one stream, so for every seed V03's scores began with
  V01's queries and V04's queries were V01's first two. Each variant now has numbers of its own; V01 and V02 keep
  the numbers they always had for every seed (a learner who started them sees the same numbers).
- Finding 4: E09's feedback names the stacked heads ``heads`` and the matrix it splits ``Q`` (H is the entropy of
  the notation page, X the raw tokens).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

os.environ["ATTN_GRADING_STRICT"] = "1"
os.environ["ATTN_PROGRESS"] = "off"

from attn.grading import get_item  # noqa: E402
from attn.grading.items import REGISTRY  # noqa: E402


def feedback_texts():
    for it in REGISTRY.values():
        for i, h in enumerate(it.hints):
            yield f"{it.id} hint {i + 1}", h
        for p in it.parts:
            yield f"{it.id}.{p.name} praise", p.praise or ""
            for m in p.mistakes:
                yield f"{it.id}.{p.name} {m.key}", m.hint


# TeX a plain-text message must not carry: a braced super- or subscript, or a backslash command
TEX = re.compile(r"[_^]\{|\\[A-Za-z]+")


def test_feedback_writes_math_in_plain_text():
    found = [f"{where}: {text[:100]!r}" for where, text in feedback_texts() if TEX.search(text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("bad", ["e^{−2/τ} is not 1 − 0.9", "W_{Q,a}", r"\sqrt{d_k}"])
def test_the_tex_rule_catches_each_form(bad):
    assert TEX.search(bad)


def test_e08_writes_its_exponentials_as_exp():
    it = get_item("E08")
    texts = list(it.hints) + [m.hint for p in it.parts for m in p.mistakes]
    assert any("exp(−2/τ)" in t for t in texts)


# ----------------------------------------------------------------------------- finding 13: a stream per variant
SEEDS = range(200)


def _rows(a):
    return {tuple(r) for r in np.asarray(a, dtype=int).tolist()}


def _shared_block(a, b) -> bool:
    """Whether the first rows of b are the first rows of a (the overlap the reader saw), or b holds a's rows."""
    a, b = np.asarray(a), np.asarray(b)
    n = min(len(a), len(b))
    return a.shape[1] == b.shape[1] and np.array_equal(a[:n], b[:n])


def test_the_variants_draw_numbers_of_their_own():
    shared = []
    for seed in SEEDS:
        q1 = get_item("V01").context(seed).Q
        s3 = get_item("V03").context(seed).S
        q4 = get_item("V04").context(seed).Q
        if _shared_block(q1, s3) or _shared_block(q1, q4) or _shared_block(s3, q4):
            shared.append(seed)
    # independent draws of 0..2 integers may agree in a first row by chance (3⁻⁴ a row), never in a block
    assert not shared, f"seeds whose variants share their numbers: {shared[:10]}"


# The numbers a learner sees for a seed never change: V01 and V02 as they always were (the reader's seed 7 of V01
# among them), V03 and V04 since each has had a stream of its own ([seed, 3] and [seed, 4]).
PINNED = {
    ("V01", 0): {"Q": [[2, 1, 1, 0], [0, 0, 0, 0], [0, 2, 1, 2]], "K": [[1, 1, 2, 2], [1, 1, 1, 2], [0, 2, 2, 0]],
                 "V": [[1, 3], [2, 0], [3, 2]]},
    ("V01", 7): {"Q": [[2, 1, 2, 2], [1, 2, 2, 0], [0, 0, 0, 2]], "K": [[2, 0, 1, 2], [0, 2, 0, 1], [2, 0, 1, 0]],
                 "V": [[2, 1], [3, 1], [1, 2]]},
    ("V02", 0): {"s": [1, 4, 2], "taus": [0.5, 1.0, 2.0]},
    ("V02", 7): {"s": [2, 1, 4], "taus": [1.0, 2.0, 4.0]},
    ("V03", 0): {"S": [[1, 2, 2, 2], [2, 0, 1, 0], [2, 0, 1, 2], [0, 0, 0, 2]], "V": [[1, 0], [4, 0], [4, 4], [0, 2]]},
    ("V03", 7): {"S": [[2, 2, 1, 2], [1, 0, 0, 2], [0, 1, 0, 2], [0, 2, 2, 1]], "V": [[1, 4], [2, 4], [4, 1], [0, 0]]},
    ("V04", 0): {"Q": [[1, 2, 1, 0], [2, 1, 1, 1]], "K": [[0, 2, 0, 0], [1, 2, 2, 2], [1, 2, 2, 1]],
                 "V": [[0, 2], [1, 1], [3, 0]]},
    ("V04", 7): {"Q": [[1, 0, 2, 0], [1, 1, 1, 1]], "K": [[0, 1, 1, 0], [0, 0, 0, 2], [0, 1, 0, 0]],
                 "V": [[2, 2], [1, 2], [1, 1]]},
}


@pytest.mark.parametrize("item_id, seed", sorted(PINNED), ids=[f"{i}@{s}" for i, s in sorted(PINNED)])
def test_a_seed_keeps_its_numbers(item_id, seed):
    ns = get_item(item_id).context(seed)
    for name, pinned in PINNED[(item_id, seed)].items():
        assert np.asarray(getattr(ns, name)).tolist() == pinned, (item_id, seed, name)
