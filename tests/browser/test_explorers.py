"""The live explorers on the built web page: no kernel, no network.

Each explorer page is opened in Debian's chromium; every control of every explorer is moved (the picture,
the numbers and the text alternative must change), random states are sampled, and after every move each
number the page shows (its exact value is in the element's ``data-value``) is compared with what ``attn``
computes for the state the page reports (``data-state``), within 1e-12. Also: dragging and the keyboard,
axe-core on each explorer in light and dark mode, and light/dark screenshots after two moves
(``_build/screenshots/explorer-*.png``: look at them). The handler times the page records are kept for
``bin/bench`` (benchmarks/explorers.py), not asserted.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re

import numpy as np
import pytest

from browsing import AXE, CHROMIUM, CHROMIUM_ARGS, PAGES, SCREENSHOTS

EXPLORER_PAGES = {
    "chapters/prop1-weighted-average.html": ["weighted_average"],
    "chapters/prop2-three-projections.html": ["projections"],
    "chapters/prop3-scaling.html": ["divisor", "temperature"],
    "chapters/prop4-self-cross.html": ["wiring"],
    "chapters/prop5-quadratic-cost.html": ["quadratic"],
    "chapters/theory.html": ["temperature"],
}
SAMPLES = 8  # random states per explorer, besides one move of every control
BAD_IMPACTS = {"serious", "critical"}


# -- what attn computes for a state the page reports ------------------------------------------
def _explorer(name: str, data: dict):
    if name == "weighted_average":
        from attn.widgets.weighted_average import WeightedAverageExplorer
        return WeightedAverageExplorer()
    if name == "temperature":
        from attn.widgets.temperature import TemperatureExplorer
        return TemperatureExplorer(np.array(data["x"], dtype=float))
    if name == "divisor":
        from attn.widgets.divisor import DivisorExplorer
        return DivisorExplorer()
    if name == "wiring":
        from attn.widgets.wiring import WiringExplorer
        return WiringExplorer()
    if name == "projections":
        from attn.widgets.projections import ProjectionsExplorer
        return ProjectionsExplorer()
    return None  # quadratic: measured at build time, checked against its own data below


def reference(name: str, explorer, state: dict, data: dict) -> dict[str, float]:
    if name == "quadratic":  # the numbers are the build's measurements; T² and the matrix's size are not
        i = data["T"].index(state["T"])
        T = data["T"][i]
        return {"T": T, "entries": T * T, "score_mib": T * T * np.dtype(data["dtype"]).itemsize / 2**20, "ms": data["ms"][i],
                "mib_full": data["mib_full"][i], "mib_blocked": data["mib_blocked"][i]}
    explorer.set_live_state(state)
    return explorer.live_values()


# -- the browser side ---------------------------------------------------------------------------
READ = """
root => ({
  state: JSON.parse(root.dataset.state),
  numbers: Object.fromEntries([...root.querySelectorAll('[data-name][data-value]')]
                                .map(e => [e.dataset.name, Number(e.dataset.value)])),
  shown: Object.fromEntries([...root.querySelectorAll('[data-name][data-value]')]
                               .filter(e => e.tagName !== 'rect').map(e => [e.dataset.name, e.textContent])),
  picture: root.querySelector('svg').innerHTML,
  caption: root.querySelector('figcaption').textContent,
  // every "τ = <number>" the reader sees, in the titles, the text alternative and the control's readout
  // (a fixed mark on the curve, data-role "mark", names a constant τ and is left out)
  taus: [...root.querySelectorAll('svg text:not([data-role="mark"]), figcaption')]
          .flatMap(e => [...e.textContent.matchAll(/τ = ([0-9][0-9.e+-]*)/g)].map(m => m[1].replace(/[.]$/, '')))
          .concat([...root.querySelectorAll('.attn-controls input[data-name="tau"] ~ output')].map(e => e.textContent)),
  handler_ms: Number(root.dataset.handlerMs || 'NaN'),
})
"""
CONTROLS = """
root => [...root.querySelectorAll('.attn-controls [data-name]')].map(e => ({
  name: e.dataset.name, tag: e.tagName.toLowerCase(), value: e.value, disabled: e.disabled,
  min: e.min, max: e.max, step: e.step, options: e.tagName === 'SELECT' ? e.options.length : 0,
  label: (e.labels && e.labels[0]) ? e.labels[0].textContent : ''}))
