"""Proposition 4's explorer: the heatmaps hold exactly what attn computes, in place, with the right shapes."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import attn  # noqa: E402
from attn.examples import two_sequences  # noqa: E402
from attn.widgets.wiring import WiringExplorer  # noqa: E402

X, Y, W_Q, W_K, W_V = two_sequences()
T_q = X.shape[0]


def test_self_wiring_shows_a_square_score_matrix():
    e = WiringExplorer()
    out, w = attn.self_attention(X, W_Q, W_K, W_V)
    assert e.im_s.get_array().shape == (T_q, T_q)
    np.testing.assert_array_equal(e.im_w.get_array(), w)
    np.testing.assert_array_equal(e.im_o.get_array(), out)
    np.testing.assert_allclose(e.im_s.get_array(), attn.scores(X @ W_Q, X @ W_K))
    assert "self" in e.suptitle.get_text()


@pytest.mark.parametrize("T_k", [1, 2, 5, 7, 10])
def test_cross_wiring_score_matrix_is_T_q_by_T_k(T_k):
    e = WiringExplorer()
    fig, images = e.fig, [e.im_s, e.im_w, e.im_o]
    n_open = len(plt.get_fignums())
    e.update(wiring="cross", T_k=T_k)
    assert e.fig is fig and [e.im_s, e.im_w, e.im_o] == images  # same figure, same artists
    assert len(plt.get_fignums()) == n_open  # no new figure
    assert sum(len(ax.images) for ax in fig.axes) == 3  # no duplicated images
    out, w = attn.cross_attention(X, Y[:T_k], W_Q, W_K, W_V)
    assert e.im_s.get_array().shape == e.im_w.get_array().shape == (T_q, T_k)
    assert e.im_o.get_array().shape == (T_q, W_V.shape[1])  # the output's shape follows the queries only
    np.testing.assert_array_equal(e.im_w.get_array(), w)
    np.testing.assert_array_equal(e.im_o.get_array(), out)
    np.testing.assert_allclose(e.im_w.get_array().sum(axis=1), 1.0)
    assert e.im_s.get_extent() == [-0.5, T_k - 0.5, T_q - 0.5, -0.5]
    assert f"{T_q}×{T_k}" in e.ax_s.get_title()
    named = [t.get_text() for t in e.key_labels[:10] if t.get_text()]  # the score panel's key names
    assert named == [f"y{str(j + 1).translate(str.maketrans('0123456789', '₀₁₂₃₄₅₆₇₈₉'))}" for j in range(T_k)]


def test_self_wiring_ignores_T_k_and_switching_back_restores_it():
    e = WiringExplorer(T_k=3)
    first = e.im_w.get_array().copy()
    e.update(T_k=9)  # Y's length is irrelevant when K and V come from X
    np.testing.assert_array_equal(e.im_w.get_array(), first)
    e.update(wiring="cross")
    assert e.im_w.get_array().shape == (T_q, 9)
    e.update(wiring="self")
    np.testing.assert_array_equal(e.im_w.get_array(), first)


def test_bad_parameters_are_refused():
    e = WiringExplorer()
    e.update(wiring="cross", T_k=4)
    with pytest.raises(ValueError, match="wiring"):
        e.update(wiring="sideways")
    assert e.params == {"wiring": "cross", "T_k": 4} and e.im_w.get_array().shape == (T_q, 4)  # left as it was
    with pytest.raises(ValueError, match="T_k"):
        WiringExplorer(wiring="cross", T_k=11)
    with pytest.raises(TypeError, match="no parameter"):
        e.update(T_q=3)


def test_scrubber_frames_and_restore():
    e = WiringExplorer()
    html = e.scrubber("T_k", [2, 6, 10], wiring="cross").data
    assert html.count("data:image/png;base64") == 3
    assert 'alt="' in html
    assert e.params == WiringExplorer.defaults and e.im_w.get_array().shape == (T_q, T_q)  # restored afterwards


def test_widget_controls_drive_the_figure():
    e = WiringExplorer()
    box = e.png_widget()
    wiring, T_k = box.children[0].children
    assert T_k.disabled  # self wiring: the length of Y plays no part
    wiring.value = "cross"
    assert not T_k.disabled
    T_k.value = 4
    assert e.im_w.get_array().shape == (T_q, 4)


def test_T_k_control_reaches_exactly_the_keys_that_exist():
    """The slider's upper end is Y's length, computed, never typed: every position is a valid state."""
    control = next(c for c in WiringExplorer.live_controls if c.name == "T_k")
    assert control.max == WiringExplorer.T_k_max == WiringExplorer.Y.shape[0]
    assert control.min == 1


def test_titles_and_labels_write_subscripts_in_unicode_not_raw_underscores():
    """The slider, the static figure's title and the live title write Tₖ (Unicode subscript, as the divisor
    explorer writes dₖ) and "5 queries" for T_q (Unicode has no subscript q): no raw "T_k" or "T_q" is shown."""
    from pathlib import Path

    import attn.widgets.wiring as wiring_module

    e = WiringExplorer()
    e.update(wiring="cross", T_k=3)
    title = e.suptitle.get_text()
    assert "_" not in title and "Tₖ = 3" in title and f"{T_q} queries" in title, title
    labels = {c.name: c.label for c in WiringExplorer.live_controls}
    assert labels["T_k"] == "Tₖ (Y)"
    js = (Path(wiring_module.__file__).parent / "js" / "wiring.js").read_text(encoding="utf-8")
    shown = [line for line in js.splitlines() if "textContent" in line or "`" in line]
    assert not [line for line in shown if "T_q =" in line or "T_k =" in line], shown
    # the tooltips round their numbers (4 significant digits), never String() a raw double
    assert "String(M[i][j])}`" not in js and "String(r.O[i][c])}`" not in js
