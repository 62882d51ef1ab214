"""Problems II.3.B01–B05 and variants II.3.V01–V04.

Every expected answer is computed by :mod:`attn` from the item's data; nothing
numeric is stored except the given matrices of the fixed problems.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

import attn


from . import answers as _answers
from .items import Item, Mistake, Part, register


def _a(rows) -> np.ndarray:
    return np.array(rows, dtype=np.float64)


# ----------------------------------------------------------------------------- shared mistake tables
# Each takes the namespace ns of an item with Q, K, V (and optionally tau, mask) and the expected parts.

def _sqrt_dk(ns) -> float:
    return math.sqrt(ns.Q.shape[1])


def _raw(ns) -> np.ndarray:
    return ns.Q @ ns.K.T  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)


def _masked(ns, S) -> np.ndarray:
    mask = getattr(ns, "mask", None)
    return S if mask is None else np.where(mask, S, -np.inf)


def _sm(ns, S, axis=-1) -> np.ndarray:
    return attn.softmax(_masked(ns, S), tau=getattr(ns, "tau", 1.0), axis=axis)


def score_mistakes() -> list[Mistake]:
    return [
        Mistake("forgot_scale", lambda ns: _raw(ns),
                "These are the raw dot products Q Kᵀ. Scaled dot-product attention divides each of them by √d_k."),
        Mistake("divided_by_dk", lambda ns: _raw(ns) / ns.Q.shape[1],
                "You divided by d_k. The scale is 1/√d_k: divide by the square root of the key width."),
        Mistake("k_qt", lambda ns: ns.K @ ns.Q.T / _sqrt_dk(ns),
                "That is K Qᵀ, with a row per key. The scores are Q Kᵀ: row i compares query i with every key."),
    ]


def weight_mistakes() -> list[Mistake]:
    return [
        Mistake("columns", lambda ns: _sm(ns, ns.Q @ ns.K.T / _sqrt_dk(ns), axis=0),
                "You normalised down each column. The softmax runs along each row: one query's weights "
                "over all the keys sum to 1."),
        Mistake("forgot_scale", lambda ns: _sm(ns, _raw(ns)),
                "These are the softmax of the raw dot products Q Kᵀ. Divide them by √d_k before the softmax."),
        Mistake("divided_by_dk", lambda ns: _sm(ns, _raw(ns) / ns.Q.shape[1]),
                "These come from dot products divided by d_k. The scale is 1/√d_k, the square root of the key width."),
        Mistake("k_qt", lambda ns: _sm(ns, ns.K @ ns.Q.T / _sqrt_dk(ns)),
                "These come from K Qᵀ instead of Q Kᵀ: row i must hold query i's scores against every key."),
        Mistake("weights_t", lambda ns: _sm(ns, ns.Q @ ns.K.T / _sqrt_dk(ns)).T,
                "That is the transpose of the weight matrix: rows are queries, columns are keys."),
        Mistake("scores_not_weights", lambda ns: _masked(ns, ns.Q @ ns.K.T / _sqrt_dk(ns)),
                "These are still the scores. The weights are the softmax of each row of scores."),
        Mistake("no_exp", lambda ns: (lambda S: S / S.sum(axis=1, keepdims=True))(ns.Q @ ns.K.T / _sqrt_dk(ns)),
                "You divided each score by its row sum without exponentiating. The softmax takes exp first, "
                "then divides by the row sum of the exponentials."),
    ]


def output_mistakes() -> list[Mistake]:
    def S(ns):
        return ns.Q @ ns.K.T / _sqrt_dk(ns)

    return [
        Mistake("weights_t", lambda ns: _sm(ns, S(ns)).T @ ns.V,
                "You multiplied the transposed weights by V. The output is weights @ V: row i mixes the value "
                "rows with query i's weights."),
        Mistake("columns", lambda ns: _sm(ns, S(ns), axis=0) @ ns.V,
                "These come from weights normalised down columns. Normalise each row of scores, then multiply by V."),
        Mistake("forgot_scale", lambda ns: _sm(ns, _raw(ns)) @ ns.V,
                "These come from the raw dot products Q Kᵀ. Divide them by √d_k before the softmax."),
        Mistake("divided_by_dk", lambda ns: _sm(ns, _raw(ns) / ns.Q.shape[1]) @ ns.V,
                "These come from dot products divided by d_k. The scale is 1/√d_k."),
        Mistake("scores_times_v", lambda ns: np.where(getattr(ns, "mask", True), S(ns), 0.0) @ ns.V,
                "You multiplied the scores by V. Turn the scores into weights with a softmax first."),
    ]


def no_exp_output_mistake() -> Mistake:
    """The output from weights made without the exponential. Declared for B04/V04, so that V04 never draws numbers
    where that output passes on the tolerance carried from the weights (seed 283 of V04's own stream did: a column
    of V all ones, and the other column barely moved by the weights). Not declared for V01, which in seeds 0–2999
    never draws such numbers: declaring it there would change V01's numbers for 19 of those seeds."""
    def answer(ns):
        S = ns.Q @ ns.K.T / _sqrt_dk(ns)  # (T_q, T_k)
        return S / S.sum(axis=1, keepdims=True) @ ns.V
    return Mistake("no_exp", answer,
                   "This output comes from weights made without the exponential (each score divided by its row "
                   "sum). Exponentiate the scores first, divide by the row sum of the exponentials, then multiply "
                   "by V.")


