"""The teachers' grading run: N copies of a correct B01+E01 notebook, graded by attn-grade.

Reports wall time and the grader's peak memory (its own process tree, sampled with psutil) at ``--jobs 1`` and
``--jobs 2``, the speed-up from the second core, and the sandbox's overhead per notebook (``--jobs 1`` with and
without bubblewrap). Goals: a speed-up of at least 1.8 and at most 1 s of sandbox overhead per
notebook; reported, never asserted. ``python -m benchmarks.grading [--copies 200]``.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

COPIES = 200
QUICK_COPIES = 8
# A learner's right B01 and E01, written as a MyST notebook (jupytext writes the header) by _notebook().
CELLS = [
    "import numpy as np\nfrom attn.grading import check",
    """Q = np.array([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]])
K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]])
V = np.array([[1, 0], [0, 2], [2, 1]])
scores = Q @ K.T / 2
e = np.exp(scores - scores.max(axis=1, keepdims=True))
weights = (e / e.sum(axis=1, keepdims=True)).round(2)
output = (weights @ V).round(2)
check("B01")""",
    """def softmax(x, tau=1.0):
    z = np.asarray(x) / tau
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
check("E01", "softmax")""",
]


def _notebook() -> str:
    import jupytext
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                           "name": "python3"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# B01 and E01, right")] + [nbformat.v4.new_code_cell(c) for c in CELLS]
    return jupytext.writes(nb, fmt="md:myst")


def steps() -> int:
    return 4


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak resident MiB of the grader's process tree, kernels excluded: they are in sandboxes)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent, peak = psutil.Process(proc.pid), 0.0
    while proc.poll() is None:
        try:
            procs = [parent] + [p for p in parent.children(recursive=True)
                                if "ipykernel" not in " ".join(p.cmdline()) and "bwrap" not in p.name()]
            peak = max(peak, sum(p.memory_info().rss for p in procs) / 2**20)
        except psutil.Error:
            pass
        time.sleep(0.2)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode})")
    return time.perf_counter() - t0, peak


def kernel_starts(rounds: int = 10) -> dict:
    """Median seconds to start a kernel, run one cell and kill it, with and without the sandbox (alternated, so a
    busy machine slows both alike): the sandbox's own cost per notebook, measured apart from grading."""
    import statistics

    from attn.grading.runner.kernel import Kernel

    times: dict[bool, list] = {True: [], False: []}
    for _ in range(rounds):
        for sandboxed in (True, False):
            t0 = time.perf_counter()
            k = Kernel(sandboxed=sandboxed)
            try:
                k.start()
                k.execute("x = 1", 30)
            finally:
                k.close()
            times[sandboxed].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"rounds": rounds, "sandboxed": med[True], "unconfined": med[False], "overhead": med[True] - med[False]}


def run(copies: int = COPIES, tick=lambda label: None) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="attn-bench-grading-"))
    try:
        subs = folder / "class"
        subs.mkdir()
        notebook = _notebook()
        for i in range(copies):
            (subs / f"learner{i:03d}.md").write_text(notebook, encoding="utf-8")
        base = [sys.executable, "-m", "attn.grading.batch", str(subs), "-q", "--fresh"]
        out = {"copies": copies}
        for label, extra in (("jobs1", ["--jobs", "1"]), ("jobs2", ["--jobs", "2"]),
                             ("jobs1_no_sandbox", ["--jobs", "1", "--no-sandbox"])):
            tick(f"grading: {label}")
            wall, peak = _timed(base + ["-o", str(folder / label)] + extra)
            rows = (folder / f"{label}.csv").read_text(encoding="utf-8").count(",correct,")
            out[label] = {"seconds": wall, "per_notebook": wall / copies, "peak_mib": peak, "correct_rows": rows}
        out["speedup_2_jobs"] = out["jobs1"]["seconds"] / out["jobs2"]["seconds"]
        out["sandbox_overhead_per_notebook"] = (out["jobs1"]["seconds"] - out["jobs1_no_sandbox"]["seconds"]) / copies
        tick("grading: kernel starts")
        out["kernel_start"] = kernel_starts()
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lines(res: dict, markdown: bool = False) -> list[str]:
    rows = [("--jobs 1", res["jobs1"]), ("--jobs 2", res["jobs2"]), ("--jobs 1 --no-sandbox", res["jobs1_no_sandbox"])]
    out = [f"{res['copies']} copies of a correct B01+E01 notebook."]
    if markdown:
        out += ["", "| run | wall (s) | per notebook (s) | grader peak (MiB) | rows correct |", "|---|---|---|---|---|"]
        out += [f"| {n} | {r['seconds']:.1f} | {r['per_notebook']:.2f} | {r['peak_mib']:.0f} | {r['correct_rows']} |"
                for n, r in rows]
    else:
        out += [f"{n:<24} {r['seconds']:7.1f} s  {r['per_notebook']:5.2f} s/notebook  peak {r['peak_mib']:5.0f} MiB"
                f"  {r['correct_rows']} rows correct" for n, r in rows]
    out += ["", f"Speed-up from the second job: {res['speedup_2_jobs']:.2f}x (goal >= 1.8 on 2 free cores). "
            f"Sandbox overhead: {res['sandbox_overhead_per_notebook']:.2f} s per notebook (goal <= 1 s)."]
    ks = res.get("kernel_start")
    if ks:
        out += [f"Kernel start, one cell, kill (median of {ks['rounds']}, alternated): {ks['sandboxed']:.2f} s in the "
                f"sandbox, {ks['unconfined']:.2f} s without: {ks['overhead']:.2f} s of sandbox per notebook."]
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchmarks.grading", description=__doc__)
    ap.add_argument("--copies", type=int, default=COPIES)
    ap.add_argument("--starts-only", action="store_true", help="only the kernel-start comparison (a minute)")
    a = ap.parse_args()
    if a.starts_only:
        ks = kernel_starts()
        print(f"sandboxed {ks['sandboxed']:.2f} s, unconfined {ks['unconfined']:.2f} s, overhead {ks['overhead']:.2f} s")
    else:
        res = run(a.copies, tick=lambda label: print(label, file=sys.stderr))
        print("\n".join(lines(res)))
