"""(a) Naive attention against blocked attention, T = 256 … 32768, d_k = d_v = 64, float32.

For each T and each implementation: time (median of repeated runs), peak
memory (tracemalloc, which NumPy reports its buffers to), achieved GFLOP/s
(the two matrix products, 2·T²·d_k + 2·T²·d_v flops; the softmax's
exponentials are not counted) and that rate as a fraction of the machine's
float32 matrix-multiply rate measured at the start of the same run.

For every T where the naive version runs, the benchmark also times its two
matrix products alone (``S = Q @ K.T`` then ``S @ V``, each into a new array as
the naive version allocates them): no implementation that forms the T×T score
matrix in NumPy can be faster than that, so it is the ceiling against which the
naive version's rate is read.
(e) If PyTorch is importable, ``torch.nn.functional.scaled_dot_product_attention``
on the CPU is a reference row and is checked against NumPy (rtol 1e-5, atol 1e-6).
"""
from __future__ import annotations

import importlib.util
from typing import Callable

import numpy as np

import attn
from attn.cost import fit_loglog_slope, traced_peak

from .machine import memory_bytes
from .timing import repeat_timed, summary, timed

T_VALUES = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
QUICK_T_VALUES = [256, 512, 1024]
D = 64
DTYPE = np.float32
RTOL, ATOL = 1e-5, 1e-6
GOAL_T = 16384
#: fraction of the RAM available at the start that the naive version may be predicted to need
MEMORY_SHARE = 0.6
#: skip the naive version when one run is predicted to take longer than this
NAIVE_TIME_LIMIT_S = 90.0


def matmul_rate(n: int = 4096, dtype=DTYPE, runs: int = 3) -> dict:
    """The machine's float32 matrix-multiply rate: best of ``runs`` (n, n) @ (n, n) products, in GFLOP/s."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n), dtype=dtype)
    B = rng.standard_normal((n, n), dtype=dtype)
    A @ B  # warm-up: BLAS threads, page faults
    best = min(timed(lambda: A @ B)[0] for _ in range(runs))
    # the product of the attention's shape, (T, d) @ (d, T), for context
    Q = rng.standard_normal((n, D), dtype=dtype)
    K = rng.standard_normal((n, D), dtype=dtype)  # not Q again: NumPy sends Q @ Q.T to a slower symmetric routine
    Q @ K.T
    best_qk = min(timed(lambda: Q @ K.T)[0] for _ in range(runs))
    return {
        "n": n,
        "dtype": np.dtype(dtype).name,
        "gflops": 2 * n**3 / best / 1e9,
        "seconds": best,
        "qk_shape": [n, D, n],
        "qk_gflops": 2 * n * n * D / best_qk / 1e9,
    }


def products_only(Q, K, V) -> np.ndarray:
    """Naive attention's two matrix products and nothing else: (T, d_k)·(d_k, T) -> (T, T), then ·(T, d_v)."""
    S = Q @ K.T  # (T, d_k) @ (d_k, T) -> (T, T)
    return S @ V  # (T, T) @ (T, d_v) -> (T, d_v)


def attention_flops(T: int, d_k: int = D, d_v: int = D) -> int:
    return 2 * T * T * d_k + 2 * T * T * d_v  # Q Kᵀ and weights · V


#: how the blocked version tiles the work (attn's defaults), recorded with the results: Proposition 5's page
#: explains the blocked peak memory from it
BLOCKED_CONFIG = {"block_size": attn.blocked.DEFAULT_BLOCK_SIZE,
                  "query_block_size": attn.blocked.DEFAULT_QUERY_BLOCK_SIZE}


def implementations() -> dict[str, Callable]:
    impls = {
        "naive": lambda Q, K, V: attn.attention(Q, K, V).output,
        "blocked": lambda Q, K, V: attn.blocked_attention(Q, K, V, **BLOCKED_CONFIG),
    }
    if importlib.util.find_spec("torch") is not None:
        impls["torch_sdpa"] = _torch_sdpa()
    return impls


def _torch_sdpa() -> Callable:
    import torch
    import torch.nn.functional as F

    def run(Q, K, V):
        with torch.inference_mode():
            q, k, v = (torch.from_numpy(x).unsqueeze(0) for x in (Q, K, V))  # (1, T, d)
            return F.scaled_dot_product_attention(q, k, v)[0].numpy()  # (T, d_v)

    return run


def steps(T_values) -> int:
    """How many progress-bar ticks :func:`run` makes."""
    return 1 + len(T_values) * len(implementations())