# ----------------------------------------------------------------------------- steps (follow-through marking)
# Each computes a part from the learner's own earlier answers (plain float arrays), as the page does by hand.

QK_AXES = ("queries", "keys")
OUTPUT_AXES = ("queries", "value features (the d_v columns of V)")


def _weights_from_scores(ns, scores) -> np.ndarray:
    return attn.softmax(np.asarray(scores, dtype=np.float64), axis=-1)  # (T_q, T_k), one softmax per row


def _output_from_weights(ns, weights) -> np.ndarray:
    return np.asarray(weights, dtype=np.float64) @ ns.V  # (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v)


def pencil_softmaxes(X) -> list[np.ndarray]:
    """The weights a learner with a pencil reaches from rows of scores ``X`` (shape (rows, T_k); −∞ where
    masked): with or without each row's maximum subtracted first, the exponentials rounded to 2 or 3 decimals,
    their sum rounded to 2 or 3 decimals or not, each step computed from the rounded one before (the weights
    themselves unrounded: the part's own tolerance covers rounding them). Rounding e^(−2) = 0.135 to 0.14 moves
    a weight by up to about 0.012, more than the part's 0.01, yet nothing in such a route is wrong."""
    X = np.asarray(X, dtype=np.float64)
    out = []
    with np.errstate(all="ignore"):
        for shift in (False, True):
            Y = X - np.max(X, axis=-1, keepdims=True) if shift else X
            for exp_dec in (2, 3):
                e = np.where(np.isfinite(Y), np.round(np.exp(Y), exp_dec), 0.0)  # (rows, T_k)
                total = e.sum(axis=-1, keepdims=True)
                for sum_dec in (None, 2, 3):
                    z = total if sum_dec is None else np.round(total, sum_dec)
                    out.append(e / z)
    return [w for w in out if np.isfinite(w).all()]


def _weight_routes_from_scores(ns, scores) -> list[np.ndarray]:
    return pencil_softmaxes(scores)


def _causal_weight_routes(ns, mask) -> list[np.ndarray]:
    return pencil_softmaxes(np.where(np.asarray(mask, dtype=bool), ns.S, -np.inf))


def _tau_weight_routes(ns) -> list[np.ndarray]:
    return pencil_softmaxes(np.stack([np.asarray(ns.s, dtype=np.float64) / t for t in ns.taus]))


def _causal_weights_from_mask(ns, mask) -> np.ndarray:
    return attn.softmax(np.where(np.asarray(mask, dtype=bool), ns.S, -np.inf))  # a row with no key: NaN, skipped


# ----------------------------------------------------------------------------- drawing pleasant variants

