import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attn.widgets.quadratic import QuadraticCostExplorer  # noqa: E402


@pytest.fixture(scope="module")
def explorer():
    return QuadraticCostExplorer(T_values=(64, 128, 256, 512), repeats=1)


def test_memory_slopes_quadratic_and_linear(explorer):
    assert 1.8 < explorer.fit_naive.slope < 2.2
    assert 0.8 < explorer.fit_blocked.slope < 1.2
    np.testing.assert_array_equal(explorer.time.score_bytes, np.array([64, 128, 256, 512]) ** 2 * 8)


@pytest.mark.parametrize("T, expected", [(64, 64), (256, 256), (300, 256), (10_000, 512)])
def test_update_moves_marker_to_nearest_measured_T(explorer, T, expected):
    fig = explorer.fig
    explorer.update(T=T)
    assert explorer.fig is fig
    i = list(explorer.T_values).index(expected)
    np.testing.assert_allclose(explorer.marker_t.get_data(), ([expected], [explorer.time.seconds[i] * 1e3]))
    np.testing.assert_allclose(explorer.marker_m.get_data(), ([expected], [explorer.naive.peak_bytes[i] / 2**20]))
    assert f"T = {expected}:" in explorer.note.get_text()
    assert f"{expected * expected:,} entries" in explorer.note.get_text()


def test_scrubber_frames_and_control(explorer):
    html = explorer.scrubber("T", [64, 512]).data
    assert html.count("data:image/png;base64") == 2
    control = explorer.controls()["T"]
    assert list(control.options) == [64, 128, 256, 512] and control.continuous_update is False