def run(T_values=T_VALUES, tick: Callable[[str], None] = lambda s: None, note: Callable[[str], None] = print,
        max_naive_T: int | None = None, matmul_n: int = 4096) -> dict:
    tick("matmul rate")
    rate = matmul_rate(matmul_n)
    note(f"float32 matmul rate: {rate['gflops']:.0f} GFLOP/s ({rate['n']}² square); "
         f"Q Kᵀ shape ({rate['n']}×{D})·({D}×{rate['n']}): {rate['qk_gflops']:.0f} GFLOP/s")
    impls = implementations()
    rows = []
    naive_bytes_per_entry = 4.0 * np.dtype(DTYPE).itemsize  # prior: about four T×T float32 arrays
    naive_last = None  # (T, seconds)
    rng = np.random.default_rng(1)
    for T in T_values:
        Q, K, V = (rng.standard_normal((T, D), dtype=DTYPE) for _ in range(3))
        outputs = {}
        for name, fn in impls.items():
            tick(f"{name} T={T}")
            row = {"T": T, "impl": name, "d_k": D, "d_v": D, "dtype": np.dtype(DTYPE).name}
            if name == "naive":
                reason = _naive_skip_reason(T, naive_bytes_per_entry, naive_last, max_naive_T)
                if reason:
                    row["skipped"] = reason
                    note(f"naive T={T}: skipped ({reason})")
                    rows.append(row)
                    continue
            call = lambda: fn(Q, K, V)  # noqa: E731
            if name == "torch_sdpa":  # torch's allocations are invisible to tracemalloc
                first, out = timed(call)
                row["peak_bytes"] = None
                row["peak_note"] = "not traced (torch allocates outside tracemalloc)"
            else:
                peak, first, out = traced_peak(call)  # also the warm-up run
                row["peak_bytes"] = int(peak)
                row["peak_over_score_matrix"] = peak / (T * T * np.dtype(DTYPE).itemsize)
            row["first_run_s"] = first
            times = repeat_timed(call, first)
            row.update(summary(times))
            row["times_s"] = times
            row["gflops"] = attention_flops(T) / row["median_s"] / 1e9
            row["fraction_of_matmul_rate"] = row["gflops"] / rate["gflops"]
            outputs[name] = out
            if name == "naive":
                naive_bytes_per_entry = row["peak_bytes"] / (T * T)  # measured: replaces the prior
                naive_last = (T, row["median_s"])
                first_p, _ = timed(lambda: products_only(Q, K, V))
                products = summary(repeat_timed(lambda: products_only(Q, K, V), first_p))
                row["products_only_s"] = products["median_s"]
                row["products_only_gflops"] = attention_flops(T) / products["median_s"] / 1e9
                row["fraction_of_products_rate"] = row["gflops"] / row["products_only_gflops"]
            rows.append(row)
            del out
        ref_name = "naive" if "naive" in outputs else "blocked"
        for row in rows:
            if row["T"] == T and row["impl"] in outputs and row["impl"] != ref_name:
                diff = np.abs(outputs[row["impl"]].astype(np.float64) - outputs[ref_name])
                row["agrees_with"] = ref_name
                row["max_abs_diff"] = float(diff.max())
                row["agrees"] = bool(np.allclose(outputs[row["impl"]], outputs[ref_name], rtol=RTOL, atol=ATOL))
        del outputs, Q, K, V
    return {"matmul": rate, "rows": rows, "slopes": _slopes(rows), "goals": goals(rows, rate),
            "tolerance": {"rtol": RTOL, "atol": ATOL}, "blocked_config": dict(BLOCKED_CONFIG)}


def _naive_skip_reason(T, bytes_per_entry, last, max_T) -> str | None:
    if max_T is not None and T > max_T:
        return f"T > --max-naive-T {max_T}"
    need = bytes_per_entry * T * T
    avail = memory_bytes()["available"]
    if avail is not None and need > MEMORY_SHARE * avail:
        return (f"predicted peak {need / 2**30:.1f} GiB > {MEMORY_SHARE:.0%} of the "
                f"{avail / 2**30:.1f} GiB available now")
    if last is not None:
        T0, s0 = last
        predicted = s0 * (T / T0) ** 2 * 1.1
        if predicted > NAIVE_TIME_LIMIT_S:
            return f"predicted {predicted:.0f} s per run > {NAIVE_TIME_LIMIT_S:.0f} s"
    return None


def _slopes(rows) -> dict:
    """Fitted log-log slopes of time and peak memory against T, per implementation (T ≥ 1024 only)."""
    out = {}
    for impl in sorted({r["impl"] for r in rows}):
        rs = [r for r in rows if r["impl"] == impl and "median_s" in r and r["T"] >= 1024]
        if len(rs) >= 2:
            T = [r["T"] for r in rs]
            out[impl] = {"time": fit_loglog_slope(T, [r["median_s"] for r in rs]).slope}
            mem = [r.get("peak_bytes") for r in rs]
            if all(m for m in mem):
                out[impl]["memory"] = fit_loglog_slope(T, mem).slope
            out[impl]["T_range"] = [min(T), max(T)]
    return out


def goals(rows, rate, T: int = GOAL_T) -> dict:
    """The kernel's aims at T = 16384: memory ≤ 1/20 of naive, time ≤ 1.3× naive, naive ≥ ½ matmul rate."""
    by = {r["impl"]: r for r in rows if r["T"] == T}
    naive, blocked = by.get("naive"), by.get("blocked")
    g = {"T": T}
    if not naive or "median_s" not in naive or not blocked or "median_s" not in blocked:
        g["note"] = f"naive or blocked not measured at T={T}"
        return g
    mem_ratio = blocked["peak_bytes"] / naive["peak_bytes"]
    time_ratio = blocked["median_s"] / naive["median_s"]
    frac = naive["fraction_of_matmul_rate"]
    best_frac = max(r["fraction_of_matmul_rate"] for r in rows if r["impl"] == "naive" and "median_s" in r)
    if "products_only_gflops" in naive:
        g["products_only_fraction_of_matmul_rate"] = naive["products_only_gflops"] / rate["gflops"]
        g["naive_fraction_of_products_rate"] = naive["fraction_of_products_rate"]
    g.update({
        "blocked_memory_over_naive": mem_ratio, "memory_goal": "<= 1/20", "memory_met": mem_ratio <= 1 / 20,
        "blocked_time_over_naive": time_ratio, "time_goal": "<= 1.3", "time_met": time_ratio <= 1.3,
        "naive_fraction_of_matmul_rate": frac, "naive_best_fraction_any_T": best_frac,
        "rate_goal": ">= 0.5", "rate_met": frac >= 0.5,
        "matmul_gflops": rate["gflops"],
    })
    return g
