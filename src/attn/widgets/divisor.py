"""Proposition 3's explorer: what the 1/√d_k divisor does to the scores, the weights and the softmax Jacobian.

The Jacobian norm ‖J‖_F = ‖diag(w) − w wᵀ‖_F is not a gradient: it bounds the factor by which the softmax
scales any gradient passing back through it (‖∂ℓ/∂x‖ ≤ ‖J‖_F ‖∂ℓ/∂w‖, Proposition 3, part 2).
"""
from __future__ import annotations

import math

import numpy as np

from ..derivatives import softmax_jacobian_norm
from ..examples import random_logits
from ..palette import SCALED, UNSCALED
from ..softmax import softmax
from .base import Explorer
from .live import Control

D_K_GRID = tuple(2**i for i in range(11))  # 1, 2, 4, …, 1024


def draw_logits(d_ks, T: int = 8, n: int = 1000, seed: int = 0) -> dict[int, np.ndarray]:
    """d_k -> unscaled logits q · k_j of ``n`` random queries against ``T`` random keys each, (n, T) float64.

    Entries of q and k are N(0, 1); the draw for width d_k uses the seed ``seed + d_k``.
    """
    return {int(d): random_logits(int(d), T_k=T, n=n, scaled=False, rng=seed + int(d)) for d in d_ks}


