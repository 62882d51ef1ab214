"""The worked routes the variant pages (II.3.V01–V04) show: a by-hand computation, written out as MyST text.

A variant draws fresh numbers for each seed, so its solution cannot be typed: it is generated from the
numbers by these functions and glued into the page (``{glue:md}`` with ``:format: myst``). Each function
computes the route itself with :mod:`attn` and returns one Markdown string; nothing is printed.

Numbers are written as a reader would write them: whole numbers and halves exactly, other given numbers
to 4 decimals, exponentials and their sums to 4 decimals, weights and outputs to 2. Every route subtracts the
row's largest score before exponentiating, as the hints advise: it changes no weight, and it keeps every
exponential at most 1 (``e^{4/0.25}`` would be 8886110.5205), so the numbers stay the size of a paper computation.
"""
from __future__ import annotations

import numpy as np

from .attention import attention, scores
from .masks import causal_mask
from .softmax import softmax

__all__ = ["attention_route", "causal_route", "even_rows_text", "temperature_route"]


def _num(x) -> str:
    """A number as a reader would write it: integers and halves exactly, others to 4 decimals."""
    x = float(x)
    return f"{x:g}" if abs(2 * x - round(2 * x)) < 1e-12 else f"{x:.4f}"


def _vec(v) -> str:
    return "(" + ", ".join(_num(x) for x in v) + ")"


def _minus(x) -> str:
    """`` - x`` as a formula writes it: ``- 4``, or ``- (-1)`` for a negative ``x``."""
    return f" - {_num(x)}" if x >= 0 else f" - ({_num(x)})"


def _exp_text(v: float) -> str:
    """An exponential of a score less the row's largest: exactly 1 for the largest, else to 4 decimals."""
    return "= 1" if v == 1.0 else f"\\approx {v:.4f}"


def _matrix(name: str, a, ndim: int) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != ndim or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite {ndim}-D array; got shape {arr.shape}")
    return arr


def attention_route(i: int, Q, K, V) -> str:
    """The worked route of query ``i`` (counted from 0; shown from 1): dot products, the scale, the
    exponentials, the weights and the output row, for scaled dot-product attention without a mask.

    Parameters
    ----------
    i : int, 0 ≤ i < T_q.
    Q : array (T_q, d_k); K : array (T_k, d_k); V : array (T_k, d_v). Any real dtype; computed in float64.

    Returns
    -------
    str
        Three MyST paragraphs (scores, weights, output) for query ``i``.

    Raises
    ------
    ValueError
        If ``Q``, ``K`` or ``V`` is not a finite 2-D array, or ``i`` is not a row of ``Q`` (the message names it).
    """
    Q, K, V = (_matrix(n, a, 2) for n, a in (("Q", Q), ("K", K), ("V", V)))
    if not 0 <= i < len(Q):
        raise ValueError(f"i must index a row of Q (0 ≤ i < {len(Q)}); got {i}")
    S = scores(Q, K)  # (T_q, d_k) @ (d_k, T_k) / √d_k -> (T_q, T_k)
    O, W = attention(Q, K, V)  # (T_q, d_v), (T_q, T_k)
    q, d_k = Q[i], Q.shape[1]
    n = i + 1
    dots = []
    for j, k in enumerate(K):
        terms = " + ".join(f"{_num(a)}\\cdot{_num(b)}" for a, b in zip(q, k))
        dots.append(f"$q_{n}\\cdot k_{j + 1} = {terms} = {_num(q @ k)}$")
    top = S[i].max()
    e = np.exp(S[i] - top)  # (T_k,): at most 1, exactly 1 for the largest score
    row_scores = ", ".join(f"$s_{{{n}{j + 1}}} = {_num(S[i, j])}$" for j in range(len(K)))
    exps = ", ".join(f"$e^{{s_{{{n}{j + 1}}}{_minus(top)}}} {_exp_text(e[j])}$" for j in range(len(K)))
    weights = ", ".join(f"$w_{{{n}{j + 1}}} \\approx {W[i, j]:.2f}$" for j in range(len(K)))
    mix = " + ".join(f"${W[i, j]:.4f}\\,{_vec(V[j])}$" for j in range(len(K)))  # one formula per term: lines may break
    return (f"**Scores, query {n}.** The query is $q_{n} = {_vec(q)}$; its dot products with the keys are "
            + "; ".join(dots) + f". Divided by $\\sqrt{{d_k}} = {_num(np.sqrt(d_k))}$ they give " + row_scores
            + ".\n\n"
            f"**Weights, query {n}.** Subtract the largest score, {_num(top)}, first (it changes no weight and "
            "keeps the numbers small): the exponentials are " + exps + f", which add up to {e.sum():.4f}; "
            "dividing each by that sum gives " + weights + " (they sum to 1 before rounding).\n\n"
            f"**Output, query {n}.** Row {n} of the output is the weighted average of the value rows: "
            f"$o_{n} = \\sum_j w_{{{n}j}}v_j$ = {mix} $\\approx (" + ", ".join(f"{x:.2f}" for x in O[i]) + ")$.")


