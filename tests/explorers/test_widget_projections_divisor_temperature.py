"""Explorers of Propositions 2 and 3 and the temperature explorer: update redraws the existing artists with attn's numbers."""
import math

import matplotlib

matplotlib.use("Agg")
import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import attn  # noqa: E402
from attn.examples import figure3  # noqa: E402
from attn.widgets.projections import ProjectionsExplorer, rotation_scale  # noqa: E402
from attn.widgets.divisor import D_K_GRID, DivisorExplorer  # noqa: E402
from attn.widgets.temperature import TemperatureExplorer  # noqa: E402


def artist_counts(fig):
    return [(len(ax.patches), len(ax.lines), len(ax.texts), len(ax.collections)) for ax in fig.axes]


def assert_updates_in_place(explorer, **params):
    fig, counts, n_open = explorer.fig, artist_counts(explorer.fig), len(plt.get_fignums())
    explorer.update(**params)
    assert explorer.fig is fig
    assert artist_counts(fig) == counts  # no artist added or duplicated
    assert len(plt.get_fignums()) == n_open  # no new figure


# ---------------------------------------------------------------- Proposition 2
@pytest.mark.parametrize("params", [dict(token=2), dict(token=4, angle_V=45.0), dict(angle_Q=-120.0, scale_K=0.3),
                                    dict(token=3, scale_V=0.0)])
def test_projections_explorer_shows_attn_numbers(params):
    e = ProjectionsExplorer()
    assert_updates_in_place(e, **params)
    p = e.params
    t = p["token"] - 1
    W_Q, W_K, W_V = (rotation_scale(p[f"angle_{m}"], p[f"scale_{m}"]) for m in "QKV")
    out, w = attn.self_attention(e.X, W_Q, W_K, W_V)
    np.testing.assert_allclose([b.get_width() for b in e.bars], w[t])
    np.testing.assert_allclose(np.ravel(e.out_dot.get_data()), out[t])
    np.testing.assert_allclose(e.qkv_arrows["q"].xy, e.X[t] @ W_Q)
    np.testing.assert_allclose(e.qkv_arrows["k"].xy, e.X[t] @ W_K)
    np.testing.assert_allclose(e.qkv_arrows["v"].xy, e.X[t] @ W_V)
    np.testing.assert_allclose(e.value_dots.get_offsets(), e.X @ W_V)
    assert [b.get_width() for b in e.bars] == pytest.approx(list(e.result["weights"][t]))


def test_turning_W_V_moves_output_not_bars_and_W_Q_the_reverse():
    e = ProjectionsExplorer()
    bars0, out0 = [b.get_width() for b in e.bars], np.ravel(e.out_dot.get_data()).copy()
    e.update(angle_V=e.params["angle_V"] + 90)
    assert [b.get_width() for b in e.bars] == pytest.approx(bars0)
    R = rotation_scale(90, 1.0)
    np.testing.assert_allclose(np.ravel(e.out_dot.get_data()), out0 @ R, atol=1e-12)  # the output turns with W_V
    e.update(angle_Q=e.params["angle_Q"] + 60)
    assert not np.allclose([b.get_width() for b in e.bars], bars0)


def test_projections_colours_mean_one_thing_each():
    """A token has one colour in all three panels; the q, k and v arrows take none of the tokens' colours (an
    expert read saw the orange key arrow "k1" match the orange bar of k2, and the green v1 the dot of v3)."""
    from matplotlib.colors import to_hex

    from attn.widgets.projections import QKV_DASHES, TOKEN_COLOURS, X_DASH

    e = ProjectionsExplorer()
    tokens = [to_hex(c) for c in TOKEN_COLOURS]
    assert len(set(tokens)) == len(e.X)
    assert [to_hex(b.get_facecolor()) for b in e.bars] == tokens                  # the bars of k_j
    assert [to_hex(c) for c in e.value_dots.get_facecolors()] == tokens          # the dots of v_j
    arrows = {to_hex(a.arrow_patch.get_edgecolor()) for a in e.qkv_arrows.values()}
    arrows |= {to_hex(lab.get_color()) for lab in e.qkv_labels.values()}
    assert not arrows & set(tokens)
    dashes = list(QKV_DASHES.values()) + [X_DASH]
    assert len(set(dashes)) == len(dashes)                                        # told apart by dash
    data = e.live_data()                                                          # the live explorer: the same
    assert "qkv_colours" not in data and len(set(data["qkv_dashes"].values())) == len(QKV_DASHES)
    assert data["x_dash"] not in data["qkv_dashes"].values() and data["colours"] == list(TOKEN_COLOURS)
    from pathlib import Path

    js = (Path(attn.__file__).parent / "widgets" / "js" / "projections.js").read_text()
    assert "qkv_colours" not in js and "DASH[name]" in js


