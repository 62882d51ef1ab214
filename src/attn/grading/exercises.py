"""Exercises II.3.E01–E10: implement, verify, choose, count, simulate, tune, split, repair.

Every expected answer and every reference function comes from :mod:`attn`;
only the givens (small matrices, a permutation, a rule's parameters) are
written here. Function parts are run on several test cases, including logits
of ±1e4 (a softmax that does not subtract the maximum overflows there) and
float32 inputs. Each item's page is ``exercises/eNN-*.md``; the answer names
are distinct across E01–E10, so the pages can be run one after another in one
kernel (the batch grader's tests do).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

import attn

from .items import Item, Mistake, Part, register


def exercise(number: int, slug: str, title: str, **fields) -> Item:
    """Exercise E<number>, registered: its page is ``exercises/e<number>-<slug>``; ``fields`` are the
    :class:`Item`'s others (``data``, ``parts``, ``hints``)."""
    item_id = f"E{number:02d}"
    return register(Item(id=item_id, title=title, page=f"exercises/{item_id.lower()}-{slug}", kind="exercise", **fields))


def _a(rows, dtype=np.float64) -> np.ndarray:
    return np.array(rows, dtype=dtype)


# ----------------------------------------------------------------------------- wrong softmaxes (E01, E10)

def _softmax_unstable(x, tau=1.0, axis=-1):
    z = np.exp(np.asarray(x, dtype=np.float64) / tau)  # overflows to inf for large logits
    return z / z.sum(axis=axis, keepdims=True)


def _softmax_axis0(x, tau=1.0):
    x = np.asarray(x, dtype=np.float64)
    return attn.softmax(x, tau=tau, axis=0)


def _softmax_global(x, tau=1.0):
    x = np.asarray(x, dtype=np.float64) / tau
    z = np.exp(x - x.max())
    return z / z.sum()


def _softmax_global_max(x, tau=1.0):
    x = np.asarray(x, dtype=np.float64) / tau
    z = np.exp(x - x.max())  # the maximum of the whole array, not of each row
    return z / z.sum(axis=-1, keepdims=True)


def _softmax_times_tau(x, tau=1.0):
    return attn.softmax(np.asarray(x, dtype=np.float64) * tau)


def _softmax_no_tau(x, tau=1.0):
    return attn.softmax(x)


def _softmax_no_exp(x, tau=1.0):
    x = np.asarray(x, dtype=np.float64) / tau
    return x / x.sum(axis=-1, keepdims=True)


def _softmax_negated(x, tau=1.0):
    return attn.softmax(-np.asarray(x, dtype=np.float64), tau=tau)


# ----------------------------------------------------------------------------- E01 softmax

def e01_cases(ns) -> list:
    return [
        (_a([1.0, 2.0, 3.0]),),
        (_a([1.0, 2.0, 3.0]), 0.5),
        (_a([[1.0, 0.0, -1.0], [2.0, 2.0, 2.0]]),),  # a matrix: one softmax per row
        (_a([[0.5, 1.5], [3.0, -1.0], [0.0, 0.0]]), 2.0),
        (_a([1e4, -1e4, 0.0]),),  # large logits: exp(1e4) overflows unless the maximum is subtracted
        (_a([[1e4, 1e4 - 1.0], [-1e4, -1e4 + 2.0]]),),
        (_a([[1.0, 2.0, 3.0]], dtype=np.float32), 0.5),
    ]


E01 = exercise(1, "softmax", "Implement the softmax, stably, with a temperature",
    data=lambda rng: {},
    parts=[Part(
        "softmax", lambda ns: (lambda x, tau=1.0: attn.softmax(x, tau=tau, axis=-1)), kind="function",
        what="softmax(x, tau), the shape of x", cases=e01_cases,
        praise="Your softmax survives logits of ±1e4 and works on every row of a matrix.",
        mistakes=[
            Mistake("unstable", lambda ns: _softmax_unstable,
                    "Your softmax gives NaN at large logits: exp(1e4) overflows to inf, and inf/inf is NaN. "
                    "Subtract each row's maximum before exponentiating; the softmax does not change."),
            Mistake("columns", lambda ns: _softmax_axis0,
                    "On a matrix your weights sum to 1 down each column. Normalise along the last axis "
                    "(axis=-1, keepdims=True): one softmax per row."),
            Mistake("global", lambda ns: _softmax_global,
                    "On a matrix you normalised over all the entries at once. Each row is its own softmax: "
                    "use axis=-1 with keepdims=True in the max and the sum."),
            Mistake("global_max", lambda ns: _softmax_global_max,
                    "You subtracted the largest logit of the whole array, not of each row: a row far below it "
                    "underflows to exp(…) = 0 in every entry, and 0/0 is NaN. Subtract each row's own maximum, "
                    "x.max(axis=-1, keepdims=True)."),
            Mistake("times_tau", lambda ns: _softmax_times_tau,
                    "You multiplied by τ. The temperature divides: softmax(x / τ), so a small τ sharpens."),
            Mistake("no_tau", lambda ns: _softmax_no_tau,
                    "Your function ignores tau. Divide the logits by tau before exponentiating."),
            Mistake("no_exp", lambda ns: _softmax_no_exp,
                    "You divided the logits by their sum without exponentiating: exp first, then divide "
                    "by the sum of the exponentials."),
            Mistake("sign", lambda ns: _softmax_negated,
                    "The weights favour the smallest logit: a minus sign crept in. exp(x), not exp(-x)."),
        ],
    )],
    hints=(
        "softmax(x)_i = exp(x_i) / Σ_j exp(x_j), along the last axis. Start with np.exp and .sum(axis=-1, keepdims=True).",
        "The temperature divides the logits first: use z = x / tau.",
        "Stability: subtracting the same number from every logit of a row does not change its softmax. Subtract "
        "the row maximum, z - z.max(axis=-1, keepdims=True): the largest exponent becomes 0, so the largest "
        "exponential is exp(0) = 1 and nothing overflows.",
        "keepdims=True keeps the reduced axis, so a (2, 3) matrix minus its (2, 1) maxima broadcasts row by row.",
    ),
)


# ----------------------------------------------------------------------------- E02 attention with a mask