def even_rows_text(S) -> str:
    """One MyST sentence on the rows of the scores ``S`` whose scores are all equal, true for any ``S``: such a
    row's weights are all ``1/T_k`` and its output is the plain average of the values; a seed whose ``S`` has no
    such row gets a sentence saying so (rows counted from 1, as the page's formulas count queries).

    Parameters
    ----------
    S : array (T_q, T_k) of finite scores (already scaled), no mask.

    Returns
    -------
    str
        One sentence, for zero, one or several such rows.

    Raises
    ------
    ValueError
        If ``S`` is not a finite 2-D array.
    """
    S = _matrix("S", S, 2)
    T_k = S.shape[1]
    rows = [i + 1 for i in range(len(S)) if np.ptp(S[i]) == 0]  # exact: equal scores, not nearly equal
    if not rows:
        return (f"No row of $S$ has all {T_k} scores equal here, so every query gives some key more than "
                f"1/{T_k} of its weight.")
    if len(rows) == 1:
        return (f"Row {rows[0]} has equal scores throughout, so its weights are all 1/{T_k} and its output is "
                "the plain average of the values.")
    named = ", ".join(str(r) for r in rows[:-1]) + f" and {rows[-1]}"
    return (f"Rows {named} have equal scores throughout, so their weights are all 1/{T_k} and each of their "
            "outputs is the plain average of the values.")


def temperature_route(s, taus) -> str:
    """One list item per temperature: the exponentials of ``(s - s_max) / τ``, their sum and the weights.

    Parameters
    ----------
    s : array (T_k,) of finite scores; taus : sequence of positive temperatures.

    Returns
    -------
    str
        A MyST bullet list, one line per τ, in the order of ``taus``.

    Raises
    ------
    ValueError
        If ``s`` is not a finite 1-D array, or a τ is not a positive finite number (the message names it).
    """
    s = _matrix("s", s, 1)
    top = s.max()
    lines = []
    for t in taus:
        if not (np.isfinite(t) and t > 0):
            raise ValueError(f"taus must hold positive finite temperatures; got {t!r}")
        e = np.exp((s - top) / t)  # (T_k,): at most 1, exactly 1 for the largest score
        w = softmax(s, tau=t)
        exps = ", ".join(f"$e^{{({_num(x)}{_minus(top)})/{float(t):g}}} {_exp_text(v)}$" for x, v in zip(s, e))
        lines.append(f"- $\\tau = {float(t):g}$: {exps}, sum {e.sum():.4f}, so the weights are "
                     + ", ".join(f"{v:.2f}" for v in w) + ".")
    return (f"The largest score is {_num(top)}; subtracting it from every score first changes no weight and keeps "
            "every exponential at most 1.\n\n" + "\n".join(lines))


def causal_route(S, V) -> str:
    """One list item per row of a causally masked attention: the scores it may read, their exponentials (the
    largest of them subtracted first) and sum, the weights and the output row.

    Parameters
    ----------
    S : array (T, T) of finite scores (already scaled); V : array (T, d_v).

    Returns
    -------
    str
        A MyST bullet list, one line per query, rows and keys counted from 1.

    Raises
    ------
    ValueError
        If ``S`` is not a finite square 2-D array or ``V`` has not one row per token (the message names it).
    """
    S, V = _matrix("S", S, 2), _matrix("V", V, 2)
    T = len(S)
    if S.shape != (T, T) or len(V) != T:
        raise ValueError(f"S must be (T, T) and V (T, d_v); got S {S.shape}, V {V.shape}")
    W = softmax(np.where(causal_mask(T), S, -np.inf))  # (T, T): masked scores get weight exactly 0
    O = W @ V  # (T, T) @ (T, d_v) -> (T, d_v)
    lines = []
    for i in range(T):
        kept = S[i, : i + 1]  # the scores row i may read: keys 1 … i+1
        e = np.exp(kept - kept.max())  # at most 1: the largest score it may read subtracted first
        mix = " + ".join(f"${W[i, j]:.4f}\\,{_vec(V[j])}$" for j in range(i + 1))
        reads = f"keys 1 to {i + 1}" if i else "key 1 only"
        lines.append(f"- Row {i + 1} reads {reads}: scores " + ", ".join(f"{x:g}" for x in kept)
                     + (f"; less the largest, {_num(kept.max())}, their exponentials "
                        + ", ".join("1" if v == 1.0 else f"{v:.4f}" for v in e) + f" (sum {e.sum():.4f})" if i else "")
                     + ", weights " + ", ".join(f"{v:.2f}" for v in W[i, : i + 1])
                     + f"; output {mix} $\\approx (" + ", ".join(f"{x:.2f}" for x in O[i]) + ")$.")
    return "\n".join(lines)
