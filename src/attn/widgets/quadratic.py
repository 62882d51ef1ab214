"""Proposition 5's explorer: the measured time and memory of the score matrix against T, on log-log axes."""
from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from ..cost import fit_loglog_slope, measure_attention, measure_score_matrix
from ..palette import BLOCKED, NAIVE
from .base import Explorer
from .live import Control



class QuadraticCostExplorer(Explorer):
    """Pick a sequence length ``T``; see where it sits on the measured cost curves.

    Left: seconds to form the score matrix Q Kᵀ/√d_k (T×T) against T, with the fitted log-log
    slope. Right: peak memory of full attention and of blocked attention, with their fitted slopes
    (counted: 2 and 1). All points are measured once, when the explorer is made, on ``T_values``, in
    ``dtype`` (default float64, 8 bytes a number: the score matrix's size depends on it); moving the
    slider only moves the marker and the labels, so it costs no measurement.
    """

    defaults = {"T": 512}

    def __init__(self, T_values=(128, 256, 512, 1024, 2048), d_k: int = 64, block_size: int = 64,
                 repeats: int = 5, dtype=np.float64, **params):
        self.T_values = np.asarray(T_values)
        self.d_k = d_k
        self.block_size = block_size  # keys per block of the blocked version (all queries in one block)
        self.dtype = np.dtype(dtype)
        # One BLAS thread: on a shared machine, multi-threaded timings of small products are mostly noise.
        with threadpool_limits(limits=1):
            self.time = measure_score_matrix(self.T_values, d_k=d_k, repeats=repeats, dtype=self.dtype)
        self.naive = measure_attention(self.T_values, d_k=d_k, repeats=1, dtype=self.dtype)
        self.blocked = measure_attention(self.T_values, d_k=d_k, repeats=1, blocked=True, block_size=block_size,
                                         dtype=self.dtype)
        self.fit_time = fit_loglog_slope(self.time.T, self.time.seconds)
        self.fit_naive = fit_loglog_slope(self.naive.T, self.naive.peak_bytes)
        self.fit_blocked = fit_loglog_slope(self.blocked.T, self.blocked.peak_bytes)
        super().__init__(figsize=(9, 3.6), **params)

    @property
    def alt(self):
        """What the figure shows, with the slopes this explorer measured (never promised ones)."""
        return ("Two log-log plots against the sequence length T. Left: the measured time to build the T by T score "
                f"matrix, points close to a straight line of fitted slope {self.fit_time.slope:.2f}. Right: peak "
                f"memory of full attention, fitted slope {self.fit_naive.slope:.2f}, and of blocked attention, "
                f"fitted slope {self.fit_blocked.slope:.2f}. A marker shows the selected T.")

    @property
    def dtype_words(self) -> str:
        """The measured dtype in words, as the title and the table say it: ``"float64, 8 bytes a number"``."""
        return f"{self.dtype.name}, {self.dtype.itemsize} bytes a number"

    live_script = "quadratic.js"
    live_title = "Proposition 5 explorer"
    live_usage = ("Pick a measured length <i>T</i>: the rings mark it on both panels and the table gives its "
                  "numbers, measured when the explorer was made.")
    live_size = (900, 300)

    @property
    def live_controls(self):  # the measured lengths, known once measured
        return [Control("T", "T", "choice", options=[(str(int(t)), int(t)) for t in self.T_values], ordered=True)]

    def live_state(self):
        return {"T": self.compute()["T"]}

    def live_data(self):
        T = self.T_values
        return {"T": [int(t) for t in T], "colours": [NAIVE, BLOCKED], "ms": self.time.seconds * 1e3,
                "fit_ms": self.fit_time.predict(T) * 1e3, "score_mib": self.time.score_bytes / 2**20,
                "mib_full": self.naive.peak_bytes / 2**20, "mib_blocked": self.blocked.peak_bytes / 2**20,
                "fit_full": self.fit_naive.predict(T) / 2**20, "fit_blocked": self.fit_blocked.predict(T) / 2**20,
                "slope_time": self.fit_time.slope, "slope_full": self.fit_naive.slope,
                "slope_blocked": self.fit_blocked.slope, "dtype": self.dtype.name, "dtype_words": self.dtype_words}

    def compute(self):
        """At the measured length nearest the chosen T: T, its index, T² entries, the score matrix's MiB,
        the time to form it (ms) and the peak memory of naive and blocked attention (MiB), as measured."""
        i = int(np.argmin(np.abs(np.log(self.T_values) - np.log(self.params["T"]))))  # nearest measured length
        T = int(self.T_values[i])
        return {"T": T, "index": i, "entries": T * T, "score_mib": float(self.time.score_bytes[i] / 2**20),
                "ms": float(self.time.seconds[i] * 1e3), "mib_full": float(self.naive.peak_bytes[i] / 2**20),
                "mib_blocked": float(self.blocked.peak_bytes[i] / 2**20)}

    def live_values(self):
        r = self.compute()
        return {k: float(r[k]) for k in ("T", "entries", "score_mib", "ms", "mib_full", "mib_blocked")}

    def _draw(self):
        ax_t, ax_m = self.fig.subplots(1, 2)
        self.ax_t, self.ax_m = ax_t, ax_m
        T = self.T_values
        ax_t.loglog(T, self.time.seconds * 1e3, "o", color=NAIVE, label="measured")
        ax_t.loglog(T, self.fit_time.predict(T) * 1e3, "-", color=NAIVE, alpha=0.6,
                    label=f"fit: slope {self.fit_time.slope:.2f}")
        ax_t.set(xlabel="sequence length $T$", ylabel="time to form $QK^\\top/\\sqrt{d_k}$ (ms)",
                 title="time")
        ax_m.loglog(T, self.naive.peak_bytes / 2**20, "o", color=NAIVE,
                    label=f"full attention: slope {self.fit_naive.slope:.2f}")
        ax_m.loglog(T, self.blocked.peak_bytes / 2**20, "s", color=BLOCKED,
                    label=f"blocked: slope {self.fit_blocked.slope:.2f}")
        ax_m.loglog(T, self.fit_naive.predict(T) / 2**20, "-", color=NAIVE, alpha=0.6)
        ax_m.loglog(T, self.fit_blocked.predict(T) / 2**20, "--", color=BLOCKED, alpha=0.6)
        ax_m.set(xlabel="sequence length $T$", ylabel="peak memory (MiB)", title="memory")
        for ax in (ax_t, ax_m):
            ax.minorticks_off()
            ax.set_xticks(T, [str(int(t)) for t in T])  # the measured lengths, written out
            ax.legend(loc="upper left", fontsize=8)
            ax.grid(True, which="major", alpha=0.3)
        self.vlines = [ax.axvline(T[0], color="0.4", lw=1, ls=":") for ax in (ax_t, ax_m)]
        (self.marker_t,) = ax_t.plot([], [], "o", ms=12, mfc="none", mec="black", mew=2)
        (self.marker_m,) = ax_m.plot([], [], "o", ms=12, mfc="none", mec="black", mew=2)
        self.note = self.fig.suptitle("")

    def _animated(self):
        return [*self.vlines, self.marker_t, self.marker_m, self.note]

    def _redraw(self):
        r = self.compute()
        T = r["T"]
        for line in self.vlines:
            line.set_xdata([T, T])
        self.marker_t.set_data([T], [r["ms"]])
        self.marker_m.set_data([T], [r["mib_full"]])
        self.note.set_text(
            f"T = {T}: T² = {r['entries']:,} scores, {r['score_mib']:.2f} MiB in {self.dtype.name}; "
            f"formed in {r['ms']:.3f} ms"  # the precision of the live explorer's table: one number, one way
        )
