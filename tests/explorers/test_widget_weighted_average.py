import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import attn  # noqa: E402
from attn.widgets.weighted_average import WeightedAverageExplorer  # noqa: E402


def test_initial_state_is_figure3():
    e = WeightedAverageExplorer()
    np.testing.assert_array_equal([round(b.get_width(), 2) for b in e.bars], [0.06, 0.61, 0.09, 0.24])
    q, K, V = attn.examples.figure3()
    out, _ = attn.attention(q, K, V)
    np.testing.assert_allclose(e.out_dot.get_data(), ([out[0, 0]], [out[0, 1]]))


@pytest.mark.parametrize("tau", [0.05, 0.5, 1.0, 3.0, 30.0])
def test_update_tau_redraws_bars_and_output(tau):
    e = WeightedAverageExplorer()
    fig = e.fig
    e.update(tau=tau)
    assert e.fig is fig
    q, K, V = attn.examples.figure3()
    out, w = attn.attention(q, K, V, tau=tau)
    np.testing.assert_allclose([b.get_width() for b in e.bars], w[0])
    np.testing.assert_allclose(np.ravel(e.out_dot.get_data()), out[0])
    assert [t.get_text() for t in e.bar_text] == [f"{x:.2f}" for x in w[0]]


def test_editing_a_key_moves_only_that_key():
    e = WeightedAverageExplorer()
    e.update(key=3, kx=1.0, ky=1.0)
    K = attn.examples.figure3()[1].copy()
    K[2] = (1.0, 1.0)
    np.testing.assert_array_equal(e.K, K)
    e.update(key=2)  # choosing another key without coordinates leaves it where it is
    np.testing.assert_array_equal(e.K, K)
    _, w = attn.attention([[1.0, 1.0]], K, attn.examples.figure3()[2])
    np.testing.assert_allclose([b.get_width() for b in e.bars], w[0])


def test_query_update_and_unknown_parameter():
    e = WeightedAverageExplorer()
    e.update(q1=-1.0, q2=0.0)
    assert np.argmax([b.get_width() for b in e.bars]) == 2  # k3 = (-1.6, 0.7) now matches best
    with pytest.raises(TypeError, match="no parameter"):
        e.update(temperature=2)


def test_scrubber_has_one_frame_per_value_and_alt_text():
    e = WeightedAverageExplorer()
    html = e.scrubber("tau", [0.1, 1.0, 10.0]).data
    assert html.count("data:image/png;base64") == 3
    assert 'alt="' in html
    np.testing.assert_allclose([b.get_width() for b in e.bars][1], 0.608, atol=1e-3)  # restored afterwards


def test_widget_controls_drive_the_figure():
    e = WeightedAverageExplorer()
    box = e.png_widget()
    sliders = {c.description: c for c in box.children[0].children}
    sliders["τ"].value = 10.0
    assert e.params["tau"] == pytest.approx(10.0)
    widths = [b.get_width() for b in e.bars]
    assert max(widths) - min(widths) < 0.2  # near uniform at high temperature
    sliders["edit key"].value = 4
    assert (sliders["key x"].value, sliders["key y"].value) == (1.3, -0.8)


def test_a_refused_value_leaves_the_explorer_unchanged():
    e = WeightedAverageExplorer()
    before = [b.get_width() for b in e.bars]
    with pytest.raises(ValueError, match="tau"):
        e.update(tau=-1.0)
    assert e.params["tau"] == 1.0
    assert [b.get_width() for b in e.bars] == before


def test_explorer_displays_as_png():
    png = WeightedAverageExplorer()._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