def _attn_variant(scale="sqrt", axis=-1, kt=True, transpose_w=False, mask_mode="inf", shift=True):
    """A family of attention functions, right or wrong in one respect each."""
    def f(Q, K, V, mask=None):
        Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
        d_k = Q.shape[-1]
        S = Q @ (K.T if kt else K)  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
        S = S / {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": d_k}[scale]
        if mask is not None and mask_mode == "ignore":
            mask = None  # the mask argument is accepted and never used
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask_mode == "inf":
                S = np.where(mask, S, -np.inf)
            elif mask_mode == "polarity":
                S = np.where(mask, -np.inf, S)
            elif mask_mode == "zero":
                S = np.where(mask, S, 0.0)
        if shift:
            S = S - S.max(axis=axis, keepdims=True)
        W = np.exp(S)
        W = W / W.sum(axis=axis, keepdims=True)
        if mask is not None and mask_mode == "after":
            W = np.where(mask, W, 0.0)
        return (W.T if transpose_w else W) @ V
    return f


def e02_cases(ns) -> list:
    rng = np.random.default_rng(2)
    causal = attn.causal_mask(4)
    cross = _a([[1, 1, 0], [1, 1, 1]]).astype(bool)
    return [
        (ns.Q, ns.K, ns.V),  # T_q = T_k = d_k = 3, no mask
        (ns.Q, ns.K, ns.V, ns.mask),  # the page's mask
        (rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3)), causal),
        (rng.normal(size=(2, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2)), cross),  # cross-attention
        (100 * rng.normal(size=(3, 8)), 100 * rng.normal(size=(3, 8)), rng.normal(size=(3, 2))),  # large scores
        (ns.Q.astype(np.float32), ns.K.astype(np.float32), ns.V.astype(np.float32), ns.mask),
    ]


def e02_data(rng=None) -> dict:
    Q = _a([[1, 0, 1], [0, 2, 0], [1, 1, 1]])  # (T_q, d_k) = (3, 3)
    K = _a([[1, 1, 0], [0, 0, 2], [2, 0, 1]])  # (T_k, d_k) = (3, 3)
    V = _a([[1, 0], [0, 2], [2, 1]])  # (T_k, d_v) = (3, 2)
    mask = np.array([[True, False, False], [True, True, False], [True, True, True]])  # causal
    return {"Q": Q, "K": K, "V": V, "mask": mask}


E02 = exercise(2, "attention", "Implement scaled dot-product attention with a mask",
    data=e02_data,
    parts=[Part(
        "scaled_dot_product_attention",
        lambda ns: (lambda Q, K, V, mask=None: attn.attention(Q, K, V, mask=mask).output),
        kind="function", what="the output (T_q, d_v)", cases=e02_cases,
        praise="Scale, mask, softmax along rows, then weights @ V: eq. (1) of Vaswani et al., with the −∞ masking of their §3.2.3.",
        mistakes=[
            Mistake("forgot_scale", lambda ns: _attn_variant(scale="none"),
                    "Your output comes from the raw dot products Q Kᵀ. Divide them by √d_k before the softmax."),
            Mistake("divided_by_dk", lambda ns: _attn_variant(scale="dk"),
                    "You divided the dot products Q Kᵀ by d_k. The scale is 1/√d_k: np.sqrt(d_k)."),
            Mistake("columns", lambda ns: _attn_variant(axis=0),
                    "Your softmax normalises down the columns. Each query's weights over the keys, one row, sum to 1: "
                    "axis=-1."),
            Mistake("k_not_kt", lambda ns: _attn_variant(kt=False),
                    "You multiplied Q by K, not by Kᵀ. With the chapter's rows (Q is T_q × d_k, K is T_k × d_k) the "
                    "scores are Q @ K.T, of shape (T_q, T_k)."),
            Mistake("weights_t", lambda ns: _attn_variant(transpose_w=True),
                    "You multiplied the transposed weights by V. The output is weights @ V: row i mixes the value "
                    "rows with query i's weights."),
            Mistake("no_mask", lambda ns: _attn_variant(mask_mode="ignore"),
                    "Your output is the same with and without the mask: the mask is never applied. Apply it to "
                    "the scores before the softmax, S = np.where(mask, S, -np.inf), when mask is not None."),
            Mistake("mask_polarity", lambda ns: _attn_variant(mask_mode="polarity"),
                    "Your mask has the wrong polarity: in this book True means \"may read\". Keep the score where the "
                    "mask is True and put -∞ where it is False: np.where(mask, S, -np.inf)."),
            Mistake("mask_zero", lambda ns: _attn_variant(mask_mode="zero"),
                    "You set the masked scores to 0, but exp(0) = 1 still gives them weight. Use -np.inf: exp(-∞) = 0."),
            Mistake("mask_after", lambda ns: _attn_variant(mask_mode="after"),
                    "You masked after the softmax, so the rows no longer sum to 1. Mask the scores first, then "
                    "take the softmax."),
            Mistake("unstable", lambda ns: _attn_variant(shift=False),
                    "Your function gives NaN when the scores are large: exp overflows to inf, and inf/inf is NaN. "
                    "Subtract each row's maximum score before exponentiating."),
        ],
    )],
    hints=(
        "Three lines: S = Q @ K.T / np.sqrt(d_k) with d_k = Q.shape[-1]; the softmax of each row of S; then weights @ V.",
        "The mask: True means \"may read\". Before the softmax, S = np.where(mask, S, -np.inf), so masked keys get "
        "weight exp(-∞) = 0. Skip this line when mask is None.",
        "Your softmax from E01 works here unchanged, if it normalises along axis=-1 and subtracts the row maximum.",
        "Shapes: (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k); (T_q, T_k) @ (T_k, d_v) -> (T_q, d_v).",
    ),
)


# ----------------------------------------------------------------------------- E03 softmax Jacobian

def _jac(x, tau=1.0):
    return attn.softmax_jacobian(attn.softmax(x, tau=tau), tau=tau)


def _jac_wrong(kind):
    def f(x, tau=1.0):
        w = attn.softmax(np.asarray(x, dtype=np.float64), tau=tau)
        D, O = np.diag(w), np.outer(w, w)
        return {"sign": (O - D) / tau, "diag_only": D / tau, "no_off_diagonal": (D - np.diag(w * w)) / tau,
                "times_tau": (D - O) * tau, "no_tau": D - O, "outer_only": -O / tau,
                "exp": (np.diag(np.exp(x)) - np.outer(np.exp(x), np.exp(x))) / tau}[kind]
    return f


