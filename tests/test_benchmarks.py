"""The benchmark code runs end to end on tiny sizes and writes what the README promises (no timing asserts)."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("tqdm")
pytest.importorskip("threadpoolctl")

from benchmarks import kernel, machine, report, timing  # noqa: E402


def test_summary_median_and_p95():
    s = timing.summary([float(i) for i in range(1, 21)])  # 1 … 20
    assert s["median_s"] == 10.5 and s["p95_s"] == 19.0 and s["min_s"] == 1.0 and s["n"] == 20


def test_kernel_rows_agree_and_report_renders(tmp_path):
    res = kernel.run([32, 64], note=lambda s: None, matmul_n=128)
    rows = {(r["T"], r["impl"]): r for r in res["rows"]}
    for T in (32, 64):
        assert rows[(T, "naive")]["peak_bytes"] > 0
        assert rows[(T, "blocked")]["agrees"] is True
        assert rows[(T, "blocked")]["gflops"] > 0
    results = {"machine": machine.describe(), "kernel": res, "not_run": {"book": "test"}}
    assert results["machine"]["blas_kernel"]  # threadpoolctl names the BLAS kernel
    json.dumps(results, default=float)
    for md in (False, True):
        text = report.render(results, markdown=md)
        assert "blocked" in text and "Not run" in text


def test_naive_skipped_when_memory_would_not_allow(monkeypatch):
    monkeypatch.setattr(kernel, "memory_bytes", lambda: {"total": 1, "available": 1000})
    res = kernel.run([32], note=lambda s: None, matmul_n=64)
    naive = [r for r in res["rows"] if r["impl"] == "naive"][0]
    assert "skipped" in naive and "available" in naive["skipped"]
    assert [r for r in res["rows"] if r["impl"] == "blocked"][0]["median_s"] > 0


def test_widget_benchmark_on_a_stand_in_explorer():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from benchmarks import widgets

    class Dot:
        defaults = {"x": 0.5}

        def __init__(self, **params):
            self.params = {**self.defaults, **params}
            self.fig = Figure(figsize=(2, 2))
            (self.line,) = self.fig.subplots().plot([self.params["x"]], [0], "o")

        def update(self, **params):
            self.params.update(params)
            self.line.set_xdata([self.params["x"]])
            self.fig.canvas.draw_idle()

    row = widgets.bench_one(Dot, frames=4)
    assert row["frames"] == 4 and row["update_median_ms"] > 0 and row["ratio_naive_over_update"] > 0