def _draw_until_distinct(rng, draw, parts, tries: int = 2000) -> dict:
    """Draw data until every declared mistake differs from the right answer (so each hint can be given).

    "Differs" means: by more than twice the part's own tolerance plus the rounding of earlier parts carried
    through it (:meth:`Item.tolerance`), so no mistake passes for a right answer given by hand, and no answer
    near the right one is told it made a mistake (a mistake with its own ``atol`` counts that band instead of
    the part's own tolerance, as the judge does).
    Deterministic for a given generator state: the same seed always gives the same numbers.
    """
    for _ in range(tries):
        data = draw(rng)
        trial = Item(id="X00", title="", page="", data=lambda _rng: data, parts=parts)
        ns = trial.context()
        ok = True
        with np.errstate(all="ignore"):
            for p in parts:
                exp = np.asarray(getattr(ns, p.name))
                atol, rtol = trial.tolerance(p.name)
                atol = atol + p.tolerances()[0]
                for m in p.mistakes:
                    try:
                        wrong = np.asarray(m.answer(ns))
                    except Exception:
                        continue  # e.g. W.T @ V when the shapes do not fit: the shape message covers it
                    band = atol if m.atol is None else atol - p.tolerances()[0] + m.atol
                    if _answers.close(wrong, exp, band, rtol, equal_nan=True):
                        ok = False
        if ok:
            return data
    raise RuntimeError("no pleasant draw found")  # pragma: no cover


def _ints(rng, low, high, shape) -> np.ndarray:
    return rng.integers(low, high + 1, size=shape)


def problem_and_variant(number: int, slug: str, title: str, variant_title: str, data, draw, parts,
                        hints, own_stream: bool = False) -> tuple[Item, Item]:
    """Problem B<number> and its variant V<number>, declared once and registered: the same parts (``parts()``, a
    fresh list for each) and hints; the problem on its fixed ``data()``, the variant on numbers ``draw(rng)`` makes
    from its seed, drawn again until the parts' answers are distinct (:func:`_draw_until_distinct`). Pages
    ``exercises/b<number>-<slug>`` and ``exercises/v<number>-<slug>``.

    ``own_stream``: the variant draws from ``default_rng([seed, number])`` instead of ``default_rng(seed)``. V03
    and V04 do: drawn from ``default_rng(seed)`` like V01, their integers were V01's for every seed (the same
    first rows three times). V01 and V02 keep ``default_rng(seed)``, so that their numbers for a seed never change."""
    b, v = f"B{number:02d}", f"V{number:02d}"
    problem = register(Item(id=b, title=title, page=f"exercises/{b.lower()}-{slug}", data=data, parts=parts(),
                            hints=hints))
    variant = register(Item(id=v, title=variant_title, page=f"exercises/{v.lower()}-{slug}", kind="variant", of=b,
                            data=lambda rng: _draw_until_distinct(rng, draw, parts()), parts=parts(), hints=hints,
                            stream=(number,) if own_stream else ()))
    return problem, variant


# ----------------------------------------------------------------------------- B01 / V01: three tokens

def _sqrt_text(n: int) -> str:
    """√n as a hint writes it: a whole number when n is a square (√4 = 2), else √n."""
    r = math.isqrt(n)
    return str(r) if r * r == n else f"√{n}"


def _output_row(T_k: int) -> str:
    """Row i of weights @ V written out term by term, one term per key."""
    return " + ".join(f"weights[i, {j}] · V[{j}]" for j in range(T_k))


def _qkv_hints(data: dict) -> tuple[str, ...]:
    """The hints of B01 and V01, their shapes read from the data (a variant draws the same shapes)."""
    (T_q, d_k), T_k = data["Q"].shape, data["K"].shape[0]
    return (
        "Scores first: S = Q Kᵀ / √d_k. Entry S[i, j] is the dot product of query row i with key row j, "
        f"divided by √d_k. Here d_k = {d_k}, so √d_k = {_sqrt_text(d_k)}.",
        f"Weights: take each row of S on its own. Exponentiate its {T_k} entries and divide each by their sum. "
        "Each row of weights then sums to 1.",
        f"Output: row i is {_output_row(T_k)}, that is weights @ V, of shape (T_q, d_v).",
        f"A row whose scores are all equal gets equal weights, 1/{T_k} each, whatever the common score is.",
    )


