"""The explorers' fast text path (matplotlib >= 3.11 draws text glyph by glyph): the same pixels, drawn sooner.

No timing here (bin/bench --only widgets measures it): only that the caches change no pixel (a pasted
text may differ by one level of rounding where it is blended).
"""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from attn.widgets.glyphs import cache_glyphs  # noqa: E402
from attn.widgets.projections import ProjectionsExplorer  # noqa: E402
from attn.widgets.temperature import TemperatureExplorer  # noqa: E402
from attn.widgets.weighted_average import WeightedAverageExplorer  # noqa: E402


def _figure_pixels(cached: bool, draws: int = 1) -> np.ndarray:
    fig = Figure(figsize=(5, 2.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title("std of q·k: 12.3  (√dₖ = 11.3) AVAWTo")
    ax.text(0.137, 0.471, "weights 0.127 | k₁ $q_1$", color="#0072B2")
    ax.set_xlabel("τ = 0.123")
    if cached:
        cache_glyphs(fig.canvas.get_renderer())
    for _ in range(draws):
        fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_cached_glyphs_give_the_same_pixels():
    plain = _figure_pixels(cached=False)
    np.testing.assert_array_equal(_figure_pixels(cached=True, draws=2), plain)  # second draw: every glyph cached


@pytest.mark.parametrize("cls, moves", [
    (WeightedAverageExplorer, [dict(tau=0.5), dict(q1=-1.0), dict(tau=0.5)]),
    (TemperatureExplorer, [dict(tau=0.3), dict(tau=2.0), dict(tau=0.3)]),
    (ProjectionsExplorer, [dict(token=2), dict(angle_Q=40.0), dict(token=3)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_texts_pasted_from_the_cache_are_the_texts_drawn(cls, moves):
    fast, slow = cls(), cls()
    slow.cache_text = False
    for move in moves * 2:  # the second round pastes texts seen before
        fast.update(**move)
        slow.update(**move)
        a = np.asarray(fast.fig.canvas.buffer_rgba()).astype(int)
        b = np.asarray(slow.fig.canvas.buffer_rgba()).astype(int)
        assert np.abs(a - b).max() <= 1, f"after {move}"  # compositing a pasted text rounds by one level at most
