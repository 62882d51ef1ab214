"""What the browser tests visit and collect on each page (used by conftest.py and the tests)."""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from book import ROOT, toc_pages

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = ROOT / "_build" / "screenshots"


# -- which pages ------------------------------------------------------------------------------
# Pages Sphinx writes besides the table of contents: the redirect to the first page, the general
# index, the search page and sphinx-proof's index of results. They are checked like any other page.
GENERATED_PAGES = ["index.html", "genindex.html", "search.html", "prf-prf.html"]
PAGES = toc_pages() + GENERATED_PAGES


def built_pages(html: Path) -> set[str]:
    skip = ("_static/", "_sources/", "_images/", "vendor/")
    return {p.relative_to(html).as_posix() for p in html.rglob("*.html") if not p.relative_to(html).as_posix().startswith(skip)}


# -- one visit per page -----------------------------------------------------------------------
@dataclass
class PageReport:
    name: str
    error: str = ""  # the visit itself failed (timeout, crash): every check of the page fails with it
    console_errors: list = field(default_factory=list)
    failed_requests: list = field(default_factory=list)
    math: dict = field(default_factory=dict)
    math_overflow: list = field(default_factory=list)  # formulas wider than a box they sit in (cut off or scrolled)
    output_overflow: list = field(default_factory=list)  # code, printed outputs and tables wider than their column
    search_buttons: list = field(default_factory=list)  # where each rendered search button sits (header, sidebar)
    images: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    axe: list = field(default_factory=list)  # light mode (the book's default)
    axe_dark: list = field(default_factory=list)  # the same page switched to dark mode
    low_contrast: list = field(default_factory=list)  # texts below CONTRAST_FLOOR in light mode
    low_contrast_dark: list = field(default_factory=list)  # ... and in dark mode
    headings: list = field(default_factory=list)
    controls: dict = field(default_factory=dict)
    scrubbers: list = field(default_factory=list)  # per scrubber: frames, whether stepping changed the image
    solutions: list = field(default_factory=list)  # per solution: folded at first, opened by a click
    search_hits: int = 0  # search.html only: results for "softmax"
    screenshot: Path | None = None
    screenshot_dark: Path | None = None


# TeX that reached the reader as text: any dollar sign, \( \) \[ \], any backslash command (\sqrt, \Delta,
# \times, ...), a braced sub- or superscript (x^{2}, W_{Q}), or a bare one-letter subscript such as d_k.
# Code (pre, code, .highlight) may legitimately show all of these and is skipped; everything else a reader
# can see is checked, on the whole page (side bar, titles, captions, link texts and unfolded solutions
# included), and so are alt texts, which a screen reader reads aloud (for them, everything but the bare
# subscript, which an explorer's frame description may spell as its parameter's name, d_k).
TEX_IN_ALT = r"\$|\\[()\[\]]|\\[A-Za-z]+|[_^]\{"
TEX_AS_TEXT = TEX_IN_ALT + r"|(?<![\w./-])[A-Za-z]_[A-Za-z0-9](?!\w)"