def _qkv_parts(weights_praise: str = "Every row sums to 1 (up to rounding), as it must.",
               output_praise: str = "Each output row is a weighted average of the value rows.") -> list[Part]:
    """Scores, weights and output of attention on given Q, K, V (B01, B04 and their variants)."""
    return [
        Part("scores", lambda ns: attn.scores(ns.Q, ns.K), what="the score matrix S (T_q × T_k)",
             decimals=2, mistakes=score_mistakes(), axes=QK_AXES),
        Part("weights", lambda ns: attn.attention(ns.Q, ns.K, ns.V).weights,
             what="the weight matrix (T_q × T_k)", decimals=2, rows_sum_to_one=True,
             mistakes=weight_mistakes(), praise=weights_praise,
             uses=("scores",), step=_weights_from_scores, routes=_weight_routes_from_scores, axes=QK_AXES),
        Part("output", lambda ns: attn.attention(ns.Q, ns.K, ns.V).output,
             what="the output (T_q × d_v)", decimals=2, mistakes=output_mistakes(),
             praise=output_praise,
             uses=("weights",), step=_output_from_weights, axes=OUTPUT_AXES),
    ]


def b01_data(rng=None) -> dict:
    """Three tokens, d_k = 4 (so √d_k = 2), d_v = 2; small integers."""
    Q = _a([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]])  # (T_q, d_k) = (3, 4)
    K = _a([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]])  # (T_k, d_k) = (3, 4)
    V = _a([[1, 0], [0, 2], [2, 1]])  # (T_k, d_v) = (3, 2)
    return {"Q": Q, "K": K, "V": V}


def v01_draw(r) -> dict:
    """Like B01: Q, K entries in 0..2 (d_k = 4, so scores are multiples of 1/2), V entries in 0..3."""
    return {"Q": _ints(r, 0, 2, (3, 4)), "K": _ints(r, 0, 2, (3, 4)), "V": _ints(r, 0, 3, (3, 2))}


B01, V01 = problem_and_variant(1, "three-tokens", "Attention on three tokens, by hand", "Three tokens, fresh numbers",
                               b01_data, v01_draw, _qkv_parts, _qkv_hints(b01_data()))


# ----------------------------------------------------------------------------- B02 / V02: temperature

def _tau_rows(ns, f) -> np.ndarray:
    return np.stack([f(ns.s, t) for t in ns.taus])  # (len(taus), T_k)


def _first_key_limit(ns) -> np.ndarray:
    """The cold limit put on the first key (as in B02, where the first score is the largest); left out when the
    first key holds the largest or the smallest score (the right answer, or the ``argmin`` mistake)."""
    s = np.asarray(ns.s)
    if s[0] in (s.max(), s.min()):
        raise ValueError("the first key is the largest or the smallest here")
    return np.eye(len(s))[0]


def _temperature_parts() -> list[Part]:
    return [
        Part("weights", lambda ns: _tau_rows(ns, lambda s, t: attn.softmax(s, tau=t)),
             what="the weight matrix (n_τ × T_k, one row per temperature)", decimals=2, rows_sum_to_one=True,
             routes=_tau_weight_routes, axes=("temperatures (one row per τ)", "keys"),
             praise="Low τ sharpens the weights towards the largest score; high τ flattens them.",
             mistakes=[
                 Mistake("times_tau", lambda ns: _tau_rows(ns, lambda s, t: attn.softmax(np.asarray(s) * t)),
                         "Your weights get flatter as τ gets smaller, the wrong way round. The temperature divides: "
                         "softmax(s / τ), so a small τ makes the gaps larger and the weights sharper."),
                 Mistake("no_tau", lambda ns: _tau_rows(ns, lambda s, t: attn.softmax(s)),
                         "Every row is the same: the temperature is missing. Row r is softmax(s / τ_r)."),
                 Mistake("order", lambda ns: _tau_rows(ns, lambda s, t: attn.softmax(s, tau=t))[::-1],
                         "The rows are in the wrong order: row r goes with τ_r, in the order the taus are listed."),
                 Mistake("columns", lambda ns: attn.softmax(
                         np.stack([np.asarray(ns.s) / t for t in ns.taus]), axis=0),
                         "You normalised down the columns. Each row (one temperature) is its own softmax and "
                         "sums to 1."),
                 Mistake("no_exp", lambda ns: _tau_rows(ns, lambda s, t: (np.asarray(s) / t) / np.sum(np.asarray(s) / t)),
                         "You divided by the row sum without exponentiating. The softmax takes exp(s / τ) first."),
             ]),
        Part("cold_limit", lambda ns: attn.softmax(ns.s, tau=1e-3),
             what="the cold limit (one weight per key)", decimals=2, rows_sum_to_one=False,
             praise="As τ → 0 the softmax becomes the argmax: all the weight on the best-matching key "
                    "(when its score is the unique maximum; tied keys would share it equally).",
             mistakes=[
                 Mistake("uniform", lambda ns: np.full(len(ns.s), 1.0 / len(ns.s)),
                         "Equal weights are the limit as τ → ∞ (hot). As τ → 0 the scores s / τ grow apart."),
                 Mistake("argmin", lambda ns: np.eye(len(ns.s))[int(np.argmin(ns.s))],
                         "All the weight went to the smallest score. As τ → 0, the largest score wins."),
                 Mistake("first_key", _first_key_limit,
                         "All the weight went to the first key, but its score is not the largest here. As τ → 0, "
                         "the largest score wins, wherever it stands."),
             ]),
    ]


