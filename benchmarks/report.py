"""Tables from a results dict: plain text for the terminal, Markdown for results/latest.md."""
from __future__ import annotations

from pathlib import Path


def _mib(b) -> str:
    return "—" if b is None else f"{b / 2**20:,.1f}"


def _ms(s) -> str:
    return "—" if s is None else f"{1e3 * s:,.1f}"


def _yes(ok) -> str:
    return "—" if ok is None else ("yes" if ok else "**no**")


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
        return out + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths)))  # noqa: E731
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def machine_lines(m: dict, markdown: bool) -> list[str]:
    mem = m.get("memory_bytes") or {}
    total = f"{mem['total'] / 2**30:.0f} GiB" if mem.get("total") else "?"
    blas = "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')} kernel, "
                     f"{b.get('num_threads')} threads)" for b in m.get("blas", []) if b.get("user_api") == "blas")
    removed = m.get("blas_env_removed") or {}
    env = (f"unset for this run: {', '.join(f'{k}={v}' for k, v in removed.items())}" if removed
           else "no OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the environment")
    items = [
        ("date", m.get("date")),
        ("commit", m.get("git_commit")),
        ("CPU", f"{m.get('cpu_model')}, {m.get('usable_cores')} usable cores "
                f"({m.get('physical_cores')} physical), {total} RAM"),
        ("load average at start (1, 5, 15 min)", ", ".join(f"{x:.2f}" for x in m.get("load_average_1_5_15") or [])),
        ("Python / NumPy", f"{m.get('python')} / {m.get('numpy')}"),
        ("BLAS (threadpoolctl)", blas or "unknown"),
        ("BLAS environment", env),
    ]
    if markdown:
        return [f"- **{k}**: {v}" for k, v in items]
    return [f"{k}: {v}" for k, v in items]


def kernel_lines(k: dict, markdown: bool, compact: bool = False) -> list[str]:
    """The kernel benchmark's text. ``compact`` (for a book page): fewer columns, and one note under the
    table instead of a note column."""
    rate = k["matmul"]
    out = [f"Matrix-multiply rate (float32, {rate['n']}×{rate['n']} @ {rate['n']}×{rate['n']}, best of 3): "
           f"{rate['gflops']:.0f} GFLOP/s; the attention-shaped product ({rate['n']}×64 @ 64×{rate['n']}): "
           f"{rate['qk_gflops']:.0f} GFLOP/s.", ""]
    header = ["T", "impl", "median ms", "runs", "peak MiB", "peak / T² floats", "GFLOP/s", "of matmul", "agrees", "note"]
    rows = []
    for r in k["rows"]:
        if "skipped" in r:
            rows.append([str(r["T"]), r["impl"], "—", "0", "—", "—", "—", "—", "—", "skipped: " + r["skipped"]])
            continue
        agrees = r.get("agrees")
        agrees = "ref" if agrees is None else f"{_yes(agrees)} ({r['max_abs_diff']:.1e})"
        rows.append([
            str(r["T"]), r["impl"], _ms(r["median_s"]), str(r["n"]), _mib(r.get("peak_bytes")),
            "—" if r.get("peak_over_score_matrix") is None else f"{r['peak_over_score_matrix']:.3f}",
            f"{r['gflops']:.1f}", f"{r['fraction_of_matmul_rate']:.1%}", agrees, r.get("peak_note", ""),
        ])
    if compact:  # T, impl, median ms, peak MiB, GFLOP/s, of matmul, agrees (the difference goes)
        keep = [0, 1, 2, 4, 6, 7, 8]
        notes = sorted({r[9] for r in rows if r[9]})
        rows = [[row[i].split(" (")[0] if i == 8 else row[i] for i in keep] for row in rows]
        header = [header[i] for i in keep]
        out += _table(header, rows, markdown) + ([""] + [f"— : {n}" for n in notes] if notes else [])
    else:
        out += _table(header, rows, markdown)
    if k.get("slopes"):
        out += ["", "Fitted log-log slopes against T (T ≥ 1024): " + "; ".join(
            f"{impl}: time {s['time']:.2f}" + (f", memory {s['memory']:.2f}" if "memory" in s else "")
            + f" (T {s['T_range'][0]}–{s['T_range'][1]})" for impl, s in k["slopes"].items())]
    g = k.get("goals", {})
    if "memory_met" in g:
        out += ["", f"Goals at T = {g['T']}:", ""]
        goal_rows = [
            ["blocked peak memory / naive", f"{g['blocked_memory_over_naive']:.4f} (1/{1 / g['blocked_memory_over_naive']:.0f})",
             g["memory_goal"], _yes(g["memory_met"])],
            ["blocked time / naive", f"{g['blocked_time_over_naive']:.3f}", g["time_goal"], _yes(g["time_met"])],
            ["naive GFLOP/s / matmul rate", f"{g['naive_fraction_of_matmul_rate']:.3f} (best at any T: "
             f"{g['naive_best_fraction_any_T']:.3f})", g["rate_goal"], _yes(g["rate_met"])],
        ]
        out += _table(["goal", "measured", "aim", "met"], goal_rows, markdown)
        if "products_only_fraction_of_matmul_rate" in g:
            out += ["", f"The ceiling: naive attention's two matrix products alone (Q Kᵀ, then the weights times V, "
                        f"into new arrays) reach {g['products_only_fraction_of_matmul_rate']:.3f} of the square "
                        f"matrix-multiply rate at T = {g['T']}; the naive version reaches "
                        f"{g['naive_fraction_of_products_rate']:.2f} of its own products' rate. The remaining time "
                        f"is the softmax's passes over the T×T matrix, which stream from memory."]
        torch_row = next((r for r in k["rows"] if r["impl"] == "torch_sdpa" and r["T"] == g["T"] and "median_s" in r), None)
        if torch_row:
            out += ["", f"For comparison, PyTorch's fused `scaled_dot_product_attention` on the CPU reaches "
                        f"{torch_row['fraction_of_matmul_rate']:.3f} of the same rate at T = {g['T']}."]
    elif g.get("note"):
        out += ["", f"Goals: {g['note']}"]
    return out