"""
# A text that labels a line of the picture (data-role ending in "label") must not sit on a bar, another text,
# a marker or a curve: the reader would see a smear, as the temperature explorer's "uniform 1/T_k" once was.
OVERLAPS = """
root => {
  const svg = root.querySelector('svg');
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const inside = (p, b) => p.x > b.left && p.x < b.right && p.y > b.top && p.y < b.bottom;
  const found = [];
  for (const label of svg.querySelectorAll('text[data-role$="label"]')) {
    const a = label.getBoundingClientRect();
    for (const other of svg.querySelectorAll('rect, text, circle')) {
      if (other === label || other.classList.contains('attn-frame') || other.style.display === 'none') continue;
      if (other.tagName === 'text' && other.dataset.role === label.dataset.role) continue;  // its own other line
      if (other.tagName === 'text' && !other.textContent) continue;
      const b = other.getBoundingClientRect();
      if (b.width && b.height && hit(a, b)) found.push(`"${label.textContent}" on <${other.tagName}> "${other.textContent}"`);
    }
    for (const line of svg.querySelectorAll('polyline')) {
      const m = line.getScreenCTM();
      for (const q of line.points) {
        const p = new DOMPoint(q.x, q.y).matrixTransform(m);
        if (inside(p, a)) { found.push(`"${label.textContent}" on a curve`); break; }
      }
    }
  }
  return found;
}
"""
SET = """
(root, [name, value]) => {
  const e = root.querySelector(`.attn-controls [data-name="${name}"]`);
  e.value = value;
  e.dispatchEvent(new Event('input', {bubbles: true}));
}
"""


def _new_value(c: dict, rng: random.Random) -> str:
    if c["tag"] == "select":
        return str((int(c["value"]) + 1 + rng.randrange(max(1, c["options"] - 1))) % c["options"])
    lo, hi, step = float(c["min"]), float(c["max"]), float(c["step"])
    n = int(round((hi - lo) / step))
    current = int(round((float(c["value"]) - lo) / step))
    k = rng.choice([k for k in range(n + 1) if k != current])
    return repr(round(lo + k * step, 10))


def _explore(page, root, name: str, shots: str) -> dict:
    rng = random.Random(14)
    data = root.evaluate("r => r.attnData")
    explorer = _explorer(name, data)
    out = {"moves": [], "compared": [], "keyboard": {}, "drag": None, "axe": {}, "handler_ms": []}

    def check(label):
        r = root.evaluate(READ)
        ref = reference(name, explorer, r["state"], data)
        out["compared"].append({"label": label, "state": r["state"], "numbers": r["numbers"], "shown": r["shown"],
                                "reference": ref, "caption": r["caption"], "taus": r["taus"], "overlaps": root.evaluate(OVERLAPS)})
        if math.isfinite(r["handler_ms"]):
            out["handler_ms"].append(r["handler_ms"])
        return r

    before = check("initial")
    # every control once, in order (the wiring before T_k, which it enables)
    for c in root.evaluate(CONTROLS):
        if c["disabled"]:
            out["moves"].append({"control": c["name"], "disabled": True})
            continue
        root.evaluate(SET, [c["name"], _new_value(c, rng)])
        after = check(f"move {c['name']}")
        out["moves"].append({"control": c["name"], "label": c["label"], "state": after["state"] != before["state"],
                             "picture": after["picture"] != before["picture"],
                             "numbers": after["numbers"] != before["numbers"],
                             "caption": after["caption"] != before["caption"]})
        before = after
    # every slider at both ends of its range: the numbers, the words and the labels still hold there
    for c in root.evaluate(CONTROLS):
        if not c["disabled"] and c["tag"] == "input" and c["min"] != "" and c["max"] != "":
            for end in (c["min"], c["max"]):
                root.evaluate(SET, [c["name"], end])
                check(f"{c['name']} at {end}")
    for k in range(SAMPLES):  # random states
        controls = [c for c in root.evaluate(CONTROLS) if not c["disabled"]]
        c = rng.choice(controls)
        root.evaluate(SET, [c["name"], _new_value(c, rng)])
        check(f"sample {k}")
    _screens(page, root, shots)  # after every control and the samples have moved it
    # keyboard: a slider (or the list) takes arrow keys
    first = root.locator(".attn-controls [data-name]:not([disabled])").first
    state0 = root.evaluate(READ)["state"]
    first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    if root.evaluate(READ)["state"] == state0:
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
    out["keyboard"]["control"] = root.evaluate(READ)["state"] != state0
    check("keyboard control")
    handles = root.locator(".attn-handle")
    if handles.count():
        state0 = root.evaluate(READ)["state"]
        handles.nth(0).focus()
        page.keyboard.press("ArrowUp")
        out["keyboard"]["handle"] = root.evaluate(READ)["state"] != state0
        check("keyboard handle")
        # drag the last handle (the query on Prop 1) with the mouse
        h = handles.nth(handles.count() - 1)
        h.scroll_into_view_if_needed()
        box = h.bounding_box()
        state0 = root.evaluate(READ)["state"]
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 - 25, box["y"] + box["height"] / 2 + 15, steps=4)
        page.mouse.up()
        out["drag"] = root.evaluate(READ)["state"] != state0
        check("drag")
    # accessibility of the explorer itself, light and dark
    page.add_script_tag(path=str(AXE))
    for mode in ("light", "dark"):
        page.evaluate("m => { document.documentElement.dataset.theme = m; document.documentElement.dataset.mode = m; }", mode)
        page.wait_for_timeout(200)
        result = root.evaluate("r => axe.run(r, {resultTypes: ['violations'], preload: false})")
        out["axe"][mode] = [{"id": v["id"], "impact": v["impact"], "help": v["help"],
                             "nodes": [", ".join(map(str, n["target"])) for n in v["nodes"][:3]]}
                            for v in result["violations"]]
    page.evaluate("() => { document.documentElement.dataset.theme = 'light'; document.documentElement.dataset.mode = 'light'; }")
    return out


def _screens(page, root, shots: str):
    for mode in ("light", "dark"):
        page.evaluate("m => { document.documentElement.dataset.theme = m; document.documentElement.dataset.mode = m; }", mode)
        page.wait_for_timeout(150)
        root.scroll_into_view_if_needed()
        root.screenshot(path=str(SCREENSHOTS / f"{shots}-{mode}.png"))
    page.evaluate("() => { document.documentElement.dataset.theme = 'light'; document.documentElement.dataset.mode = 'light'; }")


@pytest.fixture(scope="module")
def explored(server, _fresh_screenshots) -> dict:
    """page -> list (one per explorer) of what happened; visited once, in one chromium, network off."""
    sync_api = pytest.importorskip("playwright.sync_api")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    results = {}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        context.set_default_timeout(30_000)
        for page_name, names in EXPLORER_PAGES.items():
            page = context.new_page()
            outside, errors = [], []
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(server) or r.request.url.startswith("data:")
                       else (outside.append(r.request.url), r.abort())[1])
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + page_name, wait_until="load")
            entry = {"explorers": [], "outside": outside, "errors": errors}
            try:
                page.wait_for_function(f"() => document.querySelectorAll('.attn-explorer').length >= {len(names)}",
                                       timeout=60_000)
                roots = page.locator(".attn-explorer")
                entry["count"] = roots.count()
                for k, name in enumerate(names):
                    shots = "explorer-" + page_name.split("/")[-1].removesuffix(".html") + f"-{k}"
                    entry["explorers"].append({"name": name, **_explore(page, roots.nth(k), name, shots)})
            except Exception as exc:  # noqa: BLE001 - reported by every test of the page
                entry["error"] = f"{type(exc).__name__}: {exc}"
            results[page_name] = entry
            page.close()
        browser.close()
    out = SCREENSHOTS / "explorer-timings.json"  # handler times seen by the suite (bin/bench measures them properly)
    out.write_text(json.dumps({p: [{"name": e["name"], "handler_ms": e["handler_ms"]} for e in r["explorers"]]
                               for p, r in results.items()}, indent=1))
    return results


def _page(explored, page_name):
    r = explored[page_name]
    if "error" in r:
        pytest.fail(f"{page_name}: {r['error']}", pytrace=False)
    assert not r["outside"], f"{page_name}: requests outside the book: {r['outside']}"
    assert not r["errors"], f"{page_name}: JavaScript errors: {r['errors']}"
    assert r["count"] == len(EXPLORER_PAGES[page_name]), f"{page_name}: {r['count']} explorers drawn"
    return r["explorers"]


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
def test_every_control_changes_the_picture_and_numbers(explored, page_name):
    for e in _page(explored, page_name):
        moved = [m for m in e["moves"] if not m.get("disabled")]
        assert moved, f"{page_name} {e['name']}: no control could be moved"
        for m in moved:
            assert m["state"], f"{page_name} {e['name']}: moving {m['control']} did not change the state"
            if e["name"] == "weighted_average" and m["control"] == "key":
                continue  # picks which key the "key x", "key y" sliders edit: the picture stays, the sliders load the key
            assert m["picture"], f"{page_name} {e['name']}: moving {m['control']} did not change the picture"
            assert m["caption"], f"{page_name} {e['name']}: moving {m['control']} left the text alternative as it was"
            assert m["numbers"], f"{page_name} {e['name']}: moving {m['control']} did not change the numbers"
            assert m["label"].strip(), f"{page_name} {e['name']}: control {m['control']} has no label"


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
def test_numbers_on_the_page_equal_attn(explored, page_name):
    for e in _page(explored, page_name):
        assert len(e["compared"]) >= SAMPLES + 2
        for c in e["compared"]:
            page_numbers, ref = c["numbers"], c["reference"]
            assert page_numbers, f"{page_name} {e['name']}: no numbers on the page ({c['label']})"
            missing = set(page_numbers) - set(ref)
            assert not missing, f"{page_name} {e['name']}: numbers attn does not check: {sorted(missing)}"
            for key, value in page_numbers.items():
                assert abs(value - ref[key]) <= 1e-12 * max(1.0, abs(ref[key])), (
                    f"{page_name} {e['name']} {c['label']}: {key} = {value!r} on the page, {ref[key]!r} from attn "
                    f"(state {c['state']})")
            for key, text in c["shown"].items():  # the rounded figure the reader sees is that number, rounded
                decimals = len(text.split(".")[1]) if "." in text and "e" not in text else None
                if decimals is not None:
                    assert abs(float(text) - ref[key]) <= 0.5 * 10**-decimals + 1e-12, (
                        f"{page_name} {e['name']}: {key} shows {text}, attn gives {ref[key]!r}")


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
def test_keyboard_and_dragging(explored, page_name):
    for e in _page(explored, page_name):
        assert e["keyboard"]["control"], f"{page_name} {e['name']}: arrow keys on a focused control changed nothing"
        if "handle" in e["keyboard"]:
            assert e["keyboard"]["handle"], f"{page_name} {e['name']}: arrow keys on a focused arrow tip changed nothing"
            assert e["drag"], f"{page_name} {e['name']}: dragging an arrow tip changed nothing"
    if page_name == "chapters/prop1-weighted-average.html":
        assert "handle" in _page(explored, page_name)[0]["keyboard"], "Prop 1: the query and keys cannot be dragged"


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_explorers_pass_axe(explored, page_name, mode):
    for e in _page(explored, page_name):
        bad = [v for v in e["axe"][mode] if v["impact"] in BAD_IMPACTS]
        assert not bad, f"{page_name} {e['name']} ({mode}): axe-core found:\n" + "\n".join(
            f"  [{v['impact']}] {v['id']}: {v['help']} at {v['nodes']}" for v in bad)


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
def test_line_labels_stay_clear_of_the_picture(explored, page_name):
    for e in _page(explored, page_name):
        for c in e["compared"]:
            assert not c["overlaps"], f"{page_name} {e['name']} ({c['label']}, state {c['state']}): {c['overlaps']}"


# "the first 1 tokens of Y": a count of one with a plural noun, in the text alternative of some state
ONE_PLURAL = re.compile(r"(?<![\d.,])1 [a-z]+s\b")


@pytest.mark.parametrize("page_name", EXPLORER_PAGES)
def test_text_alternatives_agree_in_number(explored, page_name):
    for e in _page(explored, page_name):
        for c in e["compared"]:
            bad = ONE_PLURAL.findall(c["caption"])
            assert not bad, f"{page_name} {e['name']} ({c['label']}): {bad} in {c['caption']!r}"


@pytest.mark.parametrize("page_name", [p for p, names in EXPLORER_PAGES.items()
                                       if {"temperature", "weighted_average"} & set(names)])
def test_tau_reads_the_same_everywhere_it_is_shown(explored, page_name):
    for e in _page(explored, page_name):
        if e["name"] not in ("temperature", "weighted_average"):
            continue
        for c in e["compared"]:
            expected = format(c["state"]["tau"], ".3g")
            assert c["taus"] and set(c["taus"]) == {expected}, (
                f"{page_name} {e['name']} ({c['label']}): τ = {c['state']['tau']!r} is shown as {c['taus']}, "
                f"not {expected} everywhere")


def test_the_number_rule_catches_a_plural_after_one():
    assert ONE_PLURAL.search("keys and values from the first 1 tokens of Y")
    assert not ONE_PLURAL.search("from the first token of Y; 0.1 weights; 11 tokens; 1.00 nats")


# -- the line labels over every state, without the book ------------------------------------------------------
# The book's pages are visited at a few states; here the explorers that label lines are loaded alone, in a blank
# page with a stand-in model (as benchmarks/explorers.py does), and every label is checked against bars, texts,
# markers and curves at every step of the slider (the marker at an extreme tau once sat on a limit label).
BLANK = """<!doctype html><html><head><meta charset="utf-8"><style>%(css)s</style></head><body><div id="el"></div>
<script type="module">
const esm = %(esm)s;
const mod = await import(URL.createObjectURL(new Blob([esm], {type: "text/javascript"})));
const values = {spec: %(spec)s, state: %(state)s, seen: -1};
const model = {get: k => values[k], set: (k, v) => { values[k] = v; }, save_changes() {}, on() {}, off() {}, send() {}};
mod.default.render({model, el: document.getElementById("el")});
window.ready = true;
</script></body></html>"""


def _labelled_explorers():
    from attn.widgets.divisor import DivisorExplorer
    from attn.widgets.temperature import TemperatureExplorer

    import attn

    prop3_row = attn.random_logits(64, T_k=8, n=1, scaled=False, rng=7)[0]  # the row Proposition 3 shows
    return {"temperature, Figure 3 row": lambda: TemperatureExplorer(),
            "temperature, Prop 3 row": lambda: TemperatureExplorer(prop3_row, marks={"τ = 1": 1.0, "τ = √dₖ": 8.0}),
            "divisor": lambda: DivisorExplorer()}


@contextlib.contextmanager
def standalone(explorer):
    """The explorer's widget alone on a blank page in headless chromium, without the book: yields its root."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing")
    w = explorer.widget()
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_content(BLANK % {"css": w._css, "esm": json.dumps(w._esm), "spec": json.dumps(w.spec),
                                      "state": json.dumps(w.state)})
            page.wait_for_function("() => window.ready === true", timeout=30_000)
            yield page.locator(".attn-explorer")
            browser.close()
    finally:
        w.close_explorer()