_TEMPERATURE_HINTS = (
    "Row r of the answer is softmax(s / τ_r): divide every score by that row's τ, then take the softmax.",
    "Dividing by τ multiplies every gap between the scores by 1/τ: a τ below 1 widens the gaps, a τ above 1 "
    "narrows them. Larger gaps mean sharper weights.",
    "Subtracting the largest score first changes nothing and keeps the numbers small: exp(0) = 1 for the top one.",
    "For the limit, look at what happens to exp((s_j - s_max) / τ) as τ → 0 when s_j < s_max.",
)


def b02_data(rng=None) -> dict:
    return {"s": _a([2, 1, 0]), "taus": (0.5, 1.0, 2.0)}


_TAU_SETS = ((0.5, 1.0, 2.0), (0.25, 1.0, 4.0), (0.5, 2.0, 4.0), (1.0, 2.0, 4.0))


def v02_draw(r) -> dict:
    s = r.choice(np.arange(-2, 5), size=3, replace=False)
    return {"s": s, "taus": _TAU_SETS[int(r.integers(len(_TAU_SETS)))]}


B02, V02 = problem_and_variant(2, "temperature", "One row of scores at three temperatures",
                               "Temperature, fresh numbers", b02_data, v02_draw, _temperature_parts,
                               _TEMPERATURE_HINTS)


# ----------------------------------------------------------------------------- B03 / V03: causal mask

def _causal_weights(ns) -> np.ndarray:
    return attn.softmax(np.where(attn.causal_mask(ns.S.shape[0]), ns.S, -np.inf))


