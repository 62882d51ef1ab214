"""The live widgets as a learner meets them: in JupyterLab, in headless Chromium.

Python-side tests cannot see a widget whose view fails in the browser (an ``ipywidgets.Image`` with a
tooltip, for one, shows "Click to show javascript error" instead of its picture). This test starts
JupyterLab from the project's environment on a free local port, runs a notebook that shows every
explorer's ``widget()``, and checks in the page that each picture is drawn, that moving a slider
replaces the picture, and that a toggle does too.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from browsing import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS

SCREENSHOT = SCREENSHOTS / "jupyterlab-explorers.png"  # look at it after a run
EXPLORERS = [
    ("temperature", "TemperatureExplorer()"),
    ("weighted_average", "WeightedAverageExplorer()"),
    ("projections", "ProjectionsExplorer()"),
    ("scaling", "ScalingExplorer()"),
    ("wiring", "WiringExplorer()"),
    ("quadratic", "QuadraticCostExplorer(T_values=(128, 256, 512), repeats=1)"),
]

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (bin/test installs it)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    for module, make in EXPLORERS:
        cls = make.split("(")[0]
        nb.cells.append(nbformat.v4.new_code_cell(f"from attn.widgets.{module} import {cls}\n{make}.widget()"))
    path = folder / "explorers.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    _notebook(folder)
    port = _free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(folder / ".settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(folder / ".workspaces"), "MPLBACKEND": "Agg"}
    jupyter = Path(sys.executable).with_name("jupyter")
    server = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1", "--IdentityProvider.token=",
         "--ServerApp.password=", f"--ServerApp.root_dir={folder}", "--allow-root"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start in 60 s")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def test_every_explorer_draws_and_redraws_in_jupyterlab(lab):
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{lab}/lab/tree/explorers.ipynb")
        page.wait_for_selector(".jp-Notebook", timeout=90_000)
        # the kernel is connected and idle (the status bar says so), not just the page drawn
        page.wait_for_selector(".jp-StatusBar-Widget:has-text('| Idle')", timeout=120_000)
        if page.locator(".jp-toast-button:has-text('No')").count():  # the news question takes the focus
            page.locator(".jp-toast-button:has-text('No')").first.click()
        # run the cells one by one from the keyboard (select, command mode, Shift+Enter), each after the
        # previous one has finished; a key press lost while the page is busy is pressed once more
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
        for i in range(len(EXPLORERS)):
            for attempt in range(2):
                prompts.nth(i).click()
                page.keyboard.press("Escape")
                page.keyboard.press("Shift+Enter")
                try:
                    page.wait_for_function(
                        "i => { const p = document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')[i];"
                        " return p && /\\[\\d+\\]/.test(p.textContent); }", arg=i, timeout=60_000)
                    break
                except sync_api.TimeoutError:
                    if attempt:
                        page.screenshot(path=str(SCREENSHOT), full_page=True)
                        raise
        images = page.locator(".widget-image")
        deadline = time.monotonic() + 180
        while images.count() < len(EXPLORERS) and time.monotonic() < deadline:
            if page.locator("text=Click to show javascript error").count():
                break
            time.sleep(0.5)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        errors = page.locator("text=Click to show javascript error").count()
        assert errors == 0, f"{errors} widget view(s) failed to render in JupyterLab (screenshot: {SCREENSHOT})"
        assert images.count() == len(EXPLORERS), f"{images.count()} of {len(EXPLORERS)} pictures drawn"
        for i in range(len(EXPLORERS)):
            assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 300"), f"picture {i} is empty"

        # τ slider of the first explorer: keyboard moves, as a reader without a mouse would
        before = images.nth(0).get_attribute("src")
        page.locator(".widget-slider").first.locator(".noUi-handle").click()
        for _ in range(8):
            page.keyboard.press("ArrowLeft")
        page.wait_for_function("([img, src]) => img.src !== src", arg=[images.nth(0).element_handle(), before],
                               timeout=30_000)

        # the wiring toggle: self -> cross replaces that explorer's picture
        wiring = [m for m, _ in EXPLORERS].index("wiring")
        before = images.nth(wiring).get_attribute("src")
        page.click("text=cross: K, V from Y")
        page.wait_for_function("([img, src]) => img.src !== src", arg=[images.nth(wiring).element_handle(), before],
                               timeout=30_000)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        browser.close()
