"""The inputs the chapter computes with: its small named examples and random logits as at initialisation.

One copy, so the text, the widgets and the tests share them.
"""
from __future__ import annotations

import math

import numpy as np

from ._validate import check_count


def figure3() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The query, keys and values behind the chapter's Figure 3 (d_k = d_v = 2, float64).

    Returns ``q`` (1, 2), ``K`` (4, 2), ``V`` (4, 2). With the scale 1/√2 the softmax
    weights of ``q`` against the four keys round to 0.06, 0.61, 0.09 and 0.24.
    """
    q = np.array([[1.0, 1.0]])
    K = np.array([[-0.8, -0.7], [1.2, 0.6], [-1.6, 0.7], [1.3, -0.8]])
    V = np.array([[0.0, 0.0], [2.0, 3.0], [-1.0, 2.0], [3.0, 0.5]])
    return q, K, V


SENTENCE = ("the", "cat", "sat", "on", "the", "mat")


def sentence(d_model: int = 8, d_k: int = 4, d_v: int = 4, seed: int = 4):
    """A six-token "sentence" with seeded random embeddings and projections (the score-matrix page).

    Returns ``tokens`` (tuple of str), ``X`` (T, d_model) and ``W_Q``, ``W_K`` (d_model, d_k), ``W_V`` (d_model, d_v),
    float64. Each distinct word gets one embedding, so the two "the" rows of X are identical: without positional
    information attention cannot tell them apart.
    """
    rng = np.random.default_rng(seed)
    vocab = sorted(set(SENTENCE))
    E = rng.standard_normal((len(vocab), d_model))  # one row per word type
    X = E[[vocab.index(w) for w in SENTENCE]]  # (T, d_model)
    W_Q, W_K = (rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(2))  # unit-variance q, k entries
    W_V = rng.standard_normal((d_model, d_v)) / np.sqrt(d_model)
    return SENTENCE, X, W_Q, W_K, W_V


def two_sequences(T_q: int = 5, T_k_max: int = 10, d_model: int = 6, d_k: int = 4, d_v: int = 3, seed: int = 4):
    """Two seeded sequences for Proposition 4: queries' source X (T_q, d_model) and another sequence Y (T_k_max, d_model).

    Returns ``X``, ``Y``, ``W_Q``, ``W_K`` (d_model, d_k) and ``W_V`` (d_model, d_v), float64. Cross-attention with
    T_k keys reads the first T_k rows of Y.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T_q, d_model))
    Y = rng.standard_normal((T_k_max, d_model))
    W_Q, W_K = (rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(2))
    W_V = rng.standard_normal((d_model, d_v)) / np.sqrt(d_model)
    return X, Y, W_Q, W_K, W_V


def random_logits(d_k: int, T_k: int = 8, n: int = 1, scaled: bool = True, rng=None) -> np.ndarray:
    r"""Dot-product logits of random queries against random keys, as at initialisation.

    Draws ``n`` queries :math:`q` and ``n`` sets of ``T_k`` keys :math:`k_j` with independent
    standard normal entries of width ``d_k`` and returns :math:`q \cdot k_j`, divided by
    :math:`\sqrt{d_k}` when ``scaled``. Each logit has variance ``d_k`` unscaled and 1 scaled.

    Parameters
    ----------
    d_k, T_k, n : int, each >= 1
    scaled : bool, default True
    rng : numpy.random.Generator or int seed, optional

    Returns
    -------
    ndarray, shape (n, T_k), float64.

    Dtypes: always float64 (the draws are float64; cast the result for another dtype).

    Raises
    ------
    ValueError
        A count < 1.
    TypeError
        A count that is not an integer; an ``rng`` that is not a Generator, a seed or None.
    """
    d_k, T_k, n = check_count("d_k", d_k), check_count("T_k", T_k), check_count("n", n)
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise TypeError(f"rng must be a numpy.random.Generator, an integer seed or None; got {rng!r}") from None
    q = rng.standard_normal((n, 1, d_k))  # (n, 1, d_k)
    K = rng.standard_normal((n, T_k, d_k))  # (n, T_k, d_k)
    x = np.sum(q * K, axis=-1)  # (n, T_k)
    return x / math.sqrt(d_k) if scaled else x
