"""Every hint that gives code, followed literally, leads to a right answer (reader s5, finding 1).

E10's third hint once read ``empty = ~mask.any(axis=-1)``: a ``(T_q,)`` vector, which ``np.where(empty, 0.0, S)``
broadcasts along the *last* axis, so it picked columns (keys), not rows (queries), and a learner who followed
the hint got a wrong function and the advice "check the arithmetic". Here each recipe is assembled from the
code its item's hints quote: every fragment is looked up verbatim in the hints (:func:`quoted` fails when a
hint no longer says it) and then executed as it stands (``exec``/``eval``), so a hint whose code is wrong makes
its recipe wrong, and the recipe's answers must be judged correct.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

os.environ["ATTN_GRADING_STRICT"] = "1"
os.environ["ATTN_PROGRESS"] = "off"

import attn  # noqa: E402
from attn.grading import CORRECT, NOT_YET, get_item  # noqa: E402
from attn.grading.items import REGISTRY  # noqa: E402


def quoted(item_id: str, code: str) -> str:
    """``code``, which one of ``item_id``'s hints must quote verbatim (the recipe runs exactly that text)."""
    hints = get_item(item_id).hints
    assert any(code in h for h in hints), f"no hint of {item_id} says {code!r} any more:\n" + "\n".join(hints)
    return code


def run(code: str, **names):
    """Execute a hint's statement with ``names`` bound (and ``np``, ``attn``); return the names it binds."""
    ns = {"np": np, "attn": attn, **names}
    exec(code, ns)
    return ns


def value(code: str, **names):
    """Evaluate a hint's expression with ``names`` bound (and ``np``, ``attn``)."""
    return eval(code, {"np": np, "attn": attn, **names})


# ----------------------------------------------------------------------------- the recipes, one per item
def e01_softmax(x, tau=1.0):
    x = np.asarray(x, dtype=np.float64)
    z = run(quoted("E01", "z = x / tau"), x=x, tau=tau)["z"]                      # hint 2
    z = value(quoted("E01", "z - z.max(axis=-1, keepdims=True)"), z=z)            # hint 3
    e = value(quoted("E01", "np.exp") + "(z)", z=z)                                 # hint 1
    return e / value("e" + quoted("E01", ".sum(axis=-1, keepdims=True)"), e=e)


def e02_attention(Q, K, V, mask=None):
    d_k = value(quoted("E02", "d_k = Q.shape[-1]").split(" = ")[1], Q=np.asarray(Q))
    S = run(quoted("E02", "S = Q @ K.T / np.sqrt(d_k)"), Q=np.asarray(Q), K=np.asarray(K), d_k=d_k)["S"]
    if mask is not None:                                                          # "Skip this line when mask is None."
        quoted("E02", "Skip this line when mask is None")
        S = run(quoted("E02", "S = np.where(mask, S, -np.inf)"), mask=np.asarray(mask), S=S)["S"]
    weights = e01_softmax(S)                                                      # hint 3: your softmax from E01
    return value(quoted("E02", "weights @ V"), weights=weights, V=np.asarray(V))


def e03_jacobian(x, tau=1.0):
    quoted("E03", "your E01 function, or attn.softmax")
    w = e01_softmax(x, tau)                                                       # hint 3: a stable softmax
    return value(quoted("E03", "(np.diag(w) - np.outer(w, w)) / tau"), w=w, tau=tau)  # hint 2


def e04_answers():
    ns = get_item("E04").context()
    X, perm = ns.X, ns.perm
    attention_of = quoted("E04", "attn.attention(X, X, X).output")               # hint 1
    quoted("E04", "X[perm]")
    permuted = value(attention_of.replace("X", "X[perm]"), X=X, perm=perm)        # hint 2: run it on X[perm]
    quoted("E04", "the queries stay X; only the keys and the values become X[perm]")
    kv = value("attn.attention(X, X[perm], X[perm]).output", X=X, perm=perm)      # hint 3
    return {"permuted_output": permuted, "kv_permuted_output": kv}