@pytest.mark.parametrize("name", list(_labelled_explorers()))
def test_line_labels_stay_clear_at_every_slider_step(name):
    found = []
    with standalone(_labelled_explorers()[name]()) as root:
        assert root.evaluate("r => r.querySelectorAll('text[data-role$=\"label\"]').length") > 0
        (c,) = root.evaluate(CONTROLS)
        lo, hi, step = float(c["min"]), float(c["max"]), float(c["step"] or 1)
        for k in range(int(round((hi - lo) / step)) + 1):
            root.evaluate(SET, [c["name"], repr(round(lo + k * step, 10))])
            found += [f"{c['name']} = {lo + k * step:g}: {o}" for o in root.evaluate(OVERLAPS)]
    assert not found, f"{name}: {len(found)} overlaps, the first: {found[:5]}"


# -- Proposition 3's explorer, at every width, without the book --------------------------------------------------
# Its second reader (s2) found: at d_k = 1 "std of q·k: 1.0" beside "std of q·k / √dₖ: 0.97" (one number, written to
# two precisions), the histogram of q·k a smear along a linear axis at large d_k, and no legend on the lower panels.
DIVISOR_READ = """
root => {
  const svg = root.querySelector('svg');
  const texts = [...svg.querySelectorAll('text')].map(t => t.textContent);
  const frame = svg.querySelector('rect.attn-frame').getBBox();
  const tops = [...svg.querySelectorAll('path')].slice(0, 2).map(p => p.getBBox().y);
  return {texts, caption: root.querySelector('figcaption').textContent, frame: [frame.y, frame.height], tops};
}
"""