def _causal_parts() -> list[Part]:
    T = lambda ns: ns.S.shape[0]  # noqa: E731
    full = lambda ns: attn.softmax(ns.S)  # noqa: E731
    return [
        Part("mask", lambda ns: attn.causal_mask(T(ns)), kind="mask", what="the mask (T × T)", axes=QK_AXES,
             praise="Each token reads itself and the tokens before it, never the future.",
             mistakes=[
                 Mistake("polarity", lambda ns: ~attn.causal_mask(T(ns)),
                         "The polarity is reversed. In this book True means \"may read\": a token may read "
                         "itself and earlier tokens (j ≤ i)."),
                 Mistake("strict", lambda ns: np.tril(np.ones((T(ns), T(ns)), dtype=bool), -1),
                         "Shifted by one: your mask forbids each token to read itself. Causal means j ≤ i, "
                         "the diagonal included."),
                 Mistake("future", lambda ns: np.triu(np.ones((T(ns), T(ns)), dtype=bool)),
                         "This mask lets each token read the future (j ≥ i). Causal means j ≤ i: the lower triangle."),
                 Mistake("shifted_up", lambda ns: np.tril(np.ones((T(ns), T(ns)), dtype=bool), 1),
                         "Shifted by one: your mask lets each token read the next token too. Causal means j ≤ i."),
             ]),
        Part("weights", _causal_weights, what="the weight matrix (T × T)", decimals=2, rows_sum_to_one=True,
             uses=("mask",), step=_causal_weights_from_mask, routes=_causal_weight_routes, axes=QK_AXES,
             praise="Row i spreads its weight over tokens 1 … i only.",
             mistakes=[
                 Mistake("no_mask", full, "These weights ignore the mask: every token reads the future. Set the "
                         "masked scores to -∞ before the softmax."),
                 Mistake("mask_after", lambda ns: np.where(attn.causal_mask(T(ns)), full(ns), 0.0),
                         "You masked after the softmax, so the rows no longer sum to 1. Mask the scores "
                         "(set them to -∞) first, then take the softmax."),
                 Mistake("zero_not_inf", lambda ns: attn.softmax(np.where(attn.causal_mask(T(ns)), ns.S, 0.0)),
                         "You set the masked scores to 0, but exp(0) = 1 still gives them weight. Use -∞: "
                         "exp(-∞) = 0."),
                 Mistake("weights_t", lambda ns: _causal_weights(ns).T,
                         "That is the transpose: row i must hold token i's weights over the keys j ≤ i."),
                 Mistake("strict", lambda ns: attn.softmax(np.where(
                         np.tril(np.ones(ns.S.shape, dtype=bool), -1) | (np.arange(T(ns))[:, None] == 0)
                         & (np.arange(T(ns))[None, :] == 0), ns.S, -np.inf)),
                         "These weights leave out each token's own key (shifted by one). Causal means j ≤ i."),
             ]),
        Part("output", lambda ns: _causal_weights(ns) @ ns.V, what="the output (T × d_v)", decimals=2,
             uses=("weights",), step=_output_from_weights, axes=OUTPUT_AXES,
             praise="The first output row is V's first row: token 1 can read only itself.",
             mistakes=[
                 Mistake("no_mask", lambda ns: full(ns) @ ns.V,
                         "This output comes from unmasked weights: the future leaked in. Mask before the softmax."),
                 Mistake("mask_after", lambda ns: np.where(attn.causal_mask(T(ns)), full(ns), 0.0) @ ns.V,
                         "This output comes from weights masked after the softmax (rows not summing to 1)."),
                 Mistake("zero_not_inf", lambda ns: attn.softmax(np.where(attn.causal_mask(T(ns)), ns.S, 0.0)) @ ns.V,
                         "This output comes from masked scores set to 0, and exp(0) = 1 still gives the future keys "
                         "weight. Set them to -∞ (exp(-∞) = 0), take the softmax, then multiply by V."),
                 Mistake("weights_t", lambda ns: _causal_weights(ns).T @ ns.V,
                         "You used the transposed weights. The output is weights @ V."),
             ]),
    ]


_CAUSAL_HINTS = (
    "Causal: token i may read token j exactly when j ≤ i. Write True on and below the diagonal, False above.",
    "Masked scores become -∞ before the softmax, so their weights are exactly 0; then each row is a softmax "
    "over the keys that are left.",
    "Row 1 has one key left, so its weight is 1. Row 2 has two keys: a two-way softmax.",
    "The output is weights @ V, exactly as without a mask: row i mixes the value rows 1 … i.",
)


def b03_data(rng=None) -> dict:
    """The scores S = Q Kᵀ/√d_k of four tokens, given directly (small integers), and their values V."""
    S = _a([[1, 2, 0, 1],
            [1, 1, 2, 0],
            [2, 0, 0, 1],
            [0, 1, 1, 0]])  # (T, T)
    V = _a([[2, 0], [0, 2], [1, 1], [4, 0]])  # (T, d_v)
    return {"S": S, "V": V}


def v03_draw(r) -> dict:
    return {"S": _ints(r, 0, 2, (4, 4)), "V": _ints(r, 0, 4, (4, 2))}


B03, V03 = problem_and_variant(3, "causal-mask", "A causal mask on four tokens", "A causal mask, fresh numbers",
                               b03_data, v03_draw, _causal_parts, _CAUSAL_HINTS, own_stream=True)


# ----------------------------------------------------------------------------- B04 / V04: cross-attention

