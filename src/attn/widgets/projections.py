"""Proposition 2's explorer: one token vector, three projections, and which of them reaches the output."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..attention import attention
from ..palette import QKV, SERIES
from ..wiring import project
from .base import Explorer, vector_plane
from .live import Control

# Token j's colour, the same in all three panels: its dot x_j, its key's bar k_j and its value's dot v_j (as
# the keys of Proposition 1's explorer). The query, key and value arrows take none of these colours, so that no
# colour means two things: they are drawn in the text's colour (palette.QKV; currentColor in the live
# explorer, which follows dark mode), told apart by their dash pattern and their label.
TOKEN_COLOURS = list(SERIES[:4])
QKV_DASHES = {"q": (), "k": (6.0, 3.0), "v": (6.0, 2.0, 1.5, 2.0)}  #: on-off lengths in points; () is solid
X_DASH = (1.5, 2.5)  #: the token's own arrow: grey, dotted


def _mpl_dash(on_off: tuple[float, ...]):
    """A matplotlib linestyle for ``on_off`` (solid when empty)."""
    return "-" if not on_off else (0, on_off)


def rotation_scale(angle_deg: float, scale: float) -> np.ndarray:
    """The 2×2 matrix ``W = scale · R(angle)`` that turns a row vector ``x`` (1, 2) by ``angle_deg``
    degrees anticlockwise and stretches it by ``scale``: ``x @ W``. float64, shape (2, 2)."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return scale * np.array([[c, s], [-s, c]])  # (x1, x2) @ W = scale * (x1 c - x2 s, x1 s + x2 c)


def outside_hull(v, centre, gap: float = 0.45) -> np.ndarray:
    """Where a value's label goes: ``gap`` beyond the value, away from the values' centre, so outside their hull
    (the output, which is inside it, never hides a label)."""
    d = np.asarray(v, dtype=float) - np.asarray(centre, dtype=float)
    n = float(np.linalg.norm(d))
    return np.asarray(v, dtype=float) + gap * (d / n if n > 1e-12 else np.array([1.0, 1.0]) / np.sqrt(2))