def e03_cases(ns) -> list:
    return [
        (_a([1.0, 2.0, 3.0]),),
        (_a([0.0, 0.0]),),
        (_a([2.0, -1.0, 0.5, 0.0]), 0.5),
        (_a([1e4, 0.0, -1e4]),),
        (_a([0.3, 0.1, 0.2], dtype=np.float32), 2.0),
    ]


E03 = exercise(3, "jacobian", "The softmax Jacobian",
    data=lambda rng: {},
    parts=[Part(
        "softmax_jacobian", lambda ns: _jac, kind="function", what="the Jacobian, an n × n matrix", cases=e03_cases,
        praise="J = (diag(w) − w wᵀ)/τ: symmetric, and every row sums to 0.",
        mistakes=[
            Mistake("sign", lambda ns: _jac_wrong("sign"),
                    "Every entry has the wrong sign: ∂w_i/∂x_i = w_i(1 − w_i)/τ is positive, so J = (diag(w) − w wᵀ)/τ."),
            Mistake("diag_only", lambda ns: _jac_wrong("diag_only"),
                    "You have only diag(w). Every w_i depends on every x_j through the sum in the denominator: "
                    "subtract w wᵀ."),
            Mistake("no_off_diagonal", lambda ns: _jac_wrong("no_off_diagonal"),
                    "Your diagonal is right but the off-diagonal entries are zero. For i ≠ j, ∂w_i/∂x_j = −w_i w_j/τ."),
            Mistake("outer_only", lambda ns: _jac_wrong("outer_only"),
                    "You have −w wᵀ but not the diag(w) term from differentiating the numerator exp(x_i/τ)."),
            Mistake("times_tau", lambda ns: _jac_wrong("times_tau"),
                    "You multiplied by τ. The chain rule through x/τ gives a factor 1/τ."),
            Mistake("no_tau", lambda ns: _jac_wrong("no_tau"),
                    "Your Jacobian ignores tau. Differentiating exp(x_j/τ) brings out a factor 1/τ."),
            Mistake("exp", lambda ns: _jac_wrong("exp"),
                    "You used exp(x) where the softmax weights w belong. Compute w = softmax(x / τ) first "
                    "(stably), then J = (diag(w) − w wᵀ)/τ."),
        ],
    )],
    hints=(
        "Write w_i = u_i / Z with u_i = exp(x_i/τ) and Z = Σ_l u_l. Differentiate with the quotient rule: "
        "∂w_i/∂x_j has one term from the numerator (only when i = j) and one from the sum Z.",
        "The result is ∂w_i/∂x_j = (δ_ij w_i − w_i w_j)/τ, where δ_ij is 1 if i = j and 0 otherwise. In matrix "
        "form: (np.diag(w) - np.outer(w, w)) / tau.",
        "Compute w with a stable softmax (your E01 function, or attn.softmax); at x = (1e4, 0, −1e4) the Jacobian is "
        "all zeros, not NaN.",
    ),
)


# ----------------------------------------------------------------------------- E04 permutation equivariance

def _self_out(X):
    return attn.attention(X, X, X).output


def e04_data(rng=None) -> dict:
    X = _a([[1, 0], [0, 2], [1, 1], [2, 0]])  # (T, d) = (4, 2): queries = keys = values = X
    perm = [2, 0, 3, 1]  # the new sequence is X[perm]: new token i is old token perm[i]
    return {"X": X, "perm": perm}


def _perm_parts() -> list[Part]:
    def P(ns):
        return np.asarray(ns.perm)

    def O(ns):
        return _self_out(ns.X)

    return [
        Part("permuted_output", lambda ns: _self_out(ns.X[P(ns)]), what="the output for X[perm], (T, d_model)", decimals=2,
             praise="It is O[perm]: the outputs move with the tokens (equivariance).",
             mistakes=[
                 Mistake("unpermuted", O,
                         "That is the output for the original order. When the tokens move, their outputs move "
                         "with them: recompute with X[perm] (or permute the rows of O)."),
                 Mistake("inverse_perm", lambda ns: O(ns)[np.argsort(P(ns))],
                         "You applied the inverse permutation. The new row i is the old row perm[i]: O[perm], "
                         "not O[np.argsort(perm)]."),
                 Mistake("values_not_permuted", lambda ns: attn.attention(ns.X[P(ns)], ns.X[P(ns)], ns.X).output,
                         "Your queries and keys moved but the values did not. All three come from the same tokens."),
             ]),
        Part("kv_permuted_output", lambda ns: attn.attention(ns.X, ns.X[P(ns)], ns.X[P(ns)]).output,
             what="the output when only the keys and values are permuted, (T, d_model)", decimals=2,
             praise="It is O itself: permuting keys and values together changes nothing (invariance).",
             mistakes=[
                 Mistake("permuted_rows", lambda ns: O(ns)[P(ns)],
                         "The queries did not move, so the output rows do not move either. Only the order of the "
                         "terms in each weighted sum changed."),
                 Mistake("keys_only", lambda ns: attn.attention(ns.X, ns.X[P(ns)], ns.X).output,
                         "You permuted the keys but not the values: key j and value j must move together."),
                 Mistake("values_only", lambda ns: attn.attention(ns.X, ns.X, ns.X[P(ns)]).output,
                         "You permuted the values but not the keys: key j and value j must move together."),
             ]),
    ]


E04 = exercise(4, "permutation", "Permutation equivariance, checked",
    data=e04_data, parts=_perm_parts(),
    hints=(
        "Self-attention here uses X as queries, keys and values: O = attn.attention(X, X, X).output.",
        "X[perm] is the sequence in the new order: its row i is the old row perm[i]. Run attention on it.",
        "For the second answer the queries stay X; only the keys and the values become X[perm], both of them.",
        "Compare your two answers with O[perm] and O (np.allclose): which is which, and why?",
    ),
)


# ----------------------------------------------------------------------------- E05 choose the mask

def _window(T, w):
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return (j <= i) & (j > i - w)


def e05_data(rng=None) -> dict:
    return {"T": 5, "window": 3, "n_real": 3}


_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
_E05 = SimpleNamespace(**e05_data())  # the messages below quote these numbers
_W1 = _E05.window - 1  # how far back the window reaches
_E05_WINDOW = f"i − {_W1} ≤ j ≤ i"
_E05_BEFORE = "the token before it" if _W1 == 1 else f"the {_WORDS.get(_W1, _W1)} tokens before it"
# what a token reads, true at the start of the sequence too (token 0 has no token before it)
_E05_READS = (f"itself and up to {_WORDS.get(_W1, _W1)} tokens before it (token 0 reads only itself)" if _W1 > 1
              else "itself and the token before it, if there is one")