COLLECT_JS = r"""
() => {
  const skip = 'script,style,pre,code,textarea,mjx-container,mjx-assistive-mml,.highlight,.MathJax_Preview';
  const root = document.body;
  // math: Sphinx wraps every formula in .math; MathJax puts an mjx-container inside when it typesets it
  const math = [...document.querySelectorAll('.math')];
  const raw = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode(n) {
    return n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT; }});
  const tex = new RegExp(__TEX__), texAlt = new RegExp(__TEX_ALT__);
  while (walker.nextNode()) {
    const t = walker.currentNode.textContent;
    // a cell's output (the checker's feedback, a printed table) may write d_k in plain text; TeX it may not
    const hit = t.match(walker.currentNode.parentElement.closest('.cell_output, .output') ? texAlt : tex);
    if (hit) raw.push(`${JSON.stringify(hit[0])} in: ${t.trim().slice(0, 120)}`);
  }
  for (const img of document.querySelectorAll('img[alt]')) {
    const hit = img.getAttribute('alt').match(texAlt);
    if (hit) raw.push(`${JSON.stringify(hit[0])} in an alt text: ${img.getAttribute('alt').slice(0, 120)}`);
  }
  const visible = e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  return {
    math: {
      formulas: math.length,
      typeset: document.querySelectorAll('mjx-container').length,
      untypeset: math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.trim().slice(0, 80)),
      errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error]')].map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 120)),
      raw_tex: raw,
    },
    images: [...document.querySelectorAll('img')].map(i => ({
      src: (i.getAttribute('src') || '').slice(0, 100), alt: i.getAttribute('alt'),
      in_figure: !!i.closest('figure, .figure, .cell_output, .animation')})),
    figures: [...document.querySelectorAll('figure, div.figure')].map(f => ({
      id: f.id || '', imgs: f.querySelectorAll('img, svg, [role=img]').length,
      unlabelled: [...f.querySelectorAll('img')].filter(i => !(i.getAttribute('alt') || '').trim()).length})),
    headings: [...article.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(visible)
      .map(h => [Number(h.tagName[1]), h.textContent.replace(/[#¶]/g, '').trim().slice(0, 60)]),
    controls: {
      widget_views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
      // ipywidgets controls, apart from the live explorers' own (anywidget) views
      widgets: [...document.querySelectorAll('.jupyter-widgets, .widget-slider, .widget-hslider')]
        .filter(w => visible(w) && !w.querySelector('.attn-explorer') && !w.closest('.attn-explorer')).length,
      explorers: document.querySelectorAll('.attn-explorer').length,
      ranges_outside_scrubbers: [...document.querySelectorAll('input[type=range]')]
        .filter(r => !r.closest('.animation') && !r.closest('.attn-explorer')).length,
      scrubbers: document.querySelectorAll('.animation').length,
      solutions: document.querySelectorAll('div.solution').length,
    },
  };
}
"""
COLLECT_JS = COLLECT_JS.replace("__TEX__", json.dumps(TEX_AS_TEXT)).replace("__TEX_ALT__", json.dumps(TEX_IN_ALT))


# A typeset formula must fit every box it sits in: wider than its paragraph, list item, admonition or
# display block, it is cut off (overflow hidden) or needs a horizontal scroll bar. Formulas inside folded
# solutions have no size until unfolded: this runs on arrival and again with the solutions open.
MATH_OVERFLOW_JS = r"""
() => {
  const out = [];
  for (const m of document.querySelectorAll('mjx-container')) {
    const inner = m.querySelector('mjx-math') || m;
    const r = inner.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;               // not shown (folded)
    // inside a table, the cell is the box: a wide table scrolls as a whole, by the theme's design
    const stop = m.closest('td, th') || m.closest('article') || document.body;
    for (let a = m.parentElement; a && a !== stop.parentElement; a = a.parentElement) {
      const b = a.getBoundingClientRect();
      if (b.width === 0) continue;
      if (r.right > b.right + 2 || r.left < b.left - 2) {
        const tex = (m.closest('.math') || m).textContent.trim();
        out.push(`${(m.getAttribute('display') === 'true') ? 'display' : 'inline'} formula ${Math.round(r.width)} px wide `
                 + `in a ${a.tagName.toLowerCase()}.${[...a.classList].join('.')} of ${Math.round(b.width)} px: `
                 + (inner.getAttribute('aria-label') || m.getAttribute('aria-label') || tex).slice(0, 80));
        break;
      }
    }
  }
  return out;
}
"""

