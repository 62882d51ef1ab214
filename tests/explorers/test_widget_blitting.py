"""The explorers' fast path: an update blits the changed artists over a saved background.

The pictures it makes must be the pictures a full redraw makes, no move may trigger a full
redraw or a new figure, and the live widget must show the new picture.
"""
import html
import io

import numpy as np
import PIL.Image
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from attn.widgets.projections import ProjectionsExplorer
from attn.widgets.quadratic import QuadraticCostExplorer
from attn.widgets.divisor import DivisorExplorer
from attn.widgets.temperature import TemperatureExplorer
from attn.widgets.weighted_average import WeightedAverageExplorer
from attn.widgets.wiring import WiringExplorer

# (explorer, a sequence of moves): every move changes what the figure shows
MOVES = [
    (TemperatureExplorer, [dict(tau=0.3), dict(tau=8.0)]),
    (WeightedAverageExplorer, [dict(q1=-1.0), dict(key=2, kx=0.5, ky=-1.5), dict(tau=0.2)]),
    (ProjectionsExplorer, [dict(token=3), dict(angle_V=10.0, scale_V=2.0), dict(angle_Q=150.0)]),
    (WiringExplorer, [dict(wiring="cross", T_k=3), dict(T_k=9), dict(wiring="self")]),
    (DivisorExplorer, [dict(d_k=256), dict(d_k=2)]),
    (QuadraticCostExplorer, [dict(T=2048), dict(T=128)]),
]
IDS = [cls.__name__ for cls, _ in MOVES]


def pixels(e) -> np.ndarray:
    return np.asarray(e.fig.canvas.buffer_rgba()).astype(int)


def differing(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of pixels whose colour differs by more than 32 levels in some channel."""
    return float((np.abs(a - b).max(axis=2) > 32).mean())


@pytest.fixture(scope="module")
def quadratic():  # measures its curves when made: make it once
    return QuadraticCostExplorer(T_values=(128, 256, 512, 1024, 2048), repeats=1)


def make(cls, quadratic):
    return quadratic if cls is QuadraticCostExplorer else cls()


@pytest.mark.parametrize("cls, moves", MOVES, ids=IDS)
def test_a_blitted_update_shows_what_a_full_redraw_shows(cls, moves, quadratic):
    e = make(cls, quadratic)
    e.render()
    for move in moves:
        before = pixels(e)
        e.update(**move)
        blitted = pixels(e)
        assert differing(before, blitted) > 1e-4, f"{move} changed nothing on screen"
        e.fig.canvas.draw()  # every artist, in z-order, from scratch
        # Only the stacking of a moving artist over a static one may differ (a few edge pixels).
        assert differing(blitted, pixels(e)) < 0.005, f"after {move} the blitted picture is not the figure"
        e.render()  # back on the fast path


@pytest.mark.parametrize("cls, moves", MOVES, ids=IDS)
def test_moves_make_no_full_redraw_and_no_new_figure(cls, moves, quadratic, monkeypatch):
    e = make(cls, quadratic)
    e.render()
    fig, canvas = e.fig, e.fig.canvas
    full_draws = []
    monkeypatch.setattr(canvas, "draw", lambda *a, **k: full_draws.append(1))
    for move in moves * 2:
        e.update(**move)
    assert full_draws == [] and e.fig is fig and e.fig.canvas is canvas
    assert isinstance(canvas, FigureCanvasAgg)


def test_png_is_the_current_picture():
    e = TemperatureExplorer()
    first = e.png()
    img = PIL.Image.open(io.BytesIO(first))
    assert img.format == "PNG" and img.size == e.fig.canvas.get_width_height()
    e.update(tau=0.05)
    again = np.asarray(PIL.Image.open(io.BytesIO(e.png())))
    np.testing.assert_array_equal(again, np.asarray(e.fig.canvas.buffer_rgba()))
    assert e._repr_png_() == e.png()


def test_the_live_widget_shows_the_new_picture_after_a_move():
    e = TemperatureExplorer()
    box = e.png_widget()
    (tau,) = box.children[0].children
    image = box.children[1]
    assert image.format == "png" and image.value == e.png()
    before = image.value
    tau.value = 0.05
    assert e.params["tau"] == pytest.approx(0.05)
    assert image.value != before and image.value == e.png()
    about = box.children[2]
    assert html.escape(e.alt) in about.value and about.value.startswith("<details>")  # the alt text, folded
    assert not image.tooltip  # a tooltip stops JupyterLab from drawing an Image widget


def test_a_refused_move_keeps_the_last_good_picture():
    e = TemperatureExplorer(tau=2.0)
    e.render()
    before = pixels(e)
    with pytest.raises(ValueError):
        e.update(tau=-1.0)
    np.testing.assert_array_equal(pixels(e), before)


@pytest.mark.parametrize("cls", [cls for cls, _ in MOVES], ids=IDS)
def test_the_first_picture_is_the_full_figure(cls, quadratic):
    # the first render hides the moving artists to save the background; titles must come back in place
    e = make(cls, quadratic)
    e._invalidate()
    first = np.asarray(PIL.Image.open(io.BytesIO(e.png()))).astype(int)
    e.fig.canvas.draw()
    assert differing(first, pixels(e)) < 0.005
    for ax in e.fig.axes:
        assert ax.title.get_position()[1] < 1.2, f"{cls.__name__}: a title left the figure"


def test_scrubber_restores_the_explorer_whatever_savefig_dpi_says():
    import matplotlib

    with matplotlib.rc_context({"savefig.dpi": 150}):
        e = TemperatureExplorer()
        e.update(tau=0.5)
        html_page = e.scrubber("tau", [0.2, 2.0]).data
        assert e.params == {"tau": 0.5}
        e.fig.canvas.draw()  # a later full draw must not replay the animation's first frame
        assert e.params == {"tau": 0.5} and "0.5" in e.ax_w.get_title()
    frame = html_page.split("data:image/png;base64,")[1].split('"')[0]
    import base64

    size = PIL.Image.open(io.BytesIO(base64.b64decode(frame))).size
    assert size == e.fig.canvas.get_width_height()  # frames at the figure's own size


def test_png_after_a_savefig_at_another_dpi():
    e = TemperatureExplorer()
    e.png()
    e.fig.savefig(io.BytesIO(), dpi=50)
    img = PIL.Image.open(io.BytesIO(e.png()))
    assert img.size == e.fig.canvas.get_width_height()


def test_a_refused_move_restores_the_edited_key():
    e = WeightedAverageExplorer()
    K = e.K.copy()
    with pytest.raises(ValueError):
        e.update(key=2, kx=1.9, ky=-1.9, tau=-1.0)
    np.testing.assert_array_equal(e.K, K)
    with pytest.raises(ValueError, match="NaN"):
        e.update(key=3, kx=float("nan"))
    np.testing.assert_array_equal(e.K, K)
    e.update(key=1)  # and the explorer still works


def test_projections_refuse_a_non_finite_angle_with_its_name():
    e = ProjectionsExplorer()
    with pytest.raises(ValueError, match="angle_V must be a finite number"):
        e.update(angle_V=float("inf"))
    e.update(angle_V=np.float32(30.0))  # NumPy scalars are numbers too