@pytest.mark.parametrize("make", ["projections", "weighted_average"])
def test_value_dots_grow_with_their_weights(make):
    """The alt texts say each value dot's area grows with its weight: the dot sizes are in the weights' order."""
    from attn.widgets.weighted_average import WeightedAverageExplorer

    e = ProjectionsExplorer(token=2) if make == "projections" else WeightedAverageExplorer(q1=0.3, q2=1.4)
    w = e.result["weights"][e.result["token"]] if make == "projections" else e.result["weights"]
    sizes = e.value_dots.get_sizes()
    assert np.array_equal(np.argsort(sizes, kind="stable"), np.argsort(w, kind="stable"))
    assert "area that grows with its weight" in type(e).alt


def test_projections_rejects_a_missing_token():
    with pytest.raises(ValueError, match="token"):
        ProjectionsExplorer(token=5)
    with pytest.raises(TypeError, match="no parameter"):
        ProjectionsExplorer().update(W_Q=1)


# ---------------------------------------------------------------- Proposition 3
@pytest.fixture(scope="module")
def scaling():
    return DivisorExplorer()


@pytest.mark.parametrize("d_k", [1, 16, 512])
def test_scaling_explorer_histograms_bars_and_markers(scaling, d_k):
    e = scaling
    assert_updates_in_place(e, d_k=d_k)
    x = attn.random_logits(d_k, T_k=e.T, n=e.n_hist, scaled=False, rng=d_k)
    width = np.diff(e.edges)
    data = e.hist_unscaled.get_data()
    h_u = data.values
    np.testing.assert_allclose(data.edges, e.edges)
    # drawn on a log density axis: an empty bin sits on its floor
    density_u = np.histogram(x, e.edges)[0] / (x.size * width)
    np.testing.assert_allclose(h_u, np.maximum(density_u, e.hist_floor))
    np.testing.assert_allclose(e.result["hist_unscaled"], density_u)
    h_s = e.hist_scaled.get_data().values
    np.testing.assert_allclose(h_s, np.maximum(np.histogram(x / math.sqrt(d_k), e.edges)[0] / (x.size * width),
                                               e.hist_floor))
    assert abs(e.result["std_scaled"] - 1) < 0.1
    assert abs(e.result["std_unscaled"] / math.sqrt(d_k) - 1) < 0.1
    heights_u = np.array([b.get_height() for b in e.bars_unscaled])
    heights_s = np.array([b.get_height() for b in e.bars_scaled])
    np.testing.assert_allclose(heights_u.sum(), 1.0)
    np.testing.assert_allclose(heights_s.sum(), 1.0)
    if d_k <= 16:  # same query, same keys: the scaled bars are the unscaled ones at temperature √d_k
        np.testing.assert_allclose(heights_s, attn.softmax(np.log(heights_u) / math.sqrt(d_k)), atol=1e-9)
    i = D_K_GRID.index(d_k)
    np.testing.assert_allclose(e.mark_g.get_data()[1], [e.curves["jac_norm_unscaled"][i], e.curves["jac_norm_scaled"][i]])
    np.testing.assert_allclose(e.mark_m.get_data()[0], [d_k, d_k])


