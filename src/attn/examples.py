"""Small named inputs the chapter uses, so the text, the widgets and the tests share one copy."""
from __future__ import annotations

import numpy as np


def figure3() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The query, keys and values behind the chapter's Figure 3 (d_k = d_v = 2, float64).

    Returns ``q`` (1, 2), ``K`` (4, 2), ``V`` (4, 2). With the scale 1/√2 the softmax
    weights of ``q`` against the four keys round to 0.06, 0.61, 0.09 and 0.24.
    """
    q = np.array([[1.0, 1.0]])
    K = np.array([[-0.8, -0.7], [1.2, 0.6], [-1.6, 0.7], [1.3, -0.8]])
    V = np.array([[0.0, 0.0], [2.0, 3.0], [-1.0, 2.0], [3.0, 0.5]])
    return q, K, V