def _cross_hints(data: dict) -> tuple[str, ...]:
    """The hints of B04 and V04, their shapes read from the data (a variant draws the same shapes)."""
    T_q, T_k = data["Q"].shape[0], data["K"].shape[0]
    return (
        f"Queries come from one sequence (T_q = {T_q} tokens), keys and values from the other (T_k = {T_k} "
        f"tokens). The scores Q Kᵀ / √d_k are then T_q × T_k = {T_q} × {T_k}.",
        f"Each of the {T_q} rows of scores gets its own softmax over the {T_k} keys.",
        "The output O = weights @ V is (T_q × T_k) @ (T_k × d_v) = T_q × d_v: one row per query, not per key.",
    )


def _cross_parts() -> list[Part]:
    T_q, T_k = (b04_data()[name].shape[0] for name in ("Q", "K"))
    parts = _qkv_parts(f"{T_q} rows, one per query; each sums to 1 over the {T_k} keys (up to rounding).",
                       "One output row per query: cross-attention keeps the length of the querying sequence.")
    output = parts[-1]
    return parts[:-1] + [dataclasses.replace(output, mistakes=[*output.mistakes, no_exp_output_mistake()])]


def b04_data(rng=None) -> dict:
    """Two decoder queries reading three encoder tokens; d_k = 4 (√d_k = 2), d_v = 2."""
    Q = _a([[2, 0, 0, 0], [0, 1, 1, 0]])  # (T_q, d_k) = (2, 4)
    K = _a([[1, 0, 0, 1], [0, 1, 1, 0], [2, 1, 1, 0]])  # (T_k, d_k) = (3, 4)
    V = _a([[3, 0], [0, 3], [1, 1]])  # (T_k, d_v) = (3, 2)
    return {"Q": Q, "K": K, "V": V}


def v04_draw(r) -> dict:
    return {"Q": _ints(r, 0, 2, (2, 4)), "K": _ints(r, 0, 2, (3, 4)), "V": _ints(r, 0, 3, (3, 2))}


B04, V04 = problem_and_variant(4, "cross-attention", "Cross-attention: two queries, three keys",
                               "Cross-attention, fresh numbers", b04_data, v04_draw, _cross_parts,
                               _cross_hints(b04_data()), own_stream=True)


# ----------------------------------------------------------------------------- B05: variance of a dot product

def _dot_variance(ns) -> float:
    """Var(q·k) for independent q, k with i.i.d. mean-0 entries: d_k σ_q² σ_k²."""
    return float(ns.d_k * ns.var_q * ns.var_k)


B05_SIM_RTOL = 0.1  # a simulation within this relative error of d_k σ_q² σ_k² is right (the page quotes it)