# A code cell's printed output that needs a horizontal scroll bar at 1280 px: its lines are wider than the
# column. A few px of slack for rounding; a folded output (zero width) is not shown and not judged.
OUTPUT_OVERFLOW_JS = r"""
() => {
  const out = [];
  for (const pre of document.querySelectorAll('.cell_output pre, .output pre')) {
    if (pre.clientWidth === 0) continue;
    if (pre.scrollWidth > pre.clientWidth + 4) {
      const widest = pre.textContent.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
      out.push(`output ${pre.scrollWidth} px wide in a column of ${pre.clientWidth} px: ${widest.trim().slice(0, 100)}`);
    }
  }
  // code a reader must scroll sideways to read: cell inputs and code blocks in the prose
  for (const pre of document.querySelectorAll('.bd-article .cell_input pre, .bd-article div.highlight pre')) {
    if (pre.clientWidth === 0 || pre.closest('.cell_output, .output')) continue;
    if (pre.scrollWidth > pre.clientWidth + 4) {
      const widest = pre.textContent.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
      out.push(`code ${pre.scrollWidth} px wide in a column of ${pre.clientWidth} px: ${widest.trim().slice(0, 100)}`);
    }
  }
  // a table wider than its scroll container hides its last columns behind a horizontal scroll bar
  for (const box of document.querySelectorAll('.bd-article .pst-scrollable-table-container')) {
    if (box.clientWidth === 0) continue;
    if (box.scrollWidth > box.clientWidth + 4) {
      const head = box.querySelector('tr');
      out.push(`table ${box.scrollWidth} px wide in a column of ${box.clientWidth} px: ${(head ? head.textContent : '').trim().replace(/\s+/g, ' ').slice(0, 100)}`);
    }
  }
  return out;
}
"""

# The search buttons a reader can see (a box of non-zero size), named by the region that holds them.
SEARCH_BUTTONS_JS = r"""
() => [...document.querySelectorAll('.search-button__button, .search-button-field')]
  .filter(b => { const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
  .map(b => (b.closest('.bd-header') ? 'top bar' : b.closest('.bd-sidebar-primary') ? 'sidebar'
             : b.closest('.bd-header-article') ? 'article header' : 'elsewhere'))
"""

WAIT_FRAME = "img => !!img.getAttribute('src') && img.getAttribute('src').startsWith('data:image')"
SRC_CHANGED = "([img, before]) => img.getAttribute('src') !== before"
SOLUTION_STATE = """
sol => {
  const shown = e => e.getBoundingClientRect().height > 0 && getComputedStyle(e).visibility !== 'hidden';
  const body = [...sol.children].filter(c => !c.classList.contains('admonition-title'));
  return {dropdown: sol.classList.contains('dropdown'), body: body.length, visible: body.filter(shown).length,
          title: (sol.querySelector('.admonition-title') || sol).textContent.trim().slice(0, 60)};
}
"""
MATHJAX_DONE = ("() => window.MathJax && MathJax.startup && MathJax.startup.promise ? "
                "MathJax.startup.promise.then(() => true) : false")


# The theme's own switch sets these two attributes on <html> (and remembers them in localStorage, which
# would leak into the other pages visited at the same time): set them directly.
# The theme's colours change with a CSS transition: read them only once every finite animation has ended
# (mid-transition, axe reads the search button's grey as anything between its light and dark values).
SET_MODE = """async mode => {
  document.documentElement.dataset.theme = mode; document.documentElement.dataset.mode = mode;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const finite = document.getAnimations().filter(a => (a.effect && a.effect.getComputedTiming().endTime) !== Infinity);
  await Promise.race([Promise.all(finite.map(a => a.finished.catch(() => null))), new Promise(r => setTimeout(r, 3000))]);
}"""
AXE_RUN = "() => axe.run(document, {resultTypes: ['violations'], preload: false})"
# Our own contrast measure, for what axe-core leaves out (it skips text of punctuation alone, such as the
# `...` a learner must replace, and text it cannot place): the WCAG ratio of every visible element's own
# text colour against the background it is painted on (translucent backgrounds composited up the tree).
LOW_CONTRAST_JS = r"""
limit => {
  const rgba = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return [0, 0, 0, 0];
    const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, under) => { const a = top[3] + under[3] * (1 - top[3]); if (a === 0) return [0, 0, 0, 0];
    return [0, 1, 2].map(i => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a).concat([a]); };
  const background = e => { const layers = [];
    for (let n = e; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor); if (c[3] > 0) layers.push(c); if (c[3] >= 1) break; }
    return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255, 1]); };
  const lum = c => { const f = x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const found = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest('svg, mjx-assistive-mml, script, style, noscript, [aria-hidden=true]')) continue;
    const own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join('');
    if (!own) continue;
    const s = getComputedStyle(e);
    if (s.visibility !== 'visible' || s.display === 'none' || !(e.offsetWidth || e.offsetHeight || e.getClientRects().length)) continue;
    const bg = background(e), fg = over(rgba(s.color), bg), r = ratio(fg, bg);
    if (r < limit) found.push({where: e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : ''),
      text: own.slice(0, 40), ratio: Math.round(r * 100) / 100, fg: s.color, bg: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')'});
  }
  return found;
}
"""
CONTRAST_FLOOR = 3.0  # the floor for any text, large or small; axe-core checks AA's 4.5:1 where it can


