"""Prop 4's wiring explorer on the built page: each matrix panel is as wide as the keys it shows (no empty
part of a frame, in the first state or after a move)."""
from contextlib import contextmanager

from playwright.sync_api import sync_playwright

from browsing import CHROMIUM, CHROMIUM_ARGS

# For each frame: its box and the box around the cells drawn in the same panel (client pixels).
FRAMES = """
root => [...root.querySelectorAll('svg rect.attn-frame')].map(frame => {
  const cells = [...frame.parentNode.querySelectorAll('rect[data-name]')].filter(r => r.style.display !== 'none');
  const box = b => ({left: b.left, right: b.right, top: b.top, bottom: b.bottom});
  const boxes = cells.map(c => c.getBoundingClientRect());
  return {frame: box(frame.getBoundingClientRect()), n: cells.length,
          cells: {left: Math.min(...boxes.map(b => b.left)), right: Math.max(...boxes.map(b => b.right)),
                  top: Math.min(...boxes.map(b => b.top)), bottom: Math.max(...boxes.map(b => b.bottom))}};
})
"""
SET = """
(root, [name, value]) => {
  const e = root.querySelector(`.attn-controls [data-name="${name}"]`);
  e.value = value;
  e.dispatchEvent(new Event('input', {bubbles: true}));
}
"""


@contextmanager
def wiring_explorer(server):
    """The first wiring explorer on Prop 4's built page, drawn: its root element (the one holding its controls)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(server + "chapters/prop4-self-cross.html")
            page.wait_for_function("() => document.querySelectorAll('svg rect.attn-frame').length >= 2", timeout=60_000)
            yield page.locator("svg:has(rect.attn-frame)").first.locator(
                "xpath=ancestor::*[.//*[contains(@class,'attn-controls')]][1]")
        finally:
            browser.close()


def test_wiring_explorers_frames_fit_the_keys_shown(server):
    with wiring_explorer(server) as root:
        T_q = 5
        for label, moves, T_k in [("self", [], T_q), ("cross, T_k = 1", [("wiring", "1"), ("T_k", "1")], 1),
                                  ("cross, T_k = 10", [("T_k", "10")], 10)]:
            for move in moves:
                root.evaluate(SET, list(move))
            frames = root.evaluate(FRAMES)
            assert len(frames) == 2, frames  # scores and weights
            for f in frames:
                assert f["n"] == T_q * T_k, (label, f)
                for side in ("left", "right", "top", "bottom"):  # the frame hugs the cells: nothing empty
                    assert abs(f["frame"][side] - f["cells"][side]) <= 2, (label, side, f)


# Each heatmap cell: its <title> (the browser's tooltip on hover), its data-value, whether it is shown, and
# whether the cell is what the pointer finds at its own centre (nothing drawn over it hides the tooltip).
CELLS = """
root => [...root.querySelectorAll('svg rect[data-name]')].map(r => {
  const b = r.getBoundingClientRect(), x = b.left + b.width / 2, y = b.top + b.height / 2;
  const t = r.querySelector(':scope > title');
  return {name: r.dataset.name, shown: r.style.display !== 'none', value: r.dataset.value ?? null,
          title: t ? t.textContent : null, on_top: document.elementFromPoint(x, y) === r, x, y};
})
"""


def test_wiring_heatmap_cells_show_their_exact_value_on_hover(server):
    """The usage note says: rest the pointer on a cell to read its value to four significant digits. Each
    shown cell has a <title> ending in its data-value rounded so (as Python's .4g), never a raw 16-digit
    double, and no hidden cell keeps one."""
    from attn.widgets.wiring import WiringExplorer

    assert "value to four significant digits" in WiringExplorer.live_usage   # the promise this test keeps
    with wiring_explorer(server) as root:
        root.scroll_into_view_if_needed()
        for moves in ([], [("wiring", "1"), ("T_k", "3")]):
            for move in moves:
                root.evaluate(SET, list(move))
            cells = root.evaluate(CELLS)
            shown = [c for c in cells if c["shown"]]
            assert {c["name"][0] for c in shown} == {"S", "W", "O"}, cells
            for c in shown:
                assert c["value"] is not None and c["title"], c
                shown_value = c["title"].rsplit(": ", 1)[1]
                assert float(shown_value) == float(format(float(c["value"]), ".4g")), c
                assert len(shown_value.lstrip("-").replace(".", "").lstrip("0")) <= 4, c
                assert c["on_top"], c   # the pointer there finds this cell, so the tooltip is its own
            for c in cells:
                if not c["shown"]:
                    assert not c["title"], c