def test_the_divisor_explorer_shows_both_spreads_alike_at_every_width():
    from attn.widgets.divisor import D_K_GRID, DivisorExplorer

    problems = []
    with standalone(DivisorExplorer()) as root:
        (c,) = root.evaluate(CONTROLS)
        for k, d_k in enumerate(D_K_GRID):
            root.evaluate(SET, [c["name"], str(k)])
            r = root.evaluate(DIVISOR_READ)
            stds = [t for t in r["texts"] if t.startswith("std of")]
            u, s = (re.search(r":\s*([\d.]+)", t).group(1) for t in stds)
            if len(u.split(".")[1]) != len(s.split(".")[1]) or (d_k == 1 and u != s):
                problems.append(f"d_k = {d_k}: the picture writes {stds}")
            m = re.search(r"standard deviation ([\d.]+), the scores q·k / √dₖ ([\d.]+)\.", r["caption"])
            if not m or len(m.group(1).split(".")[1]) != len(m.group(2).split(".")[1]):
                problems.append(f"d_k = {d_k}: the text alternative reads {r['caption'][:120]!r}")
            if sum(t == "unscaled" for t in r["texts"]) < 3 or sum(t == "/√dₖ" for t in r["texts"]) < 3:
                problems.append(f"d_k = {d_k}: a panel without its legend")
            y0, height = r["frame"]
            for name, top in zip(("q·k", "q·k / √dₖ"), r["tops"]):
                if (y0 + height - top) < 0.4 * height:  # the histogram's peak, as a share of the panel
                    problems.append(f"d_k = {d_k}: the histogram of {name} reaches only {(y0 + height - top) / height:.0%}")
    assert not problems, "\n".join(problems)
