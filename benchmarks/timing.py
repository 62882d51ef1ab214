"""Small timing helpers shared by the benchmarks (traced peak memory: ``attn.cost.traced_peak``)."""
from __future__ import annotations

import gc
import math
import statistics
import time
from typing import Any, Callable


def summary(times_s: list[float]) -> dict[str, Any]:
    """Median, 95th percentile (nearest rank), min and count of a list of durations in seconds."""
    xs = sorted(times_s)
    p95 = xs[math.ceil(0.95 * len(xs)) - 1]
    return {"median_s": statistics.median(xs), "p95_s": p95, "min_s": xs[0], "n": len(xs)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` once; return (seconds, result)."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def repeat_timed(fn: Callable[[], Any], first_s: float, budget_s: float = 4.0, max_runs: int = 7,
                 single_above_s: float = 10.0) -> list[float]:
    """Time ``fn`` again a number of times chosen from how long a first run took.

    A first run of ``first_s`` seconds (already done, as a warm-up) buys
    ``budget_s / first_s`` more runs, between 1 and ``max_runs``; a run longer
    than ``single_above_s`` is repeated once only.
    """
    n = 1 if first_s >= single_above_s else max(1, min(max_runs, int(budget_s / max(first_s, 1e-9))))
    out = []
    for _ in range(n):
        gc.collect()
        out.append(timed(fn)[0])
    return out
