"""Proposition 4's explorer: one attention block, two wirings (self- and cross-attention)."""
from __future__ import annotations

import numpy as np

from .. import cross_attention, scores, self_attention
from ..examples import two_sequences
from .base import Explorer
from .live import Control, colour_table

WIRINGS = ("self", "cross")
SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


class WiringExplorer(Explorer):
    """Switch where the keys and values come from, and how many there are.

    ``wiring="self"``: Q, K and V are all projected from X (T_q tokens, ``X.shape[0]``), so the score matrix is
    T_q × T_q. ``wiring="cross"``: Q from X, K and V from the first ``T_k`` rows of another sequence Y
    (1 ≤ T_k ≤ ``T_k_max`` = ``Y.shape[0]``), so the score matrix is T_q × T_k. The block (W_Q, W_K, W_V and the formula) is the same in both.

    Panels: the score matrix S = QKᵀ/√d_k, the weights softmax(S) row by row, and the output (T_q × d_v). The first
    two are drawn as wide as the keys they show, T_k columns: in the live explorer (``js/wiring.js``) the frame
    itself shrinks to them, centred in room for the most keys (``T_k_max``); the matplotlib figure keeps a grey
    frame ``T_k_max`` wide, so that a move redraws the images only, without a new layout.
    """

    X, Y, W_Q, W_K, W_V = two_sequences()
    T_q, T_k_max = X.shape[0], Y.shape[0]
    d_v = W_V.shape[1]
    defaults = {"wiring": "self", "T_k": 8}
    alt = ("Three heatmaps side by side. Left: the score matrix, one row per query and one column per key, so its "
           "width shows how many keys there are. Middle: the softmax weights, same shape, each row summing to one. "
           "Right: the output, one row per query and one column per value feature; its shape does not change with "
           "the number of keys.")

    live_script = "wiring.js"
    live_title = "Proposition 4 explorer"
    live_usage = ("Pick the wiring, then, under <em>cross</em>, move <i>T</i><sub>k</sub>: the score matrix and the "
                  "weights are <i>T</i><sub>q</sub> × <i>T</i><sub>k</sub>, square under <em>self</em>. The table under the "
                  "picture gives the output rows; rest the pointer on any cell of the heatmaps to read its value to four "
                  "significant digits.")
    live_size = (900, 300)
    live_controls = [
        Control("wiring", "wiring", "choice", options=[("self: K, V from X", "self"), ("cross: K, V from Y", "cross")]),
        Control("T_k", "Tₖ (Y)", min=1, max=int(T_k_max), step=1, digits=0),
    ]

    def __init__(self, **params):
        super().__init__(figsize=(10, 3.3), **params)

    def colour_limits(self) -> tuple[float, float, float]:
        """(s_lim, v_min, v_max): fixed colour limits, so that colours mean the same thing in every state."""
        Y_all = np.vstack([self.X, self.Y])
        S_all = scores(self.X @ self.W_Q, Y_all @ self.W_K)
        V_all = Y_all @ self.W_V  # every output row lies between the smallest and largest value entries
        return float(np.abs(S_all).max()), float(V_all.min()), float(V_all.max())

    def live_data(self):
        s_lim, v_min, v_max = self.colour_limits()
        return {"X": self.X, "Y": self.Y, "W_Q": self.W_Q, "W_K": self.W_K, "W_V": self.W_V,
                "T_q": self.T_q, "T_k_max": self.T_k_max, "d_v": self.d_v, "s_lim": s_lim, "v_min": v_min,
                "v_max": v_max, "viridis": colour_table("viridis"), "cividis": colour_table("cividis")}

    def live_values(self):
        r = self.compute()
        S, w, out = r["scores"], r["weights"], r["output"]
        values = {}
        for name, M in (("S", S), ("W", w), ("O", out)):
            for (i, j), v in np.ndenumerate(M):
                values[f"{name}{i + 1}_{j + 1}"] = float(v)
        for (i, c), v in np.ndenumerate(out):
            values[f"o{i + 1}_{c + 1}"] = float(v)
        return values

    # the computation the figure shows, reused by tests and the page
    def sources(self):
        """(X_source, T_k): the sequence the keys and values are projected from, for the current wiring."""
        wiring, T_k = self.params["wiring"], int(self.params["T_k"])
        if wiring not in WIRINGS:
            raise ValueError(f"wiring must be one of {WIRINGS}; got {wiring!r}")
        if wiring == "self":
            return self.X, self.T_q
        if not 1 <= T_k <= self.T_k_max:
            raise ValueError(f"T_k must be 1 … {self.T_k_max}; got {T_k}")
        return self.Y[:T_k], T_k

    def compute(self):
        """The scores S, the weights and the output, (T_q, T_k), (T_q, T_k), (T_q, d_v), straight from ``attn``."""
        source, _ = self.sources()
        if self.params["wiring"] == "self":
            out, w = self_attention(self.X, self.W_Q, self.W_K, self.W_V)
        else:
            out, w = cross_attention(self.X, source, self.W_Q, self.W_K, self.W_V)
        S = scores(self.X @ self.W_Q, source @ self.W_K)  # (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
        return {"scores": S, "weights": w, "output": out}

    def _draw(self):
        ax_s, ax_w, ax_o = self.fig.subplots(1, 3, width_ratios=[self.T_k_max, self.T_k_max, self.d_v + 1.5])
        self.ax_s, self.ax_w, self.ax_o = ax_s, ax_w, ax_o
        s_lim, v_min, v_max = self.colour_limits()
        blank = np.zeros((self.T_q, 1))
        self.im_s = ax_s.imshow(blank, cmap="viridis", vmin=-s_lim, vmax=s_lim, aspect="equal")
        self.im_w = ax_w.imshow(blank, cmap="cividis", vmin=0, vmax=1, aspect="equal")
        self.im_o = ax_o.imshow(np.zeros((self.T_q, self.d_v)), cmap="viridis",
                                vmin=v_min, vmax=v_max, aspect="equal")
        for ax, im in ((ax_s, self.im_s), (ax_w, self.im_w), (ax_o, self.im_o)):
            self.fig.colorbar(im, ax=ax, shrink=0.8, pad=0.02)
        self.key_labels = []
        for ax in (ax_s, ax_w):
            ax.set_xlim(-0.5, self.T_k_max - 0.5)
            ax.set_ylim(self.T_q - 0.5, -0.5)
            ax.set_xlabel("key $j$", labelpad=14)
            ax.set_facecolor("0.94")
            # Ten fixed tick marks; the key names under them are our own text, changed by a move
            # without redrawing the axis.
            ax.set_xticks(range(self.T_k_max), [""] * self.T_k_max)
            self.key_labels += [ax.text(j, -0.03, "", transform=ax.get_xaxis_transform(), ha="center", va="top",
                                        fontsize=8) for j in range(self.T_k_max)]
        for ax in (ax_s, ax_w, ax_o):
            ax.set_yticks(range(self.T_q), [f"$q_{i + 1}$" for i in range(self.T_q)])
        ax_o.set_xticks(range(self.d_v), [str(c + 1) for c in range(self.d_v)])
        ax_o.set_xlabel("feature")
        ax_o.set_title(f"output  {self.T_q}×{self.d_v}")
        self.suptitle = self.fig.suptitle("")

    def _animated(self):
        frames = [spine for ax in (self.ax_s, self.ax_w, self.ax_o) for spine in ax.spines.values()]
        # the spines are static but drawn again, over the images, as a full draw does
        return [self.im_s, self.im_w, self.im_o, *frames, *self.key_labels, self.ax_s.title, self.ax_w.title,
                self.suptitle]

    def _redraw(self):
        r = self.compute()
        S, w, out = r["scores"], r["weights"], r["output"]
        T_k = S.shape[1]
        extent = (-0.5, T_k - 0.5, self.T_q - 0.5, -0.5)
        for im, data in ((self.im_s, S), (self.im_w, w)):
            im.set_data(data)
            im.set_extent(extent)
        self.im_o.set_data(out)
        letter = "x" if self.params["wiring"] == "self" else "y"
        for n, label in enumerate(self.key_labels):
            j = n % self.T_k_max
            label.set_text(f"{letter}{str(j + 1).translate(SUBSCRIPT)}" if j < T_k else "")  # plain text: see base.Explorer
        self.ax_s.set_title(f"scores QKᵀ/√dₖ  {self.T_q}×{T_k}")
        self.ax_w.set_title(f"weights  {self.T_q}×{T_k}")
        if self.params["wiring"] == "self":
            self.suptitle.set_text(f"self-attention: Q, K, V all from X  (T = {self.T_q})")
        else:
            self.suptitle.set_text(f"cross-attention: Q from X ({self.T_q} queries); K, V from Y (Tₖ = {T_k})")

    def controls(self):
        c = super().controls()
        c["T_k"].disabled = self.params["wiring"] == "self"

        def toggle(change):  # the length of Y only matters when the keys come from Y
            c["T_k"].disabled = change["new"] == "self"

        c["wiring"].observe(toggle, names="value")
        return c