_E05_LAST = _E05.T - 1
_E05_REAL = ", ".join(str(j) for j in range(_E05.n_real))


def _mask_parts() -> list[Part]:
    def band(ns, lo, hi):  # lo <= i - j <= hi
        i, j = np.arange(ns.T)[:, None], np.arange(ns.T)[None, :]
        return (i - j >= lo) & (i - j <= hi)

    def pad(ns):
        return np.broadcast_to(np.arange(ns.T)[None, :] < ns.n_real, (ns.T, ns.T)).copy()

    return [
        Part("window_mask", lambda ns: attn.causal_mask(ns.T) & _window(ns.T, ns.window), kind="mask",
             what="the window mask (T × T)", praise=f"Each token reads {_E05_READS}.",
             mistakes=[
                 Mistake("polarity", lambda ns: ~(attn.causal_mask(ns.T) & _window(ns.T, ns.window)),
                         "The polarity is reversed: True means \"may read\". Put True where the query may read the key."),
                 Mistake("causal_only", lambda ns: attn.causal_mask(ns.T),
                         "That is the plain causal mask: every token reads all of its past. The rule allows only the "
                         f"last {_E05.window} positions, itself included ({_E05_WINDOW})."),
                 Mistake("not_causal", lambda ns: band(ns, -(ns.window - 1), ns.window - 1),
                         f"Your window reaches into the future too (|i − j| ≤ {_W1}). The rule reads only backwards: "
                         "j ≤ i."),
                 Mistake("shifted_back", lambda ns: band(ns, 1, ns.window),
                         "Shifted by one: your window leaves out the token itself and reaches one step further back. "
                         f"The rule is {_E05_WINDOW}, the diagonal included."),
                 Mistake("too_wide", lambda ns: band(ns, 0, ns.window),
                         f"One position too wide: your window holds {_E05.window + 1} positions. Itself and "
                         f"{_E05_BEFORE} make {_E05.window} ({_E05_WINDOW})."),
                 Mistake("too_narrow", lambda ns: band(ns, 0, ns.window - 2),
                         f"Your window holds {_E05.window - 1} positions; the rule asks for {_E05.window}: the token "
                         f"itself and {_E05_BEFORE} (fewer at the start of the sequence)."),
                 Mistake("transposed", lambda ns: (attn.causal_mask(ns.T) & _window(ns.T, ns.window)).T,
                         "That is the transpose: rows are queries (the reader), columns are keys (the read). "
                         "Row i has True in columns "
                         f"{', '.join(f'i − {k}' for k in range(_W1, 0, -1))} and i."),
             ]),
        Part("pad_mask", pad, kind="mask", what="the padding mask (T × T)",
             praise="Every token, padding included, reads the real tokens and no padding.",
             mistakes=[
                 Mistake("polarity", lambda ns: ~pad(ns),
                         "The polarity is reversed: True means \"may read\". The real tokens are the ones to read."),
                 Mistake("rows", lambda ns: pad(ns).T,
                         "You masked rows (the padding queries) instead of columns (the padding keys). What must not "
                         "be read is a key: column j is False when token j is padding."),
                 Mistake("both", lambda ns: pad(ns) & pad(ns).T,
                         "You also blocked the padding queries' rows, leaving them nothing to read: their softmax "
                         "would be 0/0. Only the keys (columns) of padding are masked; a padding query's output is "
                         "simply ignored later."),
                 Mistake("shifted", lambda ns: np.broadcast_to(np.arange(ns.T)[None, :] < ns.n_real - 1,
                                                                (ns.T, ns.T)).copy(),
                         f"Shifted by one: {_E05.n_real} tokens are real (positions {_E05_REAL}), so "
                         f"{_E05.n_real} columns are True."),
                 Mistake("causal", lambda ns: attn.causal_mask(ns.T) & pad(ns),
                         "You added a causal rule, but this encoder reads in both directions: only padding is masked."),
             ]),
    ]


E05 = exercise(5, "masks", "Choose the mask for a rule",
    data=e05_data, parts=_mask_parts(),
    hints=(
        "A mask is a T × T array of booleans: row i is the query (the reader), column j the key. True means "
        "\"query i may read key j\".",
        "Index grids help: i = np.arange(T)[:, None], j = np.arange(T)[None, :]. Then a rule is a comparison, "
        "for example j <= i for the causal mask.",
        f"The window: j ≤ i and j ≥ i − {_W1}. Check row 0 (only column 0), row {_W1} (columns "
        f"{', '.join(str(j) for j in range(_W1 + 1))}) and row {_E05_LAST} (columns "
        f"{', '.join(str(j) for j in range(_E05_LAST - _W1, _E05_LAST + 1))}).",
        f"Padding: only the keys are masked, so the mask depends on j alone, the same in every row. With the grids, "
        f"j < {_E05.n_real} is one row, of shape (1, T): repeat it in all {_E05.T} rows, "
        f"np.repeat(j < {_E05.n_real}, {_E05.T}, axis=0), for the T × T array the question asks for.",
    ),
)


# ----------------------------------------------------------------------------- E06 FLOPs and bytes

def e06_data(rng=None) -> dict:
    return {"T": 4096, "d_k": 64, "dtype": "float32"}


_MIXED_LOGS = ("Your two axes use different logarithms (log₂ on one, log₁₀ on the other), which scales the slope by "
               "log 2 / log 10 or its inverse. Take the same log of both: np.log(variances) against np.log(d_ks).")


def _three_figures(x: float) -> float:
    """Half a unit in the third significant figure of ``x``: how far a count given to three significant figures,
    correctly rounded, may be from it (2,147,483,648 -> 5e6: 2.15e9 and 2.147e9 pass, the truncated 2.14e9 does not)."""
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(x))) - 2)


def _truncated(x: float, figures: int = 3) -> float:
    """``x`` cut off (not rounded) after ``figures`` significant figures: 2,147,483,648 -> 2.14e9."""
    unit = 10.0 ** (math.floor(math.log10(abs(x))) - figures + 1)
    return math.trunc(x / unit) * unit


_TRUNCATED = ("That is the count cut off after three significant figures, not rounded: the next digit is 5 or more, "
              "so the third figure goes up. Give the exact count, or round it.")