def test_scaling_explorer_histograms_both_show_on_their_log_axis(scaling):
    """On a linear axis the histogram of q·k at d_k = 1024 (peak density about 0.012) was a smear along the
    axis under the blue spike (about 0.4): on the log axis both peaks sit in the upper part of the panel, and
    every non-empty bin is at or above the floor, every density at or below the top."""
    assert scaling.ax_h.get_yscale() == "log"
    lo, hi = scaling.ax_h.get_ylim()
    assert (lo, hi) == (scaling.hist_floor, scaling.hist_top)
    for d_k in (1, 256, 1024):
        scaling.update(d_k=d_k)
        r = scaling.result
        for key in ("hist_unscaled", "hist_scaled"):
            h = r[key]
            assert h.max() <= hi and h[h > 0].min() >= lo
            height = (np.log10(h.max()) - np.log10(lo)) / (np.log10(hi) - np.log10(lo))  # share of the panel
            assert height > 0.4, (d_k, key, height)


def test_scaling_explorer_writes_both_deviations_to_one_precision(scaling):
    """At d_k = 1 the two standard deviations are one number; the picture once wrote it as 1.0 and 0.97."""
    scaling.update(d_k=1)
    r = scaling.result
    assert r["std_unscaled"] == r["std_scaled"]
    first, second = scaling.std_text.get_text().splitlines()
    u, s = first.split(":")[1].split()[0], second.split(":")[1].strip()
    assert u == s == f"{r['std_scaled']:.2f}"


def test_scaling_explorer_bars_saturate_at_large_d_k(scaling):
    scaling.update(d_k=1024)
    assert max(b.get_height() for b in scaling.bars_unscaled) > 0.9
    assert max(b.get_height() for b in scaling.bars_scaled) < 0.7
    with pytest.raises(ValueError, match="d_k"):
        scaling.update(d_k=100)


def test_scaling_slider_waits_for_release(scaling):
    (slider,) = scaling.controls().values()
    assert isinstance(slider, widgets.SelectionSlider) and slider.continuous_update is False
    assert list(slider.options) == list(D_K_GRID)


# ---------------------------------------------------------------- temperature
@pytest.mark.parametrize("tau", [0.01, 0.3, 1.0, 8.0, 100.0])
def test_temperature_explorer_bars_and_entropy(tau):
    e = TemperatureExplorer()
    assert_updates_in_place(e, tau=tau)
    q, K, _ = figure3()
    w = attn.softmax(attn.scores(q, K)[0], tau=tau)
    np.testing.assert_allclose([b.get_height() for b in e.bars], w)
    xs, ys = e.marker.get_data()
    np.testing.assert_allclose([xs[0], ys[0]], [tau, float(attn.entropy(w))])


def test_temperature_limits():
    e = TemperatureExplorer([3.0, 1.0, 0.0, -2.0, 0.5])
    e.update(tau=0.01)
    assert max(b.get_height() for b in e.bars) > 0.999 and e.result["entropy"] < 1e-3  # one-hot
    e.update(tau=100.0)
    np.testing.assert_allclose([b.get_height() for b in e.bars], 0.2, atol=0.01)  # uniform
    assert abs(e.result["entropy"] - math.log(5)) < 1e-3
    assert np.all(np.diff(e.entropy_curve) > -1e-12)


def test_temperature_default_is_figure3_and_bad_input_is_refused():
    e = TemperatureExplorer()
    np.testing.assert_allclose([b.get_height() for b in e.bars], [0.06, 0.61, 0.09, 0.24], atol=0.005)
    with pytest.raises(ValueError):
        TemperatureExplorer([1.0])
    with pytest.raises(ValueError):
        e.update(tau=0.0)


def test_scrubber_and_widget_are_built_without_a_kernel():
    e = TemperatureExplorer()
    html = e.scrubber("tau", [0.1, 1.0, 10.0]).data
    assert 'alt="' in html and "<img" in html
    assert e.params["tau"] == 1.0  # restored after the animation
    box = ProjectionsExplorer().png_widget()
    assert isinstance(box, widgets.VBox)


@pytest.mark.parametrize("make, bad, good_key", [(ProjectionsExplorer, dict(token=0), "token"),
                                                 (TemperatureExplorer, dict(tau=-1.0), "tau")])
def test_a_refused_value_leaves_the_explorer_unchanged(make, bad, good_key):
    e = make()
    before = dict(e.params)
    with pytest.raises(ValueError):
        e.update(**bad)
    assert e.params == before


# ---------------------------------------------------------------- labels that stay readable
PROP3_ROW = attn.random_logits(64, T_k=8, n=1, scaled=False, rng=7)[0]  # the row Proposition 3's page shows
PROP3_MARKS = {r"$\tau=1$": 1.0, r"$\tau=\sqrt{d_k}$": 8.0}


