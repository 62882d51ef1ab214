"""Sphinx extension: make every page of the built book work with no network.

The assets themselves (MathJax, require.js, the ipywidgets HTML manager) come from npm
(package-lock.json) and are copied into _build/html/vendor/ by ``html_extra_path`` (see
_config.yml and bin/offline-assets). This extension fixes what configuration alone cannot:

* the widget manager's AMD bundle resolves its font files against a require.js module path
  (``@jupyter-widgets/html-manager/dist/``) that would be looked up next to each page: map it
  to ``vendor/html-manager`` before the bundle loads;
* a script registered twice (sphinx-thebe's inline ``const THEBE_JS_URL = ...`` is added twice
  under Jupyter Book 1) is a JavaScript error (``Identifier has already been declared``) on every
  page: keep the first of identical scripts.
"""
from __future__ import annotations

import os

REQUIRE_JS = "vendor/require.js"
HTML_MANAGER = "vendor/html-manager"
REQUIRE_CONFIG = (
    "require.config({paths: {'@jupyter-widgets/html-manager/dist': "
    f"(document.documentElement.dataset.content_root || './') + '{HTML_MANAGER}'}}}});"
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


def setup(app):
    # run after every other html-page-context handler (MathJax, myst-nb's widget scripts, thebe)
    app.connect("html-page-context", _tidy_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
