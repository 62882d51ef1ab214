"""The benchmark code runs end to end on tiny sizes and writes what the README promises (no timing asserts)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
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
        naive = rows[(T, "naive")]
        # the ceiling: the naive version's two products alone are timed in the same run
        assert naive["products_only_gflops"] > 0
        assert naive["fraction_of_products_rate"] == pytest.approx(naive["gflops"] / naive["products_only_gflops"])
    results = {"machine": machine.describe(), "kernel": res, "not_run": {"book": "test"}}
    assert results["machine"]["blas_kernel"]  # threadpoolctl names the BLAS kernel
    json.dumps(results, default=float)
    for md in (False, True):
        text = report.render(results, markdown=md)
        assert "blocked" in text and "Not run" in text
    compact = report.kernel_lines(res, markdown=True, compact=True)
    head = next(line for line in compact if line.startswith("| T |"))
    assert head == "| T | impl | median ms | peak MiB | GFLOP/s | of matmul | agrees |"
    assert all(line.count("|") == 8 for line in compact if line.startswith("| "))  # every row, same columns


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


def test_products_only_is_the_two_products():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((5, 3)) for _ in range(3))
    np.testing.assert_allclose(kernel.products_only(Q, K, V), (Q @ K.T) @ V, rtol=1e-14)


def test_readme_block_is_replaced_between_the_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n{report.README_START}\nold table\n{report.README_END}\nafter\n")
    results = {"machine": machine.describe(), "not_run": {"book": "not asked"}, "total_seconds": 1.0}
    assert report.update_readme(readme, results)
    text = readme.read_text()
    assert text.startswith("# Title\n\nbefore\n") and text.endswith(f"{report.README_END}\nafter\n")
    assert "old table" not in text and "### Book build" in text and "Not run: not asked" in text
    assert "# attn benchmarks" not in text  # the run's own title is dropped under the README's section
    once = readme.read_text()
    assert report.update_readme(readme, results) and readme.read_text() == once  # idempotent

    plain = tmp_path / "OTHER.md"
    plain.write_text("no markers here\n")
    assert not report.update_readme(plain, results) and plain.read_text() == "no markers here\n"


def test_widget_benchmark_on_a_real_explorer_blits():
    pytest.importorskip("matplotlib")
    from attn.widgets.temperature import TemperatureExplorer

    from benchmarks import widgets

    row = widgets.bench_one(TemperatureExplorer, frames=4)
    assert row["frames"] >= 3 and row["png_median_ms"] > 0
    assert row["update_median_ms"] > 0 and row["naive_median_ms"] > 0


def test_torch_reference_row_agrees_when_torch_is_installed():
    pytest.importorskip("torch")  # optional: the project never installs it
    res = kernel.run([64, 128], note=lambda s: None, matmul_n=128)
    rows = [r for r in res["rows"] if r["impl"] == "torch_sdpa"]
    assert len(rows) == 2
    for r in rows:
        assert r["agrees_with"] == "naive" and r["agrees"] is True and r["max_abs_diff"] < 1e-5


@pytest.mark.parametrize("argv, full", [([], True), (["--book"], True), (["--quick"], False),
                                        (["--only", "kernel"], False), (["--max-T", "1024"], False),
                                        (["--max-naive-T", "4096"], False)])
def test_only_a_full_run_may_replace_latest(argv, full):
    from benchmarks.__main__ import is_full_run, parse

    assert is_full_run(parse(argv)) is full


def test_a_partial_run_writes_partial_not_latest(tmp_path, capsys):
    from benchmarks.__main__ import main

    assert main(["--quick", "--only", "startup", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partial.json", "partial.md"]
    assert "startup" in json.loads((tmp_path / "partial.json").read_text())


def test_the_blocked_tiling_is_the_one_recorded(monkeypatch):
    """Proposition 5's page explains the blocked peak memory from the tiling the run records: the recorded
    tiling must be the one the blocked implementation passes to attn.blocked_attention."""
    import attn

    seen = {}

    def recording(Q, K, V, **kwargs):
        seen.update(kwargs)
        return real(Q, K, V, **kwargs)

    real = attn.blocked_attention
    monkeypatch.setattr(attn, "blocked_attention", recording)
    Q = K = V = np.ones((8, 4), np.float32)
    kernel.implementations()["blocked"](Q, K, V)
    assert seen == kernel.BLOCKED_CONFIG
    assert kernel.BLOCKED_CONFIG == {"block_size": attn.blocked.DEFAULT_BLOCK_SIZE,
                                     "query_block_size": attn.blocked.DEFAULT_QUERY_BLOCK_SIZE}
    monkeypatch.undo()
    res = kernel.run([32], note=lambda s: None, matmul_n=64)
    assert res["blocked_config"] == kernel.BLOCKED_CONFIG