def e05_answers():
    ns = get_item("E05").context()
    grids = run(quoted("E05", "i = np.arange(T)[:, None], j = np.arange(T)[None, :]").replace(", j", "; j"), T=ns.T)
    i, j = grids["i"], grids["j"]
    w1 = ns.window - 1
    quoted("E05", f"The window: j ≤ i and j ≥ i − {w1}")                          # hint 3 (prose), in code:
    window = (j <= i) & (j >= i - w1)
    pad = value(quoted("E05", f"np.repeat(j < {ns.n_real}, {ns.T}, axis=0)"), j=j)  # hint 4
    return {"window_mask": window, "pad_mask": pad}


def e07_answers(seed=0):
    ns = get_item("E07").context()
    rng = np.random.default_rng(seed)
    draw = quoted("E07", "q = rng.standard_normal((n, d_k)) and k = sigma_k * rng.standard_normal((n, d_k))")
    dots = quoted("E07", "(q * k).sum(axis=1)")
    variances = []
    for d_k in ns.d_ks:                                                           # hint 2: repeat for each d_k
        drawn = run(draw.replace(" and ", "; "), rng=rng, n=ns.n, d_k=d_k, sigma_k=ns.sigma_k)
        variances.append(float(value(quoted("E07", "np.var") + f"({dots})", q=drawn["q"], k=drawn["k"])))
    quoted("E07", "np.polyfit with degree 1")                                     # hint 4
    slope = float(np.polyfit(np.log(ns.d_ks), np.log(variances), 1)[0])
    return {"variances": variances, "slope": slope}


def e08_answers():
    ns = get_item("E08").context()
    # hints 1-2: the largest weight is 1 / (1 + exp(-Δ/τ)); set it to w* and get exp(-Δ/τ) on its own first
    quoted("E08", "1 / (1 + exp(−2/τ))")
    gap = float(ns.s2[0] - ns.s2[1])
    ratio = (1 - ns.target) / ns.target                                           # exp(-Δ/τ), the ratio of the weights
    tau_two = -gap / math.log(ratio)
    # hint 3: try 0.1 and 10, then halve the interval until the weight is the target to three decimals
    quoted("E08", "Try τ = 0.1 and τ = 10, then halve the interval (bisection)")
    lo, hi = 0.1, 10.0
    while True:
        mid = (lo + hi) / 2
        top = attn.softmax(ns.s4, tau=mid).max()
        if round(top, 3) == round(ns.target, 3):
            break
        lo, hi = (mid, hi) if top > ns.target else (lo, mid)
    return {"tau_two": tau_two, "tau": mid}


def e09_split_heads(Q, h):
    Q = np.asarray(Q)
    T = Q.shape[0]
    d_k = value(quoted("E09", "d_k = Q.shape[1] // h").split(" = ")[1], Q=Q, h=h)  # hint 1
    blocks = value(quoted("E09", "Q.reshape(T, h, d_k)"), Q=Q, T=T, h=h, d_k=d_k)   # hint 2
    return value("blocks" + quoted("E09", ".transpose(1, 0, 2)"), blocks=blocks)     # hint 3


def e09_merge_heads(heads):
    # hint 4: undo split_heads's two steps in the reverse order: the transpose first, then the reshape
    quoted("E09", "undo its two steps in the reverse order")
    heads = np.asarray(heads)
    h, T, d_k = heads.shape
    return heads.transpose(1, 0, 2).reshape(T, h * d_k)


def e10_safe_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    S = Q @ K.T / np.sqrt(Q.shape[-1])                                            # the page's broken_attention ...
    if mask is not None:
        mask = np.asarray(mask)
        S = value(quoted("E10", "np.where(mask, S, -np.inf)"), mask=mask, S=S)    # hint 1
        empty = run(quoted("E10", "empty = ~mask.any(axis=-1, keepdims=True)"), mask=mask)["empty"]  # hint 3
        quoted("E10", "give them any finite scores (say 0) before the softmax, then set their weights to 0")
        S = np.where(empty, 0.0, S)                                               # ... finite scores, say 0
    quoted("E10", "subtract each row's maximum (over the finite scores) before np.exp")
    S = S - S.max(axis=-1, keepdims=True)                                         # hint 4
    W = np.exp(S)
    W = W / W.sum(axis=-1, keepdims=True)
    if mask is not None:
        W = np.where(empty, 0.0, W)                                               # ... their weights to 0
    return W @ V


