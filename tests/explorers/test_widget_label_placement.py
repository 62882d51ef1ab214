"""Labels of the Proposition 1 and 2 explorers stay clear of the marks they name (reader t1, finding 10).

- Proposition 1: a key's (or the query's) label is centred beyond the arrow's tip, along the arrow, so it sits
  neither on the arrowhead nor under the drag handle, whichever way the arrow points (a label placed at 1.1 k
  with a lower-left anchor landed on the arrow of a key pointing down and to the left).
- Proposition 2: a value's label lies outside the values' hull, where the output (inside the hull) never covers
  it; the value dots are half transparent and the star has a white rim, so the star is seen on a heavy value.
- The query's sliders are named by axis, "query x" and "query y", like the key's: q₁, q₂ are two queries in the
  chapter's notation, not two coordinates.
The live explorers' ES modules place their labels by the same rules (``placeBeyondTip``, the hull's centre).
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.path import Path as Polygon  # noqa: E402

from attn.widgets.projections import ProjectionsExplorer  # noqa: E402
from attn.widgets.weighted_average import LABEL_GAP, WeightedAverageExplorer, beyond_tip  # noqa: E402


def _distance_to_segment(p, a, b):
    p, a, b = map(np.asarray, (p, a, b))
    t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-300), 0, 1)
    return float(np.linalg.norm(p - (a + t * (b - a))))


@pytest.mark.parametrize("angle", range(0, 360, 30))
def test_a_key_label_sits_beyond_its_tip_whichever_way_the_key_points(angle):
    kx, ky = 1.2 * np.cos(np.radians(angle)), 1.2 * np.sin(np.radians(angle))
    e = WeightedAverageExplorer()
    e.update(key=1, kx=round(kx, 2), ky=round(ky, 2))
    tip = e.K[0]
    label = e.key_labels[0]
    pos = np.array(label.get_position())
    assert (label.get_ha(), label.get_va()) == ("center", "center")
    # on the arrow's line, beyond the tip, and LABEL_GAP from every point of the arrow
    np.testing.assert_allclose(pos, tip + LABEL_GAP * tip / np.linalg.norm(tip))
    assert _distance_to_segment(pos, (0, 0), tip) >= LABEL_GAP - 1e-12


def test_the_query_label_follows_the_same_rule_and_a_zero_arrow_has_a_place():
    e = WeightedAverageExplorer()
    e.update(q1=-1.0, q2=-0.5)
    q = np.array([-1.0, -0.5])
    np.testing.assert_allclose(e.q_label.get_position(), q + LABEL_GAP * q / np.linalg.norm(q))
    assert np.all(np.isfinite(beyond_tip((0.0, 0.0)))) and np.linalg.norm(beyond_tip((0.0, 0.0))) > 0


def test_the_old_placement_would_have_put_the_label_on_the_arrow():
    """The rule's test: 1.1 k with a lower-left anchor, for a key pointing down-left, is within reach of the arrow."""
    tip = np.array([-0.8, -0.7])                      # k_1 of Figure 3
    assert _distance_to_segment(1.1 * tip, (0, 0), tip) < LABEL_GAP / 2
    assert _distance_to_segment(beyond_tip(tip), (0, 0), tip) >= LABEL_GAP - 1e-12


def test_the_query_sliders_are_named_by_axis():
    labels = {c.name: c.label for c in WeightedAverageExplorer.live_controls}
    assert (labels["q1"], labels["q2"]) == ("query x", "query y")
    assert not any(lab in ("q₁", "q₂", "q1", "q2") for lab in labels.values())


@pytest.mark.parametrize("token", [1, 2, 3, 4])
def test_value_labels_of_prop2_lie_outside_the_hull(token):
    e = ProjectionsExplorer()
    e.update(token=token)
    V = e.compute()["V"]
    centre = V.mean(axis=0)
    ring = V[np.argsort(np.arctan2(*(V - centre).T[::-1]))]
    hull = Polygon(np.vstack([ring, ring[:1]]))
    for text, v in zip(e.value_text, V):
        pos = np.array(text.get_position())
        assert not hull.contains_point(pos), (text.get_text(), pos)
        assert np.linalg.norm(pos - v) > 0.3      # clear of its own dot


def test_prop2s_star_stands_out_on_a_value_dot():
    e = ProjectionsExplorer()
    assert e.value_dots.get_alpha() is not None and e.value_dots.get_alpha() < 1
    assert to_rgba(e.out_dot.get_markeredgecolor()) == to_rgba("white") and e.out_dot.get_markeredgewidth() > 0
    assert e.out_dot.get_zorder() > e.value_dots.get_zorder()


def test_the_live_modules_place_labels_by_the_same_rules():
    js = Path(__file__).resolve().parents[2] / "src" / "attn" / "widgets" / "js"
    wa, pr = (js / "weighted_average.js").read_text(), (js / "projections.js").read_text()
    assert "sx(x * 1.1) + 6" not in wa and wa.count("placeBeyondTip(") == 3   # the function and its two calls
    assert 'vx(v[0]) + 6' not in pr and "STAR_HALO" in pr and "STAR_HALO" in wa
