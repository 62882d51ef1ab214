"""Problems II.3.B01–B05 and variants II.3.V01–V04.

Every expected answer is computed by :mod:`attn` from the item's data; nothing
numeric is stored except the given matrices of the fixed problems.
"""
from __future__ import annotations

import math

import numpy as np

import attn

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


def score_mistakes(ns_dk: str = "d_k") -> list[Mistake]:
    return [
        Mistake("forgot_scale", lambda ns: _raw(ns),
                "These are the raw dot products Q Kᵀ. Scaled dot-product attention divides every score by √d_k."),
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
                "These are the softmax of the unscaled Q Kᵀ. Divide the scores by √d_k before the softmax."),
        Mistake("divided_by_dk", lambda ns: _sm(ns, _raw(ns) / ns.Q.shape[1]),
                "These come from scores divided by d_k. The scale is 1/√d_k, the square root of the key width."),
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
                "These come from unscaled scores. Divide Q Kᵀ by √d_k before the softmax."),
        Mistake("divided_by_dk", lambda ns: _sm(ns, _raw(ns) / ns.Q.shape[1]) @ ns.V,
                "These come from scores divided by d_k. The scale is 1/√d_k."),
        Mistake("scores_times_v", lambda ns: np.where(getattr(ns, "mask", True), S(ns), 0.0) @ ns.V,
                "You multiplied the scores by V. Turn the scores into weights with a softmax first."),
    ]


# ----------------------------------------------------------------------------- B01 / V01

_THREE_HINTS = (
    "Scores first: S = Q Kᵀ / √d_k. Entry S[i, j] is the dot product of query row i with key row j, "
    "divided by √d_k. Here d_k = 4, so √d_k = 2.",
    "Weights: take each row of S on its own. Exponentiate its three entries and divide each by their sum. "
    "Each row of weights then sums to 1.",
    "Output: row i is weights[i, 0] · V[0] + weights[i, 1] · V[1] + weights[i, 2] · V[2], "
    "that is weights @ V, of shape (T_q, d_v).",
    "A row whose scores are all equal gets equal weights, 1/3 each, whatever the common score is.",
)


def _three_parts() -> list[Part]:
    return [
        Part("scores", lambda ns: attn.scores(ns.Q, ns.K), what="the score matrix S (T_q × T_k)",
             decimals=2, mistakes=score_mistakes()),
        Part("weights", lambda ns: attn.attention(ns.Q, ns.K, ns.V).weights,
             what="the weight matrix (T_q × T_k)", decimals=2, rows_sum_to_one=True,
             mistakes=weight_mistakes(), praise="Every row sums to 1, as it must."),
        Part("output", lambda ns: attn.attention(ns.Q, ns.K, ns.V).output,
             what="the output (T_q × d_v)", decimals=2, mistakes=output_mistakes(),
             praise="Each output row is a weighted average of the value rows."),
    ]


def b01_data(rng=None) -> dict:
    """Three tokens, d_k = 4 (so √d_k = 2), d_v = 2; small integers."""
    Q = _a([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]])  # (T_q, d_k) = (3, 4)
    K = _a([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]])  # (T_k, d_k) = (3, 4)
    V = _a([[1, 0], [0, 2], [2, 1]])  # (T_k, d_v) = (3, 2)
    return {"Q": Q, "K": K, "V": V}


B01 = register(Item(
    id="B01", title="Attention on three tokens, by hand", page="exercises/b01-three-tokens",
    data=b01_data, parts=_three_parts(), hints=_THREE_HINTS,
))