def _e06_parts() -> list[Part]:
    def flops(ns):
        return attn.score_flops(ns.T, ns.T, ns.d_k, ns.d_k).scores

    def nbytes(ns):
        return attn.score_matrix_bytes(ns.T, ns.T, ns.dtype)

    return [
        Part("flops", flops, what="the operation count, a number", rtol=0.0,
             atol=_three_figures(flops(SimpleNamespace(**e06_data()))),
             praise="2·T²·d_k: one multiplication and one addition per term, d_k terms per score, T² scores.",
             mistakes=[
                 Mistake("mults_only", lambda ns: flops(ns) / 2,
                         "You counted the multiplications only. Each of the d_k terms of a dot product also needs "
                         "an addition: 2·d_k operations per score."),
                 Mistake("one_add_fewer", lambda ns: (2 * ns.d_k - 1) * ns.T ** 2,
                         "You counted d_k − 1 additions per dot product, exact for adding up d_k terms. This page "
                         "counts one multiplication and one addition for each term (a multiply-add), so a score "
                         "costs 2·d_k operations."),
                 Mistake("one_row", lambda ns: 2 * ns.T * ns.d_k,
                         "That is one query's row of scores. There are T queries, so T² scores in all."),
                 Mistake("d_k_squared", lambda ns: 2 * ns.T * ns.d_k ** 2,
                         "That grows with d_k², as for a d_k × d_k product. The score matrix is T × T, each entry a "
                         "d_k-term dot product: 2·T²·d_k."),
                 Mistake("rounded", lambda ns: float(f"{flops(ns):.2g}"),
                         "Close, but rounded too far: give the exact count, or at least three significant figures."),
                 # the truncated count is typed as it is (2.14e9): a band a tenth of the part's, so a count
                 # just outside the part's tolerance is not told it was truncated
                 Mistake("truncated", lambda ns: _truncated(flops(ns)), _TRUNCATED,
                         atol=_three_figures(flops(SimpleNamespace(**e06_data()))) / 10),
             ]),
        Part("score_bytes", nbytes, what="the bytes of S, a number", rtol=0.0,
             atol=_three_figures(nbytes(SimpleNamespace(**e06_data()))),
             praise="T² entries of 4 bytes each: memory grows as the square of the sequence length.",
             mistakes=[
                 Mistake("float64", lambda ns: attn.score_matrix_bytes(ns.T, ns.T, np.float64),
                         "That is for float64 (8 bytes an entry). A float32 entry takes 4 bytes."),
                 Mistake("bits", lambda ns: 8 * nbytes(ns),
                         "That is the count in bits. A float32 entry is 32 bits = 4 bytes."),
                 Mistake("entries", lambda ns: ns.T ** 2,
                         "That is the number of entries. Multiply by the bytes per entry (4 for float32)."),
                 Mistake("q_size", lambda ns: ns.T * ns.d_k * 4,
                         "That is the size of Q (T × d_k). The score matrix is T × T: it does not depend on d_k."),
                 Mistake("mib", lambda ns: nbytes(ns) / 2 ** 20,
                         "That looks like the size in MiB. Give it in bytes (1 MiB = 2²⁰ bytes)."),
                 Mistake("rounded", lambda ns: float(f"{nbytes(ns):.2g}"),
                         "Close, but rounded too far: give the exact count, or at least three significant figures."),
             ]),
        Part("growth", lambda ns: nbytes(SimpleNamespace(T=2 * ns.T, dtype=ns.dtype)) / nbytes(ns),
             what="a factor, a number", atol=1e-6,
             praise="Doubling T multiplies the score matrix by 4: quadratic cost (Proposition 5).",
             mistakes=[
                 Mistake("linear", lambda ns: 2.0,
                         "Doubling T doubles the rows and doubles the columns of S: the entries grow by 2 · 2."),
                 Mistake("cubic", lambda ns: 8.0,
                         "The score matrix has two axes of length T, not three: the factor is 2²."),
             ]),
    ]


E06 = exercise(6, "cost", "The FLOPs and bytes of the score matrix",
    data=e06_data, parts=_e06_parts(),
    hints=(
        "The raw dot products Q Kᵀ (before the 1/√d_k scale makes them scores) form a T × T matrix. Each entry "
        "is a dot product of two d_k-vectors: d_k multiplications and d_k additions.",
        "Operations: count the entries of S, count the operations one entry needs, and multiply the two.",
        "Bytes: how many numbers does S hold, and how many bytes does one float32 number take? Does d_k change "
        "the size of S?",
        "Doubling T: what happens to the number of rows of S, and to the number of columns? The bytes grow by "
        "both factors at once.",
    ),
)


# ----------------------------------------------------------------------------- E07 Var(q·k) by simulation

E07_DKS = (4, 16, 64, 256)
E07_SIGMA_K = 2.0  # keys' standard deviation: Var(q·k) = σ_k² d_k, so a fit without logs gives σ_k², not 1
E07_N = 20_000
E07_RTOL, E07_SLOPE_ATOL = 0.08, 0.1  # the checker's tolerances (quoted by the page and the hints)


def e07_data(rng=None) -> dict:
    return {"d_ks": E07_DKS, "n": E07_N, "sigma_k": E07_SIGMA_K}


def _dot_var(ns) -> np.ndarray:
    # q with standard-normal entries, k with entries of standard deviation σ_k: Var(q·k) = d_k σ_k² (Proposition 3)
    return np.asarray(ns.d_ks, dtype=np.float64) * 1.0 * ns.sigma_k ** 2


def _log_log_slope(ns, variances) -> np.ndarray:
    """The least-squares slope of log(variance) against log(d_k); broadcasts over leading axes of ``variances``."""
    x = np.log(np.asarray(ns.d_ks, dtype=np.float64))  # (n_d,)
    y = np.log(np.asarray(variances, dtype=np.float64))  # (..., n_d)
    xc = x - x.mean()
    return ((y - y.mean(axis=-1, keepdims=True)) * xc).sum(axis=-1) / (xc * xc).sum()


