"""Proposition 1's explorer: one query, four keys, the softmax weights and the weighted average of the values."""
from __future__ import annotations

import numpy as np

from .. import attention, scores
from ..examples import figure3
from ..palette import SERIES
from .base import Explorer, vector_plane
from .live import Control

KEY_COLOURS = list(SERIES[:4])
NO_SHRINK = dict(shrinkA=0, shrinkB=0)  # arrows from the origin to the point: no path clipping per draw


LABEL_GAP = 0.32  # how far beyond an arrow's tip its label is centred, in the panel's units


def beyond_tip(tip, gap: float = LABEL_GAP) -> np.ndarray:
    """Where an arrow's label goes: centred ``gap`` beyond the tip along the arrow, clear of the arrowhead
    whichever way the arrow points (a zero arrow: up and to the right)."""
    tip = np.asarray(tip, dtype=float)
    n = float(np.linalg.norm(tip))
    u = tip / n if n > 1e-12 else np.array([1.0, 1.0]) / np.sqrt(2)
    return tip + gap * u


class WeightedAverageExplorer(Explorer):
    """Edit the query ``q = (q1, q2)``, one key ``k_key = (kx, ky)`` and the temperature ``tau``.

    Left: the query and the keys as arrows. Middle: the weights softmax(q·kⱼ/√d_k/τ) as bars.
    Right: the value rows, their convex hull and the output o = Σⱼ wⱼ vⱼ, which lies inside it (up to rounding).
    """

    q0, K0, V0 = figure3()
    defaults = {"q1": 1.0, "q2": 1.0, "key": 1, "kx": float(K0[0, 0]), "ky": float(K0[0, 1]), "tau": 1.0}
    alt = ("Three panels. Left: the query and the keys as arrows in the plane. Middle: the softmax weight "
           "of each key as a horizontal bar. Right: the value vectors, each dot with an area that grows with "
           "its weight, the polygon they span, and the output, a weighted average that lies inside that polygon.")

    live_script = "weighted_average.js"
    live_title = "Proposition 1 explorer"
    live_usage = ("Drag the tip of the query <i>q</i> or of any key <i>k</i><sub><i>j</i></sub>, or use the sliders; a "
                  "focused arrow tip also moves with the arrow keys (Shift for larger steps). The table under the "
                  "picture gives the scores, weights and output to three decimals.")
    live_size = (900, 300)
    live_controls = [
        Control("q1", "query x", min=-2.0, max=2.0, step=0.01, digits=2),
        Control("q2", "query y", min=-2.0, max=2.0, step=0.01, digits=2),
        Control("key", "edit key", "choice", options=[("k₁", 1), ("k₂", 2), ("k₃", 3), ("k₄", 4)]),
        Control("kx", "key x", min=-2.0, max=2.0, step=0.01, digits=2),
        Control("ky", "key y", min=-2.0, max=2.0, step=0.01, digits=2),
        Control("tau", "τ", "log", min=-1.5, max=1.5, step=0.01),
    ]

    def __init__(self, **params):
        self.K = self.K0.copy()
        super().__init__(figsize=(10, 3.4), **params)

    def update(self, **params):
        # Choosing another key to edit, without coordinates, starts from where that key is now.
        if "key" in params and "kx" not in params and "ky" not in params:
            i = int(params["key"]) - 1
            if 0 <= i < len(self.K):
                params = {**params, "kx": float(self.K[i, 0]), "ky": float(self.K[i, 1])}
        K = self.K.copy()  # _redraw writes the edited key into K before a later check may refuse the move
        try:
            return super().update(**params)
        except Exception:
            self.K = K
            self._redraw()  # the parameters are already rolled back; now the keys are too
            raise

    def live_data(self):
        return {"V": self.V0, "colours": KEY_COLOURS, "hull": [0, 3, 1, 2], "d_k": int(self.K0.shape[1])}

    def live_state(self):
        return {**self.params, "K": self.K.tolist()}

    def set_live_state(self, state):
        K = np.asarray(state["K"], dtype=float)
        if K.shape != self.K.shape or not np.isfinite(K).all():
            raise ValueError(f"K must be {self.K.shape} finite numbers; got {state['K']!r}")
        saved = self.K.copy()
        self.K = K
        try:
            super().set_live_state(state)
        except Exception:
            self.K = saved
            raise

    def compute(self):
        """The query q (2,), its scores against the keys (4,), its weights (4,) and the output (2,)."""
        q = np.array([[self.params["q1"], self.params["q2"]]])  # (1, 2)
        out, w = attention(q, self.K, self.V0, tau=self.params["tau"])  # (1, 2), (1, 4); checks K first
        s = scores(q, self.K)[0]  # (1, 2) @ (2, 4) / √d_k -> (4,)
        return {"q": q[0], "scores": s, "weights": w[0], "output": out[0]}

    def live_values(self):
        r = self.compute()
        return {**{f"s{i + 1}": float(v) for i, v in enumerate(r["scores"])},
                **{f"w{i + 1}": float(v) for i, v in enumerate(r["weights"])},
                "o1": float(r["output"][0]), "o2": float(r["output"][1])}

    def _sync_key(self):
        i = int(self.params["key"]) - 1
        if not 0 <= i < len(self.K):
            raise ValueError(f"key must be 1 … {len(self.K)}; got {self.params['key']}")
        self.K[i] = (self.params["kx"], self.params["ky"])

    def _draw(self):
        ax_k, ax_w, ax_v = self.fig.subplots(1, 3, width_ratios=[1, 1.1, 1])
        self.ax_k, self.ax_w, self.ax_v = ax_k, ax_w, ax_v
        vector_plane(ax_k, (-2.2, 2.2))
        vector_plane(ax_v)
        ax_k.set_title("query and keys")
        self.key_arrows = [ax_k.annotate("", xy=(0, 0), xytext=(0, 0),
                                         arrowprops=dict(arrowstyle="->", color=c, lw=2, **NO_SHRINK)) for c in KEY_COLOURS]
        self.key_labels = [ax_k.text(0, 0, f"$k_{i + 1}$", color=c, fontsize=11, ha="center", va="center")
                           for i, c in enumerate(KEY_COLOURS)]
        self.q_arrow = ax_k.annotate("", xy=(0, 0), xytext=(0, 0), arrowprops=dict(arrowstyle="->", color="black", lw=2.5, **NO_SHRINK))
        self.q_label = ax_k.text(0, 0, "$q$", fontsize=12, weight="bold", ha="center", va="center")

        labels = [f"$k_{i + 1}$" for i in range(4)]
        self.bars = ax_w.barh(labels, np.zeros(4), color=KEY_COLOURS)
        ax_w.invert_yaxis()
        ax_w.set(xlim=(0, 1.15), xlabel="weight $w_j$")
        self.bar_text = [ax_w.text(0, i, "", va="center", fontsize=10) for i in range(4)]

        V = self.V0
        ax_v.set(xlim=(-1.8, 3.8), ylim=(-0.8, 3.8), title="values and output o = Σⱼ wⱼ vⱼ")
        hull = np.array([V[0], V[3], V[1], V[2], V[0]])  # the values' convex hull, in order around it
        ax_v.fill(hull[:, 0], hull[:, 1], color="0.92", zorder=0)
        ax_v.plot(hull[:, 0], hull[:, 1], color="0.6", lw=1)
        self.value_dots = ax_v.scatter(V[:, 0], V[:, 1], s=60, c=KEY_COLOURS, zorder=2)
        self.value_labels = [ax_v.text(x + 0.3, y - 0.35, f"$v_{i + 1}$", color=KEY_COLOURS[i], zorder=4)
                             for i, (x, y) in enumerate(V)]  # clear of the dot; drawn over the dots
        (self.out_dot,) = ax_v.plot([], [], marker="*", ms=16, color="black", mec="white", mew=1.2, ls="none",
                                    zorder=3)  # a white rim: the star stands out on a value dot

    def _animated(self):
        return [*self.key_arrows, *self.key_labels, self.q_arrow, self.q_label,
                *self.bars, *self.bar_text, self.ax_w.title, self.value_dots, *self.value_labels, self.out_dot]

    def _redraw(self):
        self._sync_key()
        r = self.compute()
        q, w, o = r["q"], r["weights"], r["output"]
        self.q_arrow.xy = tuple(q)
        self.q_label.set_position(beyond_tip(q))
        for arrow, label, k in zip(self.key_arrows, self.key_labels, self.K):
            arrow.xy = tuple(k)
            label.set_position(beyond_tip(k))
        for bar, text, wi in zip(self.bars, self.bar_text, w):
            bar.set_width(wi)
        for i, (text, wi) in enumerate(zip(self.bar_text, w)):
            text.set_position((wi + 0.02, i))
            text.set_text(f"{wi:.2f}")
        self.value_dots.set_sizes(40 + 400 * w)
        self.out_dot.set_data([o[0]], [o[1]])
        self.ax_w.set_title(f"softmax(q·kⱼ / √dₖ / τ), τ = {self.params['tau']:.3g}")  # plain text: see base.Explorer

    def controls(self):
        c = super().controls()

        def load_key(change):  # picking another key loads its coordinates into the kx, ky sliders
            i = change["new"] - 1
            c["kx"].value, c["ky"].value = float(self.K[i, 0]), float(self.K[i, 1])

        c["key"].observe(load_key, names="value")
        return c