def _variance_parts() -> list[Part]:
    return [
        Part("var_raw", _dot_variance, what="Var(q·k), a number", rtol=1e-6, atol=1e-9,
             praise="Each of the d_k products q_a k_a has variance σ_q² σ_k², and independent variances add.",
             mistakes=[
                 Mistake("std", lambda ns: math.sqrt(_dot_variance(ns)),
                         "That is the standard deviation of q·k. The question asks for the variance, its square."),
                 Mistake("one_term", lambda ns: float(ns.var_q * ns.var_k),
                         "That is the variance of one product q_a k_a (and also that of the scaled dot product). "
                         "The raw dot product adds d_k of them."),
                 Mistake("sum_not_product", lambda ns: float(ns.d_k * (ns.var_q + ns.var_k)),
                         "You added the two variances. For independent mean-0 factors, Var(q_a k_a) = σ_q² σ_k²: "
                         "they multiply."),
                 Mistake("unit_variances", lambda ns: float(ns.d_k),
                         "That is d_k, the variance when every entry has variance 1. Here the entries' variances "
                         "are var_q and var_k, and each product q_a k_a has variance σ_q² σ_k²."),
                 Mistake("std_not_var", lambda ns: float(ns.d_k * math.sqrt(ns.var_q) * math.sqrt(ns.var_k)),
                         "You used the standard deviations σ_q σ_k where the variances belong: Var(q_a k_a) = "
                         "σ_q² σ_k². var_q and var_k are already variances (σ²), not standard deviations."),
                 Mistake("variance_as_scale", lambda ns: float(ns.d_k * ns.var_q ** 2 * ns.var_k ** 2),
                         "You squared the variances: d_k · var_q² · var_k². var_q and var_k are already σ_q² and "
                         "σ_k², so do not square them again: Var(q·k) = d_k · var_q · var_k."),
             ]),
        Part("var_scaled", lambda ns: _dot_variance(ns) / ns.d_k, what="Var(q·k / √d_k), a number",
             rtol=1e-6, atol=1e-9, uses=("var_raw",), step=lambda ns, var_raw: np.asarray(var_raw, dtype=np.float64) / ns.d_k,
             praise="The 1/√d_k scale removes the growth with d_k: the variance no longer depends on the width.",
             mistakes=[
                 Mistake("scaled_by_sqrt", lambda ns: _dot_variance(ns) / math.sqrt(ns.d_k),
                         "Scaling a variable by c scales its variance by c², not by c: divide by (√d_k)² = d_k."),
                 Mistake("scaled_twice", lambda ns: _dot_variance(ns) / ns.d_k ** 2,
                         "You divided the variance by d_k²; scaling by 1/√d_k divides it by d_k once."),
                 Mistake("std", lambda ns: math.sqrt(_dot_variance(ns) / ns.d_k),
                         "That is a standard deviation; give the variance."),
                 Mistake("unscaled", lambda ns: _dot_variance(ns),
                         "That is Var(q·k) before scaling. Dividing every dot product by √d_k changes its variance too: "
                         "Var(c ξ) = c² Var(ξ)."),
                 Mistake("always_one", lambda ns: 1.0,
                         "The scaled variance is σ_q² σ_k², which is 1 only when that product is 1 (for example when every "
                         "entry has variance 1). Here it is not: work it out from Var(q·k) and Var(c ξ) = c² Var(ξ)."),
             ]),
        Part("simulated", _dot_variance, what="your simulated variance of q·k, a number", rtol=B05_SIM_RTOL,
             atol=0.0, praise=f"Your simulation agrees with the formula (within {B05_SIM_RTOL:.0%}).",
             mistakes=[
                 Mistake("variance_as_scale", lambda ns: float(ns.d_k * ns.var_q ** 2 * ns.var_k ** 2),
                         "Your simulation gives the variance of q·k for keys whose standard deviation is σ_k² "
                         "rather than σ_k: NumPy's normal(loc, scale) takes the standard deviation as its scale, "
                         "the square root of the variance the problem gives."),
                 Mistake("std", lambda ns: math.sqrt(_dot_variance(ns)),
                         "Your simulation gives the standard deviation (np.std); the variance is np.var."),
                 Mistake("scaled", lambda ns: _dot_variance(ns) / ns.d_k,
                         "Your simulation gives σ_q² σ_k²: the variance of the scaled dot product, or of a single "
                         "product q_a k_a. Here we want the raw q·k: sum the d_k products of each pair, "
                         "(q * k).sum(axis=1), with no 1/√d_k, then take the variance over the pairs."),
             ]),
    ]


_VARIANCE_HINTS = (
    "q·k = Σ_a q_a k_a, a sum over the d_k coordinates a. For independent mean-0 factors, Var(q_a k_a) = E[q_a²] E[k_a²] = σ_q² σ_k².",
    "The d_k products are independent, so their variances add: Var(q·k) = d_k σ_q² σ_k².",
    "Var(c ξ) = c² Var(ξ). With c = 1/√d_k, c² = 1/d_k.",
    "To simulate: rng = np.random.default_rng(0); q = rng.normal(0, np.sqrt(var_q), size=(100_000, d_k)) (NumPy's "
    "scale is the standard deviation, σ_q = √var_q); the same for k with np.sqrt(var_k); then "
    "np.var((q * k).sum(axis=1)).",
)


def b05_data(rng=None) -> dict:
    """Queries with i.i.d. N(0, 1) entries, keys with i.i.d. N(0, 4) entries (standard deviation 2), d_k = 16."""
    return {"d_k": 16, "var_q": 1.0, "var_k": 4.0}


B05 = register(Item(
    id="B05", title="The variance of a dot product, before and after scaling", page="exercises/b05-variance",
    data=b05_data, parts=_variance_parts(), hints=_VARIANCE_HINTS,
))
