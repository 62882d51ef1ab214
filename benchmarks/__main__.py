"""Run every benchmark: ``.venv/bin/python -m benchmarks [--quick] [--book] [--only kernel,startup,widgets,explorers,book]``.

Prints a table with a progress bar while it runs and writes
``benchmarks/results/latest.json`` and ``latest.md`` (unless ``--no-write``).
See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

# OpenBLAS reads these when NumPy loads it; on some processors they select a slower kernel.
# Clear them for this process (re-executing before NumPy is imported) and report it.
BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_REEXEC = "ATTN_BENCH_REMOVED_BLAS_ENV"


def _clear_blas_env(keep: bool) -> dict[str, str]:
    if _REEXEC in os.environ:
        return json.loads(os.environ.pop(_REEXEC))
    present = {k: os.environ[k] for k in BLAS_VARS if k in os.environ}
    if keep or not present or "numpy" in sys.modules:
        return {}
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    env[_REEXEC] = json.dumps(present)
    os.execve(sys.executable, [sys.executable, "-m", "benchmarks", *sys.argv[1:]], env)
    return present  # not reached


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes and few repeats (a smoke test, not a measurement)")
    p.add_argument("--book", action="store_true", help="also time a clean strict build of the book and a no-change rebuild (slow)")
    p.add_argument("--grading", action="store_true", help="also time the teachers' grading run (200 notebooks, ~15 min)")
    p.add_argument("--only", default="", help="comma-separated subset of: kernel, startup, widgets, explorers, book, grading")
    p.add_argument("--max-T", type=int, default=None, help="largest sequence length for the kernel benchmark")
    p.add_argument("--max-naive-T", type=int, default=None, help="largest T at which to run the naive version")
    p.add_argument("--keep-blas-env", action="store_true", help=f"do not unset {' / '.join(BLAS_VARS)}")
    p.add_argument("--no-write", action="store_true", help="print only; leave results/ alone")
    p.add_argument("--out", default=None, help="folder for latest.json and latest.md (default benchmarks/results)")
    return p.parse_args(argv)


def is_full_run(args: argparse.Namespace) -> bool:
    """Every benchmark at full size (--book or not): the only kind of run that may replace ``latest``."""
    return not (args.quick or args.only.strip() or args.max_T or args.max_naive_T)


def main(argv=None) -> int:
    args = parse(argv)
    removed = _clear_blas_env(args.keep_blas_env)

    import time
    from pathlib import Path

    from tqdm import tqdm

    from . import book, explorers, grading, kernel, machine, report, startup, widgets

    ALL = {"kernel", "startup", "widgets", "explorers", "book", "grading"}
    wanted = {s.strip() for s in args.only.split(",") if s.strip()} or set(ALL)
    unknown = wanted - ALL
    if unknown:
        print(f"unknown benchmark(s) {sorted(unknown)}", file=sys.stderr)
        return 2
    not_run = {}
    if "book" in wanted and not args.book and args.only.strip() == "":
        wanted.discard("book")
        not_run["book"] = "pass --book to time a clean strict build and a no-change rebuild (a few minutes)"
    if "grading" in wanted and not args.grading and args.only.strip() == "":
        wanted.discard("grading")
        not_run["grading"] = "pass --grading to time the teachers' grading run (200 notebooks, jobs 1 and 2)"

    T_values = kernel.QUICK_T_VALUES if args.quick else kernel.T_VALUES
    if args.max_T:
        T_values = [T for T in T_values if T <= args.max_T]
    rounds = startup.QUICK_ROUNDS if args.quick else startup.ROUNDS
    frames = widgets.QUICK_FRAMES if args.quick else widgets.FRAMES
    found, notes = widgets.discover() if "widgets" in wanted else ([], [])

    total = ((kernel.steps(T_values) if "kernel" in wanted else 0) + (startup.steps(rounds) if "startup" in wanted else 0)
             + (widgets.steps(len(found)) if "widgets" in wanted else 0)
             + (explorers.steps() if "explorers" in wanted else 0) + (book.steps() if "book" in wanted else 0)
             + (grading.steps() if "grading" in wanted else 0))
    results = {"machine": machine.describe(removed), "quick": args.quick, "not_run": not_run}
    started = time.perf_counter()
    with tqdm(total=total, unit="step", dynamic_ncols=True, file=sys.stderr) as bar:
        def tick(label: str) -> None:
            bar.set_description(label)
            bar.update(1)

        if "kernel" in wanted:
            results["kernel"] = kernel.run(T_values, tick=tick, note=bar.write, max_naive_T=args.max_naive_T)
        if "startup" in wanted:
            results["startup"] = startup.run(rounds, tick=tick)
        if "widgets" in wanted:
            results["widgets"] = widgets.run(frames, tick=tick, found=found, notes=notes)
        if "explorers" in wanted:
            results["explorers"] = explorers.run(explorers.QUICK_MOVES if args.quick else explorers.MOVES, tick=tick)
        if "book" in wanted:
            results["book"] = book.run(tick=tick)
        if "grading" in wanted:
            results["grading"] = grading.run(grading.QUICK_COPIES if args.quick else grading.COPIES, tick=tick)
    results["total_seconds"] = time.perf_counter() - started
    results["machine"]["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None

    print(report.render(results, markdown=False))
    if not args.no_write:
        out = Path(args.out) if args.out else Path(__file__).resolve().parent / "results"
        out.mkdir(parents=True, exist_ok=True)
        # "latest" is what Proposition 5 and the README show: only a run of every benchmark at full
        # size may replace it. A quick, partial or size-limited run goes to "partial".
        full = is_full_run(args)
        stem = "latest" if full else "partial"
        (out / f"{stem}.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
        (out / f"{stem}.md").write_text(report.render(results, markdown=True))
        print(f"wrote {out / (stem + '.json')} and {out / (stem + '.md')}")
        readme = Path(__file__).resolve().parents[1] / "README.md"
        if full and args.book and not args.out and report.update_readme(readme, results):
            print(f"updated the latest results in {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