def _axe_findings(result) -> list[dict]:
    findings = []
    for v in result["violations"]:
        nodes = []
        for n in v["nodes"][:5]:
            where = ", ".join(map(str, n["target"]))
            data = next((c.get("data") for c in n.get("any", []) if isinstance(c.get("data"), dict)), None) or {}
            if "contrastRatio" in data:
                where += f" ({data['contrastRatio']}:1, {data.get('fgColor')} on {data.get('bgColor')})"
            nodes.append(where)
        findings.append({"id": v["id"], "impact": v["impact"], "help": v["help"], "count": len(v["nodes"]), "nodes": nodes})
    return findings


async def _changes(page, img, before, action) -> bool:
    await action()
    try:
        await page.wait_for_function(SRC_CHANGED, arg=[await img.element_handle(), before], timeout=5_000)
        return True
    except Exception:
        return False


async def _step_scrubbers(page, report: PageReport):
    animations = page.locator("div.animation")
    for k in range(await animations.count()):
        anim = animations.nth(k)
        img, slider = anim.locator("img").first, anim.locator("input[type=range]").first
        await anim.scroll_into_view_if_needed()
        await page.wait_for_function(WAIT_FRAME, arg=await img.element_handle(), timeout=10_000)
        last = int(await slider.get_attribute("max") or 0)
        first = await img.get_attribute("src")
        entry = {"index": k, "frames": last + 1, "next_changes": None, "end_changes": None}
        if last >= 1:
            entry["next_changes"] = await _changes(page, img, first, anim.locator('button[title="Next frame"]').click)
        if last >= 2:
            second = await img.get_attribute("src")
            entry["end_changes"] = await _changes(page, img, second, lambda: slider.fill(str(last)))
            entry["end_changes"] = entry["end_changes"] and await img.get_attribute("src") != first
        report.scrubbers.append(entry)


async def _unfold_solutions(page, report: PageReport):
    solutions = page.locator("div.solution")
    for k in range(await solutions.count()):
        sol = solutions.nth(k)
        state = await sol.evaluate(SOLUTION_STATE)
        entry = {"title": state["title"], "dropdown": state["dropdown"],
                 "folded": state["body"] > 0 and state["visible"] == 0, "opens": False}
        if state["dropdown"]:
            await sol.locator(".admonition-title").first.click()
            try:
                await page.wait_for_function(f"sol => ({SOLUTION_STATE})(sol).visible > 0",
                                             arg=await sol.element_handle(), timeout=5_000)
                entry["opens"] = True
            except Exception:
                pass
        report.solutions.append(entry)
    if report.solutions:
        await page.wait_for_timeout(600)  # let the unfolded content settle (tab stops for scrollable code)