def saturation_curves(d_ks, T: int = 8, n: int = 1000, seed: int = 0,
                      logits: dict[int, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """For each d_k: mean largest weight and median softmax Jacobian norm ‖J‖_F, unscaled and scaled.

    One query against ``T`` keys, ``n`` draws, entries N(0, 1); the scaled scores are the unscaled
    ones divided by √d_k (the same draws). ``logits`` may pass the draws of ``draw_logits(d_ks, T, n, seed)``.
    Returns arrays of shape (len(d_ks),) under the keys
    ``d_k``, ``max_weight_unscaled``, ``max_weight_scaled``, ``jac_norm_unscaled``, ``jac_norm_scaled``.
    """
    d_ks = np.asarray(d_ks, dtype=int)
    if logits is None:
        logits = draw_logits(d_ks, T=T, n=n, seed=seed)
    out = {k: np.empty(len(d_ks)) for k in ("max_weight_unscaled", "max_weight_scaled", "jac_norm_unscaled", "jac_norm_scaled")}
    for i, d in enumerate(d_ks):
        x = logits[int(d)]  # (n, T)
        for name, z in (("unscaled", x), ("scaled", x / math.sqrt(d))):
            w = softmax(z)  # (n, T) weights, rows sum to 1
            out[f"max_weight_{name}"][i] = w.max(axis=1).mean()
            out[f"jac_norm_{name}"][i] = np.median(softmax_jacobian_norm(w))
    out["d_k"] = d_ks
    return out


class DivisorExplorer(Explorer):
    """A ``d_k`` slider (1 … 1024): the spread of ``q · k`` with and without the divisor, and what follows.

    Top left: histograms of ``q · k`` and ``q · k / √d_k`` for random unit-variance q, k, on a logarithmic
    density axis (from ``hist_floor`` up), so that the wide, low histogram of ``q · k`` at large d_k stays as
    visible as the narrow, tall one of ``q · k / √d_k``; both standard deviations are shown to the same precision.
    Top right: a typical query's weights over T = 8 keys (the draw with the median largest weight),
    unscaled and scaled.
    Bottom: the mean largest weight (the dotted line is 1/T_k, the largest weight of a uniform row) and the
    median Jacobian norm ``‖diag(w) − w wᵀ‖_F`` (w: the weights; it bounds how much a gradient through the
    softmax is scaled) against d_k, with the current d_k marked.
    """

    defaults = {"d_k": 64}
    T = 8
    n_hist = 1000  # draws of one query against T keys for the histograms
    edges = np.arange(-100.0, 100.5, 1.0)
    hist_floor = 1e-4  # bottom of the log density axis: one draw in a bin is 1 / (n_hist T) = 1.25e-4 per unit
    hist_top = 1.0
    alt = ("Four panels. Top left: two histograms of dot products of random vectors, on a logarithmic density "
           "axis: without the divisor the spread grows with the width d_k, with it the spread stays near 1. "
           "Top right: one query's "
           f"softmax weights over {T} keys with and without the divisor; without it, at large d_k, one weight takes almost everything. "
           "Bottom left: the average largest weight against d_k, rising towards 1 without the divisor and flat "
           "with it; a dotted line marks the largest weight of a uniform row. Bottom right: the median norm of "
           "the softmax Jacobian, which bounds how much a gradient passing through the softmax is scaled, against "
           "d_k on log axes, collapsing without the divisor and flat with it.")

    live_script = "divisor.js"
    live_title = "Proposition 3 explorer"
    live_usage = ("Move the width <i>d</i><sub>k</sub>: the two histograms and the circled points on the curves "
                  "follow.")
    live_size = (900, 585)
    live_controls = [Control("d_k", "dₖ", "choice", options=[(str(d), d) for d in D_K_GRID], ordered=True)]

    def __init__(self, **params):
        # The slider has eleven widths: draw every width's scores once, here, not per move.
        self.logits = draw_logits(D_K_GRID, T=self.T, n=self.n_hist)
        self.curves = saturation_curves(D_K_GRID, T=self.T, n=self.n_hist, logits=self.logits)
        super().__init__(figsize=(10, 6.4), **params)

    def update(self, **params):
        # Refuse a bad width before storing it, so a failed move leaves the explorer as it was.
        if "d_k" in params and params["d_k"] not in D_K_GRID:
            raise ValueError(f"d_k must be one of {D_K_GRID}; got {params['d_k']!r}")
        return super().update(**params)

    def _draw(self):
        (ax_h, ax_w), (ax_m, ax_g) = self.fig.subplots(2, 2)
        self.ax_h, self.ax_w, self.ax_m, self.ax_g = ax_h, ax_w, ax_m, ax_g
        zeros = np.zeros(len(self.edges) - 1)
        # the unscaled histogram is wide and low: on a log density axis it stays as visible as the tall one
        floor = self.hist_floor
        self.hist_unscaled = ax_h.stairs(zeros, self.edges, baseline=floor, fill=True, alpha=0.85, color=UNSCALED,
                                         edgecolor=UNSCALED, label=r"$q\cdot k$")
        self.hist_scaled = ax_h.stairs(zeros, self.edges, baseline=floor, fill=True, alpha=0.6, color=SCALED,
                                       label=r"$q\cdot k/\sqrt{d_k}$")
        ax_h.set_yscale("log")
        ax_h.set(xlim=(-100, 100), ylim=(floor, self.hist_top), xlabel="value",
                 ylabel="fraction per unit (log scale)")
        ax_h.legend(loc="upper right", fontsize=8)
        self.std_text = ax_h.text(0.02, 0.95, "", transform=ax_h.transAxes, va="top", fontsize=8)

        pos = np.arange(self.T)
        self.bars_unscaled = ax_w.bar(pos - 0.2, np.zeros(self.T), width=0.4, color=UNSCALED, label="unscaled")
        self.bars_scaled = ax_w.bar(pos + 0.2, np.zeros(self.T), width=0.4, color=SCALED, label=r"$/\sqrt{d_k}$")
        # headroom above weight 1 for the legend, which stays in the static background (bars never reach it)
        ax_w.set(ylim=(0, 1.32), yticks=np.linspace(0, 1, 6), xticks=pos, xticklabels=[f"$k_{j + 1}$" for j in pos],
                 ylabel="weight")
        ax_w.legend(loc="upper right", fontsize=8, ncols=2)

        c = self.curves
        for ax in (ax_m, ax_g):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("$d_k$")
        ax_m.plot(c["d_k"], c["max_weight_unscaled"], "o-", color=UNSCALED, ms=3, label="unscaled")
        ax_m.plot(c["d_k"], c["max_weight_scaled"], "o-", color=SCALED, ms=3, label=r"$/\sqrt{d_k}$")
        ax_m.axhline(1 / self.T, color="0.45", ls=":", lw=1)
        ax_m.text(0.02, 1 / self.T + 0.02, r"uniform row: $1/T_k$", transform=ax_m.get_yaxis_transform(),
                  fontsize=8, color="0.3", va="bottom")
        ax_m.set(ylim=(0, 1.05), ylabel="mean largest weight", title=f"largest of {self.T} weights (average)")
        ax_m.legend(loc="center right", fontsize=8)
        ax_g.set_yscale("log")
        ax_g.plot(c["d_k"], c["jac_norm_unscaled"], "o-", color=UNSCALED, ms=3, label="unscaled")
        ax_g.plot(c["d_k"], c["jac_norm_scaled"], "o-", color=SCALED, ms=3, label=r"$/\sqrt{d_k}$")
        ax_g.set(ylabel=r"median $\|\mathrm{diag}(w)-ww^\top\|_F$",
                 title="softmax Jacobian norm (bounds the gradient)")
        ax_g.legend(loc="lower left", fontsize=8)
        (self.mark_m,) = ax_m.plot([], [], "o", ms=9, mfc="none", mec="black", mew=1.5)
        (self.mark_g,) = ax_g.plot([], [], "o", ms=9, mfc="none", mec="black", mew=1.5)
        self.vline_m = ax_m.axvline(1, color="0.5", lw=0.8)
        self.vline_g = ax_g.axvline(1, color="0.5", lw=0.8)

    def _animated(self):
        return [self.hist_unscaled, self.hist_scaled, self.std_text, self.ax_h.title,
                *self.bars_unscaled, *self.bars_scaled, self.ax_w.title,
                self.vline_m, self.vline_g, self.mark_m, self.mark_g]

    def _redraw(self):
        r = self.compute()
        d = r["d_k"]
        h_u, h_s = r["hist_unscaled"], r["hist_scaled"]
        s_u, s_s = r["weights_unscaled"], r["weights_scaled"]
        # an empty bin sits on the floor of the log axis (its density, 0, has no logarithm)
        self.hist_unscaled.set_data(np.maximum(h_u, self.hist_floor), self.edges)
        self.hist_scaled.set_data(np.maximum(h_s, self.hist_floor), self.edges)
        self.std_text.set_text(self.std_lines(r))
        self.ax_h.set_title(f"spread of q·k and q·k / √dₖ, dₖ = {d}", fontsize=10)  # plain text: see base.Explorer

        for bar, h in zip(self.bars_unscaled, s_u):
            bar.set_height(h)
        for bar, h in zip(self.bars_scaled, s_s):
            bar.set_height(h)
        self.ax_w.set_title(f"a typical query: largest weight {s_u.max():.2f} unscaled, {s_s.max():.2f} scaled",
                            fontsize=10)

        self.mark_m.set_data([d, d], [r["mean_max_unscaled"], r["mean_max_scaled"]])
        self.mark_g.set_data([d, d], [r["jac_norm_unscaled"], r["jac_norm_scaled"]])
        self.vline_m.set_xdata([d, d])
        self.vline_g.set_xdata([d, d])

    @staticmethod
    def std_lines(r) -> str:
        """The two standard deviations, written to the same precision (at d_k = 1 they are one number), and √d_k."""
        return (f"std of q·k: {r['std_unscaled']:.2f}  (√dₖ = {math.sqrt(r['d_k']):.2f})\n"
                f"std of q·k / √dₖ: {r['std_scaled']:.2f}")  # plain text: see base.Explorer

    def compute(self):
        """At the current d_k: ``measure(d_k)`` and the saturation curves' points (mean largest weight,
        median Jacobian norm), unscaled and scaled."""
        d = int(self.params["d_k"])
        if d not in D_K_GRID:
            raise ValueError(f"d_k must be one of {D_K_GRID}; got {self.params['d_k']!r}")
        i = D_K_GRID.index(d)
        c = self.curves
        return {"d_k": d, **self.measure(d),
                **{f"mean_max_{k}": float(c[f"max_weight_{k}"][i]) for k in ("unscaled", "scaled")},
                **{f"jac_norm_{k}": float(c[f"jac_norm_{k}"][i]) for k in ("unscaled", "scaled")}}

    def measure(self, d: int) -> dict:
        """What the picture shows at width ``d``: histogram densities (len(edges) - 1,), the scores' standard
        deviations, and a typical query's T weights (the draw with the median largest weight), unscaled and scaled."""
        x = self.logits[d]  # (n_hist, T), unscaled
        xs = x / math.sqrt(d)  # the same draws, divided by √d_k
        width = np.diff(self.edges)
        h_u = np.histogram(x, self.edges)[0] / (x.size * width)  # density: area 1 (within the axis range)
        h_s = np.histogram(xs, self.edges)[0] / (xs.size * width)
        w_u = softmax(x)  # (n_hist, T)
        typical = int(np.argsort(w_u.max(axis=1))[len(w_u) // 2])  # the draw with the median largest weight
        return {"std_unscaled": float(x.std()), "std_scaled": float(xs.std()),
                "weights_unscaled": w_u[typical], "weights_scaled": softmax(xs[typical]),
                "hist_unscaled": h_u, "hist_scaled": h_s}

    def live_data(self):
        c = self.curves
        return {"T": self.T, "edges": self.edges, "colours": [UNSCALED, SCALED], "d_k": list(D_K_GRID),
                "hist_floor": self.hist_floor, "hist_top": self.hist_top,
                **{k: c[k] for k in ("max_weight_unscaled", "max_weight_scaled", "jac_norm_unscaled", "jac_norm_scaled")},
                "by_d_k": [self.measure(d) for d in D_K_GRID]}

    def live_values(self):
        r = self.compute()
        out = {}
        for k in ("unscaled", "scaled"):
            out[f"std_{k}"] = r[f"std_{k}"]
            out[f"top_{k}"] = float(np.max(r[f"weights_{k}"]))
            out[f"mean_max_{k}"] = r[f"mean_max_{k}"]
            out[f"jac_norm_{k}"] = r[f"jac_norm_{k}"]
        return out