def b05_answers():
    ns = get_item("B05").context()
    sim = run(quoted("B05", "rng = np.random.default_rng(0); q = rng.normal(0, np.sqrt(var_q), size=(100_000, d_k))"),
              var_q=ns.var_q, d_k=ns.d_k)
    quoted("B05", "the same for k with np.sqrt(var_k)")
    k = sim["rng"].normal(0, np.sqrt(ns.var_k), size=(100_000, ns.d_k))
    simulated = value(quoted("B05", "np.var((q * k).sum(axis=1))"), q=sim["q"], k=k)
    var_raw = ns.d_k * ns.var_q * ns.var_k                                        # hint 2: d_k σ_q² σ_k²
    return {"var_raw": var_raw, "var_scaled": var_raw / ns.d_k, "simulated": simulated}  # hint 3: c² = 1/d_k


RECIPES = {
    "E01": lambda: {"softmax": e01_softmax},
    "E02": lambda: {"scaled_dot_product_attention": e02_attention},
    "E03": lambda: {"softmax_jacobian": e03_jacobian},
    "E04": e04_answers,
    "E05": e05_answers,
    "E07": e07_answers,
    "E08": e08_answers,
    "E09": lambda: {"split_heads": e09_split_heads, "merge_heads": e09_merge_heads},
    "E10": lambda: {"cause": 2, "safe_attention": e10_safe_attention},
    "B05": b05_answers,
}


@pytest.mark.parametrize("item_id", sorted(RECIPES))
def test_the_hints_recipe_followed_literally_is_right(item_id):
    it = get_item(item_id)
    answers = RECIPES[item_id]()
    assert set(answers) == set(it.part_names)
    for part, answer in answers.items():
        fb = it.judge(part, answer)
        assert fb.status == CORRECT, f"{item_id}.{part}, from its hints: {fb}"


# Which hints give code: a call, an index, a method or an assignment a learner can type. Every such item has a
# recipe above (a new hint with code needs one).
CODE_IN_HINT = re.compile(r"\bnp\.\w|\battn\.\w|\.\w+\(|\w\[[^\]]*\]|\b\w+ = [\w~(]")


def test_every_item_whose_hints_give_code_has_a_recipe():
    coded = {it.id for it in REGISTRY.values() if it.kind != "variant" and any(CODE_IN_HINT.search(h) for h in it.hints)}
    # B01's and B04's hints write the output as weights @ V (a formula in code's spelling) for a computation by hand:
    # the by-hand routes are followed, rounded as on paper, in test_follow_through.py and test_feedback_review5.py
    by_hand = {"B01", "B04"}
    assert coded - by_hand <= set(RECIPES), sorted(coded - by_hand - set(RECIPES))


def test_code_in_a_hint_is_python_that_runs():
    """A minus sign inside code is ASCII: "(np.diag(w) − np.outer(w, w))" with U+2212 is a SyntaxError."""
    bad = []
    for it in REGISTRY.values():
        for h in it.hints:
            for m in re.finditer(r"(?:np|attn)\.[\w.]+\([^()]*(?:\([^()]*\)[^()]*)*\)[^,;:]*", h):
                if "−" in m.group(0):
                    bad.append(f"{it.id}: {m.group(0)!r}")
    assert not bad, bad


# ----------------------------------------------------------------------------- the old E10 hint, followed
def e10_without_keepdims(Q, K, V, mask=None):
    """The hint as it once read: ``empty = ~mask.any(axis=-1)``, then ``np.where(empty, 0.0, S)``."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask)
        S = np.where(mask, S, -np.inf)
        empty = ~mask.any(axis=-1)
        S = np.where(empty, 0.0, S)
    S = S - S.max(axis=-1, keepdims=True)
    W = np.exp(S)
    W = W / W.sum(axis=-1, keepdims=True)
    if mask is not None:
        W = np.where(empty, 0.0, W)
    return W @ V


def test_the_old_e10_hint_is_told_about_broadcasting():
    fb = get_item("E10").judge("safe_attention", e10_without_keepdims)
    assert fb.status == NOT_YET and fb.mistake == "no_keepdims", str(fb)
    assert "keepdims=True" in fb.message and "column" in fb.message and "arithmetic" not in fb.message


def test_the_e10_messages_quote_the_empty_rows_with_keepdims():
    texts = [m.hint for p in get_item("E10").parts for m in p.mistakes] + list(get_item("E10").hints)
    quoting = [t for t in texts if "mask.any(" in t]
    assert quoting and all("mask.any(axis=-1, keepdims=True)" in t for t in quoting), quoting