def startup_lines(s: dict, markdown: bool) -> list[str]:
    rows = [[r["command"], _ms(r["median_s"]), _ms(r["p95_s"]), _ms(r["min_s"]), str(r["n"])] for r in s["rows"]]
    out = _table(["command", "median ms", "p95 ms", "min ms", "runs"], rows, markdown)
    return out + ["", f"`import attn` costs {s['attn_minus_numpy_ms']:.0f} ms more than `import numpy` "
                      f"(×{s['attn_over_numpy']:.2f})."]


def widget_lines(w: dict, markdown: bool) -> list[str]:
    rows = []
    for r in w["rows"]:
        if "skipped" in r:
            rows.append([r["widget"], "—", "—", "—", "—", "—", "—", "—", "skipped: " + r["skipped"]])
        else:
            png = r.get("png_median_ms")
            rows.append([r["widget"], str(r["frames"]), f"{r['update_median_ms']:.1f}", f"{r['update_p95_ms']:.1f}",
                         f"{r['naive_median_ms']:.1f}", f"{r['naive_p95_ms']:.1f}", f"{r['ratio_naive_over_update']:.1f}×",
                         "—" if png is None else f"{png:.1f}",
                         f"median < {w['goal_median_ms']:.0f} ms: {_yes(r['median_met'])}; "
                         f"≥ {w['goal_ratio']:.0f}×: {_yes(r['ratio_met'])}"])
    return _table(["widget", "frames", "update median ms", "update p95 ms", "naive median ms", "naive p95 ms",
                   "naive / update", "+ PNG ms", "goals"], rows, markdown)


def explorer_lines(e: dict, markdown: bool) -> list[str]:
    from .explorers import lines

    return lines(e, markdown, _table)


def book_lines(b: dict, markdown: bool) -> list[str]:
    rows = [[name, f"{b[key]['seconds']:.1f}", "ok" if b[key]["ok"] else f"**failed** (exit {b[key]['returncode']})",
             str(b[key]["warnings"])] for name, key in (("clean strict build", "clean"), ("no-change rebuild", "rebuild"))]
    out = _table(["build", "seconds", "result", "warning lines"], rows, markdown)
    return out + ["", f"Clean build under {b['goal_clean_s']:.0f} s: {_yes(b['clean_met'])}."]


def _grading_lines(res: dict, markdown: bool) -> list[str]:
    from .grading import lines

    return lines(res, markdown)


def render(results: dict, markdown: bool = False) -> str:
    h = (lambda t: f"## {t}") if markdown else (lambda t: f"\n== {t} ==")
    out = ["# attn benchmarks" if markdown else "attn benchmarks", ""]
    out += machine_lines(results["machine"], markdown)
    sections = [("kernel", "Naive vs blocked attention (d_k = d_v = 64, float32)", kernel_lines),
                ("startup", "Start-up", startup_lines),
                ("widgets", "Widget updates (Agg: one blitted render per move, against a new figure per move)", widget_lines),
                ("explorers", "Live explorers: input handler in headless Chromium (web page and JupyterLab)", explorer_lines),
                ("book", "Book build", book_lines),
                ("grading", "Grading a class (attn-grade)", _grading_lines)]
    for key, title, fn in sections:
        if key in results:
            out += ["", h(title), ""] + fn(results[key], markdown)
        elif key in results.get("not_run", {}):
            out += ["", h(title), "", f"Not run: {results['not_run'][key]}"]
    out += ["", f"Total benchmark time: {results.get('total_seconds', 0):.0f} s."]
    return "\n".join(out) + "\n"


README_START = "<!-- benchmarks:start (written by bin/bench; do not edit by hand) -->"
README_END = "<!-- benchmarks:end -->"


def update_readme(readme: Path, results: dict) -> bool:
    """Replace the block between README_START and README_END in ``readme`` by this run's tables.

    Headings are moved one level down (## to ###) so that they sit under the README's own section. Returns
    False (and leaves the file alone) when the markers are missing.
    """
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        return False
    lines = render(results, markdown=True).splitlines()[2:]  # drop the "# attn benchmarks" title
    body = "\n".join("###" + line[2:] if line.startswith("## ") else line for line in lines).strip()
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    readme.write_text(f"{head}{README_START}\n{body}\n{README_END}{tail}")
    return True