class ProjectionsExplorer(Explorer):
    """Pick a token ``t`` and set ``W_Q``, ``W_K``, ``W_V`` as a rotation angle (degrees) and a scale each.

    Four tokens live in the plane (d_model = d_k = d_v = 2), rows of ``X`` (4, 2).
    Left: token ``x_t`` and its query ``q_t = x_t W_Q``, key ``k_t = x_t W_K`` and value ``v_t = x_t W_V``.
    Middle: the weights token t puts on each token, softmax(q_t · k_j / √d_k), which W_V never touches.
    Right: the value rows, their convex hull and the output ``o_t = Σ_j w_tj v_j``: only values get here.
    """

    X = np.array([[1.0, 0.2], [0.3, 1.0], [-0.9, 0.5], [-0.3, -0.9]])  # (T, d_model) = (4, 2)
    defaults = {"token": 1, "angle_Q": 30.0, "angle_K": -30.0, "angle_V": 90.0,
                "scale_Q": 1.6, "scale_K": 1.6, "scale_V": 1.2}
    alt = ("Three panels. Left: one token vector in the plane (dotted, grey) with its query, key and value "
           "arrows (solid, dashed and dash-dotted), three different linear images of the same vector. Middle: "
           "the weights this token's query puts on every token's key, as bars, one colour per token. Right: the "
           "value vectors in the same token colours, each dot with an area that grows with its weight, the "
           "region they enclose, and the output, a star inside that region: the only vectors that reach the "
           "output are the values.")

    live_script = "projections.js"
    live_title = "Proposition 2 explorer"
    live_usage = ("Pick the token, then turn and stretch each matrix with its sliders, or drag the tip of the "
                  "<i>q</i>, <i>k</i> or <i>v</i> arrow: the drag sets that matrix’s turn and stretch so that the arrow "
                  "ends where you let go. The table under the picture gives the numbers.")
    live_size = (900, 300)
    live_controls = [
        Control("token", "token", "choice", options=[(f"x{j + 1}", j + 1) for j in range(4)]),
        *[Control(f"{kind}_{M}", f"W_{M} {label}", min=lo, max=hi, step=step, digits=digits)
          for M in "QKV" for kind, label, lo, hi, step, digits in (("angle", "turn °", -180.0, 180.0, 1.0, 0),
                                                                   ("scale", "scale", 0.0, 2.5, 0.01, 2))],
    ]

    def __init__(self, **params):
        super().__init__(figsize=(10.5, 3.6), **params)

    def live_data(self):
        dashes = {name: " ".join(f"{x:g}" for x in on_off) for name, on_off in QKV_DASHES.items()}
        return {"X": self.X, "colours": TOKEN_COLOURS, "qkv_dashes": dashes,
                "x_dash": " ".join(f"{x:g}" for x in X_DASH)}

    def live_values(self):
        r = self.compute()
        t = r["token"]
        values = {f"a{j + 1}": float(w) for j, w in enumerate(r["weights"][t])}
        for name, M in (("q", "Q"), ("k", "K"), ("v", "V"), ("o", "output")):
            values[f"{name}1"], values[f"{name}2"] = (float(c) for c in r[M][t])
        return values

    def update(self, **params):
        # Refuse a bad token before storing it, so a failed move leaves the explorer as it was.
        if "token" in params and params["token"] not in range(1, len(self.X) + 1):
            raise ValueError(f"token must be 1 … {len(self.X)}; got {params['token']!r}")
        for name in ("angle_Q", "angle_K", "angle_V", "scale_Q", "scale_K", "scale_V"):
            if name in params and not (isinstance(params[name], numbers.Real) and math.isfinite(params[name])):
                raise ValueError(f"{name} must be a finite number; got {params[name]!r}")
        return super().update(**params)

    # -- the mathematics, in one place --------------------------------
    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The current ``W_Q``, ``W_K``, ``W_V``, each (d_model, d) = (2, 2)."""
        p = self.params
        return (rotation_scale(p["angle_Q"], p["scale_Q"]), rotation_scale(p["angle_K"], p["scale_K"]),
                rotation_scale(p["angle_V"], p["scale_V"]))

    def compute(self) -> dict[str, np.ndarray]:
        """The chosen token's row index, and Q, K, V (4, 2), the weights (4, 4) and the output (4, 2)."""
        t = int(self.params["token"]) - 1
        if not 0 <= t < len(self.X):
            raise ValueError(f"token must be 1 … {len(self.X)}; got {self.params['token']}")
        W_Q, W_K, W_V = self.matrices()
        Q = project(self.X, W_Q, "X", "W_Q")  # (T, d_model) @ (d_model, d_k) -> (T, d_k)
        K = project(self.X, W_K, "X", "W_K")  # (T, d_model) @ (d_model, d_k) -> (T, d_k)
        V = project(self.X, W_V, "X", "W_V")  # (T, d_model) @ (d_model, d_v) -> (T, d_v)
        out, A = attention(Q, K, V)
        return {"token": t, "Q": Q, "K": K, "V": V, "weights": A, "output": out}

    # -- drawing --------------------------------------------------------
    def _draw(self):
        ax_x, ax_w, ax_v = self.fig.subplots(1, 3, width_ratios=[1, 0.9, 1])
        self.ax_x, self.ax_w, self.ax_v = ax_x, ax_w, ax_v
        for ax in (ax_x, ax_v):
            vector_plane(ax, (-3, 3))
        ax_x.scatter(self.X[:, 0], self.X[:, 1], s=25, c=TOKEN_COLOURS, zorder=2)
        for j, (x, y) in enumerate(self.X):
            ax_x.text(x + 0.1, y - 0.35, f"$x_{j + 1}$", color=TOKEN_COLOURS[j], fontsize=9)
        arrow = dict(arrowstyle="->", lw=2.2, shrinkA=0, shrinkB=0)  # no shrink: no path clipping per draw
        self.x_arrow = ax_x.annotate("", xy=(0, 0), xytext=(0, 0),
                                     arrowprops={**arrow, "lw": 1.6, "color": "0.45", "ls": _mpl_dash(X_DASH)})
        self.qkv_arrows = {name: ax_x.annotate("", xy=(0, 0), xytext=(0, 0),
                                               arrowprops={**arrow, "color": QKV, "ls": _mpl_dash(dash)})
                           for name, dash in QKV_DASHES.items()}
        self.qkv_labels = {name: ax_x.text(0, 0, "", color=QKV, fontsize=11, weight="bold") for name in QKV_DASHES}

        labels = [f"$k_{j + 1}$" for j in range(len(self.X))]
        self.bars = ax_w.barh(labels, np.zeros(len(self.X)), color=TOKEN_COLOURS)
        ax_w.invert_yaxis()
        ax_w.set(xlim=(0, 1.2), xlabel="weight $w_{tj}$")
        self.bar_text = [ax_w.text(0, j, "", va="center", fontsize=9) for j in range(len(self.X))]

        ax_v.set_title("values and output: only $V$ gets here", fontsize=10)
        (self.hull_line,) = ax_v.plot([], [], color="0.6", lw=1)
        (self.hull_fill,) = ax_v.fill([0, 0, 0], [0, 0, 0], color="0.92", zorder=0)
        # the value dots half transparent and the star rimmed in white: the output stays visible on a heavy value
        self.value_dots = ax_v.scatter(np.zeros(len(self.X)), np.zeros(len(self.X)), s=50, c=TOKEN_COLOURS,
                                       alpha=0.55, edgecolors=TOKEN_COLOURS, linewidths=1.2, zorder=2)
        self.value_text = [ax_v.text(0, 0, f"$v_{j + 1}$", color=TOKEN_COLOURS[j], fontsize=9, ha="center",
                                     va="center") for j in range(len(self.X))]
        (self.out_dot,) = ax_v.plot([], [], marker="*", ms=16, color="black", mec="white", mew=1.2, ls="none",
                                    zorder=3)

    def _animated(self):
        return [self.x_arrow, *self.qkv_arrows.values(), *self.qkv_labels.values(), self.ax_x.title,
                *self.bars, *self.bar_text, self.ax_w.title,
                self.hull_fill, self.hull_line, self.value_dots, *self.value_text, self.out_dot]

    def _redraw(self):
        r = self.compute()
        t = r["token"]
        vecs = {"x": self.X[t], "q": r["Q"][t], "k": r["K"][t], "v": r["V"][t]}
        self.x_arrow.xy = tuple(vecs["x"])
        for name in ("q", "k", "v"):
            self.qkv_arrows[name].xy = tuple(vecs[name])
            self.qkv_labels[name].set_position(vecs[name] * 1.08 + 0.05)
            self.qkv_labels[name].set_text(f"${name}_{t + 1}$")
        self.ax_x.set_title(f"token $x_{t + 1}$ and its $q$, $k$, $v$", fontsize=10)

        a = r["weights"][t]
        for j, (bar, text, w) in enumerate(zip(self.bars, self.bar_text, a)):
            bar.set_width(w)
            text.set_position((w + 0.02, j))
            text.set_text(f"{w:.2f}")
        self.ax_w.set_title(rf"weights of $q_{t + 1}$: softmax$(q_{t + 1}\cdot k_j/\sqrt{{d_k}})$", fontsize=10)

        V = r["V"]
        order = np.argsort(np.arctan2(V[:, 1] - V[:, 1].mean(), V[:, 0] - V[:, 0].mean()))
        ring = V[np.r_[order, order[:1]]]  # the four values in angular order: their hull (they are in convex position)
        self.hull_line.set_data(ring[:, 0], ring[:, 1])
        self.hull_fill.set_xy(ring)
        self.value_dots.set_offsets(V)
        self.value_dots.set_sizes(30 + 300 * a)
        for text, v in zip(self.value_text, V):  # outside the hull, away from the values' centre
            text.set_position(outside_hull(v, V.mean(axis=0)))
        o = r["output"][t]
        self.out_dot.set_data([o[0]], [o[1]])