def _rendered(e):
    e.png()  # draws the figure: every artist has its place in pixels
    return e.fig.canvas.get_renderer()


def _dense_curve_px(e):
    """The entropy curve in pixels, sampled finely enough that no label can sit between two samples."""
    taus = np.logspace(-2, 2, 4000)
    H = [float(attn.entropy(attn.softmax(e.x, tau=t))) for t in taus]
    return e.ax_h.transData.transform(np.c_[taus, H])


def _touches(box, points):
    return bool(((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                 & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)).any())


@pytest.mark.parametrize("row, marks", [(None, None), (PROP3_ROW, PROP3_MARKS)], ids=["figure3", "prop3"])
@pytest.mark.parametrize("tau", [0.01, 0.035, 1.0, 8.0, 100.0])
def test_temperature_labels_stay_clear_of_bars_and_curve(row, marks, tau):
    e = TemperatureExplorer(row, marks=marks, tau=tau)
    r = _rendered(e)
    uniform = e.uniform_label.get_window_extent(r)
    for artist in [*e.bars, *e.bar_text]:  # "uniform 1/T_k" was drawn behind the first bar and its value
        assert not uniform.overlaps(artist.get_window_extent(r)), (tau, artist)
    curve = _dense_curve_px(e)
    marker = e.marker.get_window_extent(r)  # the current τ's dot, marker size included
    for label in [*e.limit_labels, *e.mark_labels]:
        box = label.get_window_extent(r)
        assert not _touches(box, curve), (tau, label.get_text())
        assert not box.overlaps(marker), (tau, label.get_text())


@pytest.mark.parametrize("row, marks", [(None, None), (PROP3_ROW, PROP3_MARKS)], ids=["figure3", "prop3"])
def test_the_moving_marker_never_covers_a_label(row, marks):
    """The current τ's dot runs along the curve, up to log T_k and down to 0: at no step of the slider
    (0.01 in log10 τ) does it sit on a label."""
    e = TemperatureExplorer(row, marks=marks)
    r = _rendered(e)
    boxes = [t.get_window_extent(r) for t in [*e.limit_labels, *e.mark_labels]]
    for log_tau in np.arange(-2, 2.0001, 0.01):
        e.update(tau=10**log_tau)
        (x, y), = e.ax_h.transData.transform([[10**log_tau, e.result["entropy"]]])
        radius = e.marker.get_markersize() / 2 * e.fig.dpi / 72
        for box in boxes:
            assert not (box.x0 - radius < x < box.x1 + radius and box.y0 - radius < y < box.y1 + radius), log_tau


@pytest.mark.parametrize("row", [None, PROP3_ROW], ids=["figure3", "prop3"])
def test_each_entropy_limit_is_labelled_where_the_curve_comes_close_to_it(row):
    e = TemperatureExplorer(row)
    r = _rendered(e)
    log_T = math.log(e.x.size)
    to_tau = e.ax_h.transData.inverted()
    for label, limit in zip(e.limit_labels, (0.0, log_T)):
        box = label.get_window_extent(r)
        (tau_lo, _), (tau_hi, _) = to_tau.transform([[box.x0, box.y0], [box.x1, box.y1]])
        under = [float(attn.entropy(attn.softmax(e.x, tau=t))) for t in np.logspace(np.log10(tau_lo), np.log10(tau_hi), 50)]
        assert max(abs(h - limit) for h in under) < 0.05 * log_T, (label.get_text(), tau_lo, tau_hi)


def test_divisor_explorer_labels_its_uniform_line(scaling):
    r = _rendered(scaling)
    (label,) = [t for t in scaling.ax_m.texts if "uniform" in t.get_text()]
    box = label.get_window_extent(r)
    y_line = scaling.ax_m.transData.transform([[1, 1 / scaling.T]])[0, 1]
    assert 0 <= box.y0 - y_line < 10  # just above the dotted line at 1/T_k
    for line in scaling.ax_m.lines:
        xy = line.get_xydata()
        if len(xy) > 2:  # the two curves
            assert not _touches(box, scaling.ax_m.transData.transform(xy))