E07 = exercise(7, "variance", "Var(q·k) grows linearly with the head width: a simulation",
    data=e07_data,
    parts=[
        Part("variances", _dot_var, what="four sample variances, one per d_k", rtol=E07_RTOL, atol=0.0,
             praise="The variance tracks σ_k² d_k: a dot product of d_k independent terms.",
             mistakes=[
                 Mistake("std", lambda ns: np.sqrt(_dot_var(ns)),
                         "These are standard deviations (they grow like √d_k). The variance is the square: "
                         "np.var, or .std() ** 2."),
                 Mistake("scaled", lambda ns: np.full(len(ns.d_ks), ns.sigma_k ** 2),
                         "These are the variances after dividing by √d_k, all about σ_k². The exercise asks for the "
                         "raw q·k, before scaling."),
                 Mistake("divided_by_dk", lambda ns: _dot_var(ns) / np.asarray(ns.d_ks, dtype=np.float64) ** 2,
                         "These shrink like 1/d_k: the dot products were divided by d_k. Take np.var of the raw q·k."),
                 Mistake("unit_keys", lambda ns: np.asarray(ns.d_ks, dtype=np.float64),
                         "These are the variances for keys of standard deviation 1. The keys here have standard "
                         "deviation σ_k = sigma_k: multiply the standard normal draws by sigma_k."),
                 Mistake("variance_as_scale", lambda ns: np.asarray(ns.d_ks, dtype=np.float64) * ns.sigma_k ** 4,
                         "These are the variances for keys of standard deviation σ_k², not σ_k: scale the standard "
                         "normal draws by sigma_k itself (NumPy's scale is a standard deviation)."),
             ]),
        Part("slope", lambda ns: 1.0, what="the log-log slope, a number", atol=E07_SLOPE_ATOL,
             uses=("variances",), step=_log_log_slope,
             praise="Slope 1: Var(q·k) ∝ d_k, which is why the dot products are divided by √d_k.",
             mistakes=[
                 Mistake("std", lambda ns: 0.5,
                         "A slope of 1/2 is that of the standard deviation. Fit log(variance) against log(d_k)."),
                 Mistake("scaled", lambda ns: 0.0,
                         "A flat line is what the scaled scores give. Fit the raw variances."),
                 Mistake("divided_by_dk", lambda ns: -1.0,
                         "A negative slope: the variance falls with d_k in your fit. Check which is x (log d_k) and "
                         "which is y (log variance), and that the dot products were not divided by d_k."),
                 Mistake("mixed_logs", lambda ns: math.log(2) / math.log(10), _MIXED_LOGS),
                 Mistake("mixed_logs_inverse", lambda ns: math.log(10) / math.log(2), _MIXED_LOGS),
                 Mistake("no_logs", lambda ns: ns.sigma_k ** 2,
                         f"That is the slope of the variance against d_k itself (σ_k² = {E07_SIGMA_K ** 2:g} per unit "
                         "of d_k). The "
                         "question asks for the slope on log-log axes: fit np.log(variances) against np.log(d_ks)."),
             ]),
    ],
    hints=(
        "For one d_k: q = rng.standard_normal((n, d_k)) and k = sigma_k * rng.standard_normal((n, d_k)); the n dot "
        "products are (q * k).sum(axis=1).",
        f"np.var of those n numbers estimates Var(q·k). Repeat for each d_k in {E07_DKS}.",
        f"With n = {E07_N:,} the estimates wobble a little from one run to the next: the checker allows "
        f"{E07_RTOL:.0%} on each variance and {E07_SLOPE_ATOL:g} on the slope.",
        "The slope: the least-squares line (np.polyfit with degree 1) fitted to the logarithm of the variances "
        "against the logarithm of d_k; its first coefficient.",
    ),
)


# ----------------------------------------------------------------------------- E08 find τ

def _top_weight(s, tau) -> float:
    return float(attn.softmax(np.asarray(s, dtype=np.float64), tau=tau).max())


def _solve_tau(s, target, lo=1e-3, hi=1e3) -> float:
    """The τ at which the largest softmax weight equals ``target`` (bisection in log τ; it decreases in τ)."""
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _top_weight(s, mid) > target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def _tau_atol(s, target, weight_tol) -> float:
    """How far τ may move before the largest weight moves by ``weight_tol`` (from dw/dτ at the solution)."""
    t = _solve_tau(s, target)
    h = 1e-6 * t
    slope = abs(_top_weight(s, t + h) - _top_weight(s, t - h)) / (2 * h)
    return weight_tol / slope


E08_S2, E08_S4, E08_TARGET, E08_WTOL = (2.0, 0.0), (2.0, 1.0, 0.5, 0.0), 0.9, 0.005
# The closed-form slip e^(−Δ/τ) = 1 − w* gives τ = Δ / log(1/(1 − w*)), 0.04 from the right τ (the part allows
# 0.023): it is recognised only within this distance of its own value, which holds it rounded to two decimals
# (0.87 for 0.8686), so a near-right τ from an inaccurate bisection is not told it rearranged wrongly.
E08_SLIP_ATOL = 0.002
_D2 = f"{E08_S2[0] - E08_S2[1]:g}"  # the gap Δ of the two scores, as the messages quote it
_W = f"{E08_TARGET:g}"


