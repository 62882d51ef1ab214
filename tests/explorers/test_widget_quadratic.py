import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attn.widgets.quadratic import QuadraticCostExplorer  # noqa: E402


@pytest.fixture(scope="module")
def explorer():
    # From 256: below that, the O(T·d) arrays (Q, K, V, the output) are a visible share of the
    # peak and flatten the naive curve (its T² part is a single array: the softmax runs in place).
    return QuadraticCostExplorer(T_values=(256, 512, 1024, 2048), repeats=1)


def test_memory_slopes_quadratic_and_linear(explorer):
    assert 1.8 < explorer.fit_naive.slope < 2.2
    assert 0.8 < explorer.fit_blocked.slope < 1.2
    np.testing.assert_array_equal(explorer.time.score_bytes, np.array([256, 512, 1024, 2048]) ** 2 * 8)


def test_naive_peak_is_about_one_score_matrix(explorer):
    # softmax in the score matrix's own memory: the peak is one T×T float64 array plus O(T·d)
    ratio = explorer.naive.peak_bytes / explorer.time.score_bytes
    assert np.all(ratio > 1.0) and np.all(ratio < 1.35), ratio
    assert ratio[-1] < 1.05


@pytest.mark.parametrize("T, expected", [(256, 256), (1024, 1024), (1100, 1024), (10_000, 2048)])
def test_update_moves_marker_to_nearest_measured_T(explorer, T, expected):
    fig = explorer.fig
    explorer.update(T=T)
    assert explorer.fig is fig
    i = list(explorer.T_values).index(expected)
    np.testing.assert_allclose(explorer.marker_t.get_data(), ([expected], [explorer.time.seconds[i] * 1e3]))
    np.testing.assert_allclose(explorer.marker_m.get_data(), ([expected], [explorer.naive.peak_bytes[i] / 2**20]))
    assert f"T = {expected}:" in explorer.note.get_text()
    assert f"{expected * expected:,} scores" in explorer.note.get_text()


def test_scrubber_frames_and_control(explorer):
    html = explorer.scrubber("T", [256, 2048]).data
    assert html.count("data:image/png;base64") == 2
    control = explorer.controls()["T"]
    assert list(control.options) == [256, 512, 1024, 2048] and control.continuous_update is False


def test_alt_text_states_the_measured_slopes_and_nothing_promised(explorer):
    """The alt text (the kernel explorer's "What the figure shows") reports the fitted slopes as measured,
    never a promised "about 2" for the time, whose slope depends on the machine."""
    alt = explorer.alt
    assert "about" not in alt
    for fit in (explorer.fit_time, explorer.fit_naive, explorer.fit_blocked):
        assert f"fitted slope {fit.slope:.2f}" in alt


@pytest.mark.parametrize("dtype, itemsize", [(np.float64, 8), (np.float32, 4)])
def test_score_matrix_size_names_its_dtype(dtype, itemsize):
    """A size in MiB is only checkable with its bytes per number: the title, the live data and the
    score bytes all follow the measured dtype."""
    e = QuadraticCostExplorer(T_values=(64, 128), repeats=1, dtype=dtype)
    np.testing.assert_array_equal(e.time.score_bytes, np.array([64, 128]) ** 2 * itemsize)
    words = f"{np.dtype(dtype).name}, {itemsize} bytes a number"
    assert e.dtype_words == words
    e.update(T=128)
    assert f"{128 * 128 * itemsize / 2**20:.2f} MiB in {np.dtype(dtype).name};" in e.note.get_text()
    data = e.live_data()
    assert data["dtype"] == np.dtype(dtype).name and data["dtype_words"] == words


def test_one_quantity_is_written_one_way_in_the_title_the_table_and_the_text():
    """Reader t2, finding 17: at T = 128 the title said "0.1 MiB" and the table "0.13" for the same 0.125 MiB.
    The live module writes each number of its table (setNum(cell, value, digits)) with the same digits in the
    title and in the description, and the static figure's title writes them so too."""
    import re
    from pathlib import Path

    import attn.widgets.quadratic as quadratic_module

    js = (Path(quadratic_module.__file__).parent / "js" / "quadratic.js").read_text(encoding="utf-8")
    table = {name: int(d) for name, d in re.findall(r"setNum\(c\w+, r\.(\w+), (\d)\)", js)}
    assert {"score_mib", "ms", "mib_full", "mib_blocked"} <= set(table), table
    for name, digits in re.findall(r"r\.(\w+)\.toFixed\((\d)\)", js):
        assert int(digits) == table[name], (name, digits, table[name])
    e = QuadraticCostExplorer(T_values=(64, 128), repeats=1)
    e.update(T=128)
    r = e.compute()
    assert f"{r['score_mib']:.{table['score_mib']}f} MiB" in e.note.get_text()
    assert f"{r['ms']:.{table['ms']}f} ms" in e.note.get_text()


@pytest.mark.parametrize("module", ["divisor", "temperature"])
def test_the_other_explorers_tables_use_their_texts_digits(module):
    """The same kind as finding 17 on Proposition 3's explorers: the table wrote 3 decimals of a weight, an entropy
    or a standard deviation that the bar labels, the titles and the description write with 2."""
    import re
    from pathlib import Path

    import attn.widgets as widgets

    js = (Path(widgets.__file__).parent / "js" / f"{module}.js").read_text(encoding="utf-8")
    # the numbers a reader sees, not the SVG coordinates of polylines and paths
    js = "\n".join(line for line in js.splitlines() if not re.search(r"points:|\bd \+=|let d =|return d \+", line))
    text_digits = {int(d) for d in re.findall(r"\.toFixed\((\d)\)\}", js)} | {int(d) for d in re.findall(r"fmt\([^()]*, (\d)\)", js)}
    table_digits = {int(d) for d in re.findall(r"setNum\([^()]*(?:\([^()]*\))?[^()]*, (\d)\)", js)}
    assert text_digits == {2} and table_digits == {2}, (text_digits, table_digits)
    # the Jacobian norms: in the table and in the text, 3 significant digits in exponent form
    assert len(set(re.findall(r"\.toExponential\((\d)\)", js))) <= 1
