"""The temperature explorer: one row of scores through softmax(x / τ), from one-hot to uniform, with the entropy."""
from __future__ import annotations

import math

import numpy as np

from .._validate import check_tau
from ..attention import scores
from ..measures import entropy
from ..palette import BLUE
from ..softmax import softmax
from ..examples import figure3
from .base import Explorer
from .live import Control, plain_text

BAR = BLUE
TAU_MIN, TAU_MAX = 1e-2, 1e2  # the slider's range; the entropy curve covers it


class TemperatureExplorer(Explorer):
    """A τ slider (log scale) over one row of scores ``x`` (T_k,), one per key: the weights softmax(x / τ) and their entropy.

    Left: the T_k weights as bars; the largest score's bar is outlined. Right: the entropy H(τ) in nats
    against τ (log axis), between 0 (one-hot, τ → 0) and log T_k (uniform, τ → ∞), with the current τ marked.

    ``scores`` defaults to the chapter's Figure 3 row, q · k_j / √2 (weights 0.06, 0.61, 0.09, 0.24 at τ = 1).
    ``labels`` name the keys (default k₁ … k_T). ``marks`` is an optional dict label -> τ drawn as
    vertical lines on the entropy curve (for example ``{"τ = √d_k": 8.0}``).
    """

    defaults = {"tau": 1.0}
    alt = ("Two panels. Left: the softmax weights of one row of scores at temperature tau, as bars. "
           "Right: the entropy of those weights against tau on a logarithmic axis, rising from 0 (all weight "
           "on the largest score) to log T_k (every key weighted equally), with the current tau marked.")

    live_script = "temperature.js"
    live_title = "Temperature explorer"
    live_usage = ("Move the temperature <i>τ</i>: the weights and their entropy follow, from one-hot at small "
                  "<i>τ</i> to uniform at large <i>τ</i>.")
    live_size = (900, 300)
    live_controls = [Control("tau", "τ", "log", min=math.log10(TAU_MIN), max=math.log10(TAU_MAX), step=0.01)]

    def __init__(self, scores_row=None, labels=None, marks=None, **params):
        if scores_row is None:
            q, K, _ = figure3()
            scores_row = scores(q, K)[0]  # (1, 2) @ (2, 4) / √2 -> (4,)
        x = np.asarray(scores_row, dtype=float)
        if x.ndim != 1 or x.size < 2 or not np.isfinite(x).all():
            raise ValueError(f"scores_row must be a finite vector of at least 2 scores; got shape {x.shape}")
        self.x = x
        self.labels = list(labels) if labels is not None else [f"$k_{{{j + 1}}}$" for j in range(x.size)]
        if len(self.labels) != x.size:
            raise ValueError(f"labels has {len(self.labels)} names for {x.size} scores")
        self.marks = dict(marks or {})
        self.taus = np.logspace(math.log10(TAU_MIN), math.log10(TAU_MAX), 161)
        self.entropy_curve = entropy(softmax(self.x[None, :] / self.taus[:, None]))  # (161,)
        super().__init__(figsize=(9, 3.4), **params)

    def update(self, **params):
        # Refuse a bad τ before storing it, so a failed move leaves the explorer as it was.
        if "tau" in params:
            check_tau(params["tau"])
        return super().update(**params)

    def live_data(self):
        return {"x": self.x, "labels": [plain_text(label) for label in self.labels], "colour": BAR,
                "marks": [[plain_text(name), float(tau)] for name, tau in self.marks.items()],
                "taus": self.taus, "entropy": self.entropy_curve}

    def compute(self):
        """τ, the weights softmax(x / τ) (T_k,) and their entropy in nats."""
        tau = float(self.params["tau"])
        w = softmax(self.x, tau=tau)  # validates τ > 0
        return {"tau": tau, "weights": w, "entropy": float(entropy(w))}

    def live_values(self):
        r = self.compute()
        return {**{f"w{j + 1}": float(v) for j, v in enumerate(r["weights"])}, "H": r["entropy"]}

    # The bars leave a free column at the right, where the dotted line of the uniform weight 1/T_k is
    # labelled: no bar, and no bar's value, is ever drawn there, whatever τ.
    LABEL_COLUMN = 0.16  # the free column's share of the bar panel's width

    def mark_label_height(self, tau: float) -> float:
        """Where a mark's label sits on the entropy axis: in the half of [0, log T_k] away from the curve at τ."""
        H = float(entropy(softmax(self.x, tau=tau)))
        return (0.25 if H > 0.5 * math.log(self.x.size) else 0.75) * math.log(self.x.size)

    def _draw(self):
        ax_w, ax_h = self.fig.subplots(1, 2, width_ratios=[1.1, 1])
        self.ax_w, self.ax_h = ax_w, ax_h
        T = self.x.size
        pos = np.arange(T)
        top = int(np.argmax(self.x))
        self.bars = ax_w.bar(pos, np.zeros(T), color=BAR, edgecolor=["black" if j == top else BAR for j in pos],
                             linewidth=1.5)
        left, right = -0.6, T - 0.4  # the bars' own span
        ax_w.set_xlim(left, left + (right - left) / (1 - self.LABEL_COLUMN))
        ax_w.axhline(1 / T, color="0.45", ls=":", lw=1)
        self.uniform_label = ax_w.text(1 - self.LABEL_COLUMN / 2, 1 / T + 0.015, "uniform\n$1/T_k$",
                                       transform=ax_w.get_yaxis_transform(), ha="center", va="bottom",
                                       fontsize=8, color="0.3")
        ax_w.set(ylim=(0, 1.08), xticks=pos, ylabel="weight")
        ax_w.set_xticklabels(self.labels, fontsize=8 if T > 8 else 10)
        self.bar_text = [ax_w.text(j, 0, "", ha="center", fontsize=8) for j in pos] if T <= 12 else []

        # The curve lies between 0 and log T_k; the two limits are labelled outside that band, each at the
        # end of the τ axis where the curve comes close to it: one-hot below 0 at small τ, uniform above
        # log T_k at large τ.
        log_T = math.log(T)
        ax_h.plot(self.taus, self.entropy_curve, color=BAR)
        ax_h.set_xscale("log")
        ax_h.axhline(0, color="0.45", ls=":", lw=1)
        ax_h.axhline(log_T, color="0.45", ls=":", lw=1)
        self.limit_labels = [
            # each far enough from its line that the marker, which runs along the curve, clears it
            ax_h.text(TAU_MIN * 1.3, -0.07 * log_T, "0: one-hot", fontsize=8, color="0.3", ha="left", va="top"),
            ax_h.text(TAU_MAX / 1.3, 1.07 * log_T, r"$\log T_k$: uniform", fontsize=8, color="0.3", ha="right",
                      va="bottom"),
        ]
        self.mark_labels = []
        for name, tau in self.marks.items():
            ax_h.axvline(tau, color="0.5", ls="--", lw=0.8)
            self.mark_labels.append(ax_h.text(tau * 1.1, self.mark_label_height(tau), name, fontsize=8,
                                              rotation=90, va="center"))
        ax_h.set(xlim=(TAU_MIN, TAU_MAX), ylim=(-0.22 * log_T, 1.24 * log_T), xlabel=r"temperature $\tau$",
                 ylabel="entropy $H$ (nats)")
        (self.marker,) = ax_h.plot([], [], "o", color="black", ms=7)

    def _animated(self):
        return [*self.bars, *self.bar_text, self.marker, self.ax_w.title, self.ax_h.title]

    def _redraw(self):
        r = self.compute()
        tau, w, H = r["tau"], r["weights"], r["entropy"]
        for bar, wi in zip(self.bars, w):
            bar.set_height(wi)
        for j, (text, wi) in enumerate(zip(self.bar_text, w)):
            text.set_position((j, wi + 0.02))
            text.set_text(f"{wi:.2f}")
        self.marker.set_data([tau], [H])
        # plain text: see base.Explorer
        self.ax_w.set_title(f"softmax weights at τ = {tau:.3g}", fontsize=10)
        self.ax_h.set_title(f"entropy {H:.2f} nats (max log Tₖ = {math.log(self.x.size):.2f})", fontsize=10)