E08 = exercise(8, "temperature", "Find the temperature for a target weight",
    data=lambda rng: {"s2": _a(E08_S2), "s4": _a(E08_S4), "target": E08_TARGET},
    parts=[
        Part("tau_two", lambda ns: _solve_tau(ns.s2, ns.target), what="τ, a number",
             atol=_tau_atol(E08_S2, E08_TARGET, E08_WTOL),
             praise="With two keys the largest weight is 1/(1 + exp(−Δ/τ)) for the gap Δ of the scores, so "
                    "the target weight w* needs τ = Δ / log(w*/(1 − w*)).",
             mistakes=[
                 Mistake("times_tau", lambda ns: 1.0 / _solve_tau(ns.s2, ns.target),
                         "That τ would be right if the temperature multiplied the scores. It divides: "
                         f"softmax(s / τ). Solve 1 / (1 + exp(−{_D2}/τ)) = {_W} for τ."),
                 Mistake("log_target", lambda ns: (ns.s2[0] - ns.s2[1]) / math.log(1.0 / (1.0 - ns.target)),
                         f"Close. This is the τ that exp(−{_D2}/τ) = 1 − {_W} gives: if that is how you rearranged, "
                         f"exp(−{_D2}/τ) is not 1 − {_W}. Rearrange 1 / (1 + exp(−{_D2}/τ)) = {_W} one step at a "
                         f"time: first 1 + exp(−{_D2}/τ) = 1/{_W}, then exp(−{_D2}/τ) on its own, then the "
                         "logarithm.", atol=E08_SLIP_ATOL),
             ]),
        Part("tau", lambda ns: _solve_tau(ns.s4, ns.target), what="τ, a number",
             atol=_tau_atol(E08_S4, E08_TARGET, E08_WTOL),
             praise=f"The largest weight falls as τ grows, so one bisection finds the τ that gives {_W}.",
             mistakes=[
                 Mistake("times_tau", lambda ns: 1.0 / _solve_tau(ns.s4, ns.target),
                         "That τ would be right if the temperature multiplied the scores. It divides: softmax(s / τ)."),
                 Mistake("two_keys_only", lambda ns: (ns.s4[0] - ns.s4[1]) / math.log(ns.target / (1 - ns.target)),
                         "That is the two-key formula for the top two scores; the other two keys take weight too, "
                         "so τ must be smaller. Solve numerically with all four scores (bisection)."),
             ]),
    ],
    hints=(
        f"Two keys with scores {E08_S2[0]:g} and {E08_S2[1]:g}: the largest weight is exp({_D2}/τ) / "
        f"(exp({_D2}/τ) + 1) = 1 / (1 + exp(−{_D2}/τ)).",
        f"Set that to {_W} and get exp(−{_D2}/τ) on its own first (it is a ratio of the two weights); then take "
        "logarithms and solve for τ.",
        "Four keys: no rearrangement as short as the two-key one gives τ, but the largest weight falls steadily "
        "as τ grows. Try τ = 0.1 and τ = 10, "
        f"then halve the interval (bisection) until the weight is {_W} to three decimals.",
        f"The checker looks at the weight your τ gives: within {E08_WTOL:g} of {_W} counts as right.",
    ),
)


# ----------------------------------------------------------------------------- E09 split heads

def e09_split_cases(ns) -> list:
    Q = np.arange(24, dtype=np.float64).reshape(4, 6)  # T = 4, h·d_k = 6 columns
    rng = np.random.default_rng(9)
    return [
        (Q, 2),  # h = 2, d_k = 3
        (Q, 3),  # h = 3, d_k = 2
        (rng.normal(size=(5, 8)), 4),
        (rng.normal(size=(3, 4)).astype(np.float32), 1),
    ]


def e09_merge_cases(ns) -> list:
    return [(attn.split_heads(*args),) for args in e09_split_cases(ns)]