async def _visit(context, server: str, name: str) -> PageReport:
    report = PageReport(name)
    page = await context.new_page()
    blocked = []

    async def route(r):
        url = r.request.url
        if url.startswith(server) or url.startswith("data:"):
            await r.continue_()
        else:
            blocked.append(url)
            await r.abort()

    await page.route("**/*", route)
    page.on("console", lambda m: report.console_errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: report.console_errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: report.failed_requests.append(f"{r.url} ({r.failure})"))
    page.on("response", lambda r: report.failed_requests.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)
    try:
        await page.goto(server + name, wait_until="load")
        try:  # on a busy machine "no request for 500 ms" can take long to happen; requests are checked anyway
            await page.wait_for_load_state("networkidle", timeout=90_000)
        except Exception:  # noqa: BLE001 - a page still loading is judged by its failed requests, not by a timeout
            pass
        await page.evaluate(MATHJAX_DONE)  # MathJax typesets after load: wait until it has finished
        views = await page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
        if views:  # the live explorers render from the saved widget state once the widget manager has loaded
            await page.wait_for_function(f"() => document.querySelectorAll('.attn-explorer').length >= {views}",
                                         timeout=180_000)  # slow on a busy machine, not broken
        data = await page.evaluate(COLLECT_JS)
        report.math, report.images, report.figures = data["math"], data["images"], data["figures"]
        report.headings, report.controls = data["headings"], data["controls"]
        report.math_overflow = await page.evaluate(MATH_OVERFLOW_JS)
        report.output_overflow = await page.evaluate(OUTPUT_OVERFLOW_JS)
        report.search_buttons = await page.evaluate(SEARCH_BUTTONS_JS)
        # what a reader sees on arrival (solutions folded, scrubbers on their first frame)
        report.screenshot = SCREENSHOTS / (name.replace("/", "__").removesuffix(".html") + ".png")
        await page.screenshot(path=str(report.screenshot), full_page=True)
        await _unfold_solutions(page, report)
        if report.solutions:
            await page.evaluate(MATHJAX_DONE)
            seen = set(report.math_overflow)
            report.math_overflow += [m for m in await page.evaluate(MATH_OVERFLOW_JS) if m not in seen]
            seen = set(report.output_overflow)  # the solutions' code and outputs, now that they are shown
            report.output_overflow += [m for m in await page.evaluate(OUTPUT_OVERFLOW_JS) if m not in seen]
            unfolded = await page.evaluate(COLLECT_JS)  # solution text was in the DOM already; alt texts likewise
            report.math["raw_tex"] = list(dict.fromkeys(report.math["raw_tex"] + unfolded["math"]["raw_tex"]))
        # axe-core injected as an inline script (no request); preload: false, or axe re-fetches every
        # stylesheet and resolves their @import against the page, not the sheet (a false 404).
        # It runs with the solutions unfolded, so their content is checked too.
        await page.add_script_tag(path=str(AXE))
        # from the top of the page: scrolled, the sticky header overlaps the text below it, and axe reads
        # the header's colours as the text's background
        await page.evaluate("window.scrollTo(0, 0)")
        report.axe = _axe_findings(await page.evaluate(AXE_RUN))
        report.low_contrast = await page.evaluate(LOW_CONTRAST_JS, CONTRAST_FLOOR)
        await page.evaluate(SET_MODE, "dark")
        await page.evaluate("window.scrollTo(0, 0)")
        report.axe_dark = _axe_findings(await page.evaluate(AXE_RUN))
        report.low_contrast_dark = await page.evaluate(LOW_CONTRAST_JS, CONTRAST_FLOOR)
        report.screenshot_dark = SCREENSHOTS / "dark" / report.screenshot.name
        report.screenshot_dark.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(report.screenshot_dark), full_page=True)
        await page.evaluate(SET_MODE, "light")
        await _step_scrubbers(page, report)
        if name == "search.html":  # the search page finds pages with no server-side help
            await page.goto(server + "search.html?q=softmax", wait_until="load")
            await page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0",
                                         timeout=15_000)
            report.search_hits = await page.locator("#search-results li").count()
    except Exception as exc:  # noqa: BLE001 - recorded, every test of this page reports it
        report.error = f"{type(exc).__name__}: {exc}"
    finally:
        seen = " ".join(report.failed_requests)
        report.failed_requests += [f"{u} (blocked: not 127.0.0.1)" for u in blocked if u not in seen]
        await page.close()
    return report


async def visit_all(server: str, names: list[str], chromium: str, args: list[str], concurrency: int = 2) -> dict:
    """Visit every page, ``concurrency`` at a time, in one headless chromium; return name -> PageReport."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, headless=True, args=args)
        context = await browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        context.set_default_timeout(60_000)
        gate = asyncio.Semaphore(concurrency)

        async def one(name):
            async with gate:
                return await _visit(context, server, name)

        reports = await asyncio.gather(*(one(n) for n in names))
        # A page that timed out on a busy machine (other builds, other test runs) is visited once more,
        # alone: a slow machine is not a broken page.
        for k, (name, r) in enumerate(zip(names, reports)):
            if r.error.startswith("TimeoutError"):
                reports[k] = await _visit(context, server, name)
        await context.close()
        await browser.close()
    return dict(zip(names, reports))