E09 = exercise(9, "heads", "Split and merge heads",
    data=lambda rng: {},
    parts=[
        Part("split_heads", lambda ns: attn.split_heads, kind="function", what="the heads (h, T, d_k)",
             cases=e09_split_cases, praise="Head a (counting from 0) holds columns a·d_k … (a+1)·d_k − 1 of every token.",
             mistakes=[
                 Mistake("reshape_no_transpose", lambda ns: (lambda Q, h: np.asarray(Q).reshape(
                     h, Q.shape[0], Q.shape[1] // h)),
                         "The right shape, but tokens are mixed into the wrong heads: reshaping (T, h·d_k) straight "
                         "to (h, T, d_k) cuts the rows in reading order. Reshape to (T, h, d_k) first, then "
                         ".transpose(1, 0, 2)."),
                 Mistake("interleaved", lambda ns: (lambda Q, h: np.asarray(Q).reshape(
                     Q.shape[0], Q.shape[1] // h, h).transpose(2, 0, 1)),
                         "Your heads take every h-th column (interleaved). Head a is a contiguous block of d_k "
                         "columns: reshape to (T, h, d_k), not (T, d_k, h)."),
                 Mistake("no_transpose", lambda ns: (lambda Q, h: np.asarray(Q).reshape(
                     Q.shape[0], h, Q.shape[1] // h)),
                         "You reshaped to (T, h, d_k) but did not move the head axis first: .transpose(1, 0, 2) "
                         "gives (h, T, d_k)."),
             ]),
        Part("merge_heads", lambda ns: attn.merge_heads, kind="function", what="the merged matrix (T, h·d_k)",
             cases=e09_merge_cases, praise="merge_heads(split_heads(Q, h)) gives Q back.",
             mistakes=[
                 Mistake("reshape_no_transpose", lambda ns: (lambda heads: np.asarray(heads).reshape(
                     heads.shape[1], heads.shape[0] * heads.shape[2])),
                         "The right shape, but the entries are in the wrong places: move the token axis first "
                         "(.transpose(1, 0, 2) gives (T, h, d_k)), then reshape to (T, h·d_k)."),
                 Mistake("transpose_no_reshape", lambda ns: (lambda heads: np.asarray(heads).transpose(1, 0, 2)),
                         "Half way: you moved the token axis first, (T, h, d_k), but a reshape is missing. "
                         ".reshape(T, h·d_k) then puts each token's h heads side by side in one row."),
                 Mistake("stacked", lambda ns: (lambda heads: np.concatenate(list(np.asarray(heads)), axis=0)),
                         "You stacked the heads on top of each other (h·T rows). They go side by side: row t is "
                         "heads[0, t], …, heads[h − 1, t] one after another (np.concatenate of them)."),
             ]),
    ],
    hints=(
        "Head a of token t is Q[t, a*d_k:(a+1)*d_k], with d_k = Q.shape[1] // h (h must divide the columns).",
        "Q.reshape(T, h, d_k) cuts each row into h blocks: entry [t, a] is token t's block a.",
        "Then .transpose(1, 0, 2) puts the head axis first: (h, T, d_k). Reshaping straight to (h, T, d_k) "
        "mixes tokens.",
        "merge_heads undoes split_heads: undo its two steps in the reverse order. Which axis has to come first "
        "again before a reshape can put each token's heads side by side?",
    ),
)


# ----------------------------------------------------------------------------- E10 break it: the NaN

def e10_data(rng=None) -> dict:
    Q = _a([[1, 0], [0, 1], [1, 1], [2, 0]])  # (T, d_k) = (4, 2)
    K = _a([[0, 1], [1, 0], [1, 1], [0, 2]])
    V = _a([[1, 0], [0, 1], [1, 1], [2, 2]])  # (T, d_v)
    pad = np.array([False, True, True, True])  # token 0 is left padding
    mask = attn.causal_mask(4) & pad[None, :]  # causal AND not padding: query 0 can read nothing
    return {"Q": Q, "K": K, "V": V, "mask": mask}


_E10 = SimpleNamespace(**e10_data())
_E10_BOUND = math.ceil(float(np.abs(attn.scores(_E10.Q, _E10.K)).max()))  # every score is at most this in size


def _safe(Q, K, V, mask=None):
    return attn.attention(Q, K, V, mask=mask, empty_rows="zero").output


def _e10_wrong(kind):
    """The page's broken function ("as_given": no max shift, no care for empty rows) and half repairs, among them
    "no_keepdims": the empty rows found as a (T_q,) vector, which np.where broadcasts along the keys."""
    def f(Q, K, V, mask=None):
        Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
        S = Q @ K.T / math.sqrt(Q.shape[-1])  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
        if mask is not None:
            S = np.where(mask, S, -1e9 if kind == "big_negative" else -np.inf)
        empty = ~np.isfinite(S).any(axis=-1, keepdims=True)  # (T_q, 1): rows with no key to read
        if kind == "no_keepdims":
            # (T_q,): broadcast against (T_q, T_k) it selects keys (columns), not queries (rows)
            empty = ~np.asarray(mask, dtype=bool).any(axis=-1) if mask is not None else np.zeros(S.shape[0], bool)
            S = np.where(empty, 0.0, S)
        with np.errstate(all="ignore"):
            if kind in ("big_negative", "no_keepdims"):
                S = S - S.max(axis=-1, keepdims=True)
            W = np.exp(S)
            W = W / W.sum(axis=-1, keepdims=True)
        if kind in ("unstable", "no_keepdims"):
            W = np.where(empty, 0.0, W)
        if kind == "nan_to_num":
            return np.nan_to_num(W @ V)
        return W @ V
    return f


def e10_cases(ns) -> list:
    rng = np.random.default_rng(10)
    return [
        (ns.Q, ns.K, ns.V, ns.mask),  # the page's example: query 0 reads nothing
        (ns.Q, ns.K, ns.V),  # no mask: same as ordinary attention
        (300 * rng.normal(size=(3, 4)), 300 * rng.normal(size=(3, 4)), rng.normal(size=(3, 2)),
         np.array([[False, False, False], [True, True, False], [True, True, True]])),  # large scores, an empty row
        (ns.Q.astype(np.float32), ns.K.astype(np.float32), ns.V.astype(np.float32), ns.mask),
    ]


E10 = exercise(10, "nan", "Break it: why is the output NaN?",
    data=e10_data,
    parts=[
        Part("cause", lambda ns: 2.0, what="one choice, a number from 1 to 4", atol=1e-6, choices=4,  # the four causes listed on the page
             praise="A fully masked row leaves nothing to normalise: Σ exp = 0, and 0/0 = NaN.",
             mistakes=[
                 Mistake("overflow", lambda ns: 1.0,
                         f"Look at the sizes: no score here is above {_E10_BOUND} in size, and exp({_E10_BOUND}) ≈ "
                         f"{math.exp(_E10_BOUND):.0f} is far from overflowing (NumPy's warning would say "
                         "\"overflow\"). Print the scores of row 0 after masking."),
                 Mistake("columns", lambda ns: 3.0,
                         "Read the function again: W.sum(axis=-1, keepdims=True) adds along each row, so each "
                         "query's weights are normalised over the keys, not down a column. Print the row of "
                         "masked scores that gives NaN."),
                 Mistake("polarity", lambda ns: 4.0,
                         "The mask has the book's polarity: attn.causal_mask(4) is True on and below the diagonal "
                         "(may read), and not_padding is True for the real tokens. Print mask[0]: which keys may "
                         "query 0 read?"),
             ]),
        Part("safe_attention", lambda ns: _safe, kind="function", what="the output (T_q, d_v)", cases=e10_cases,
             praise="A query that may read nothing now outputs zeros, and large scores do not overflow.",
             mistakes=[
                 Mistake("big_negative", lambda ns: _e10_wrong("big_negative"),
                         "No NaN now, but the empty row got equal weights over all its (forbidden) keys: with "
                         "-1e9 in place of -∞ every entry of the row is the same after the max shift. A query that may "
                         "read nothing should output zeros: find the rows with no True in the mask, and zero them."),
                 Mistake("nan_to_num", lambda ns: _e10_wrong("nan_to_num"),
                         "np.nan_to_num hides the NaN instead of repairing its cause: when the scores are large, exp "
                         "overflows, that row's weights become NaN (inf/inf), and np.nan_to_num silently turns the whole "
                         "output row into zeros. Handle the rows with no "
                         "key to read on purpose, and subtract each row's largest score before exponentiating."),
                 Mistake("broken", lambda ns: _e10_wrong("as_given"),
                         "This still gives NaN for a query whose keys are all masked. Find those rows "
                         "(empty = ~mask.any(axis=-1, keepdims=True), a (T_q, 1) column) and set their weights "
                         "(or outputs) to 0."),
                 Mistake("no_keepdims", lambda ns: _e10_wrong("no_keepdims"),
                         "Your rows with nothing to read are found, but as a vector of shape (T_q,): "
                         "np.where(empty, 0.0, S) then broadcasts it along the last axis, so it picks columns "
                         "(keys), not rows (queries), and changes the scores of a key for every query. Keep the "
                         "reduced axis: empty = ~mask.any(axis=-1, keepdims=True) is a (T_q, 1) column, which "
                         "broadcasts across each row."),
                 Mistake("unstable", lambda ns: _e10_wrong("unstable"),
                         "The empty row is handled, but large scores still overflow: subtract each row's largest "
                         "finite score before exponentiating."),
             ]),
    ],
    hints=(
        "Print the masked scores, np.where(mask, S, -np.inf). Which row is special?",
        "Row 0 of the mask is all False: token 0 is padding, and the causal rule lets query 0 read only key 0. "
        "exp(−∞) = 0 for every entry, the row sum is 0, and 0/0 = NaN.",
        "To repair it: find the empty rows, empty = ~mask.any(axis=-1, keepdims=True), a (T_q, 1) column "
        "(keepdims=True keeps it a column, so that np.where(empty, ...) picks rows, not keys); give them any "
        "finite scores (say 0) before the softmax, then set their weights to 0 after it.",
        "Keep the softmax stable: subtract each row's maximum (over the finite scores) before np.exp.",
    ),
)


__all__ = ["E01", "E02", "E03", "E04", "E05", "E06", "E07", "E08", "E09", "E10", "E07_DKS", "E07_SIGMA_K", "E07_N",
           "E07_RTOL", "E07_SLOPE_ATOL"]
