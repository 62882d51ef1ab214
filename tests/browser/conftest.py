"""The built book as a reader sees it: Debian's chromium, driven by playwright, with no network.

`_build/html` (built once per session, strictly, by the fixture `book_build` of tests/conftest.py) is served on 127.0.0.1 by Python's
http.server in a thread. Every other request is aborted by a playwright route and counted as a failure.
Each page is loaded once; what the tests check is collected in that visit (see `PageReport`), and a
full-page screenshot is kept in `_build/screenshots/` (test artifacts: look at them).

For a quick run against a book you built yourself with `bin/build-book /tmp/build-$NAME`:
    ATTN_BOOK_HTML=/tmp/build-$NAME/html .venv/bin/python -m pytest tests/browser
"""
from __future__ import annotations

import asyncio
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from book import HTML
from browsing import CHROMIUM, CHROMIUM_ARGS, PAGES, SCREENSHOTS, PageReport, visit_all


# -- the book, its server, the browser --------------------------------------------------------
@pytest.fixture(scope="session")
def book_html(book_build) -> Path:
    override = os.environ.get("ATTN_BOOK_HTML")
    if override:
        html = Path(override).resolve()
        if not (html / "index.html").is_file():  # a wrong folder would otherwise fail every page with a 404
            pytest.fail(f"ATTN_BOOK_HTML={override} holds no index.html: after `bin/build-book DIR` the book is in "
                        "DIR/html, after `jupyter-book build . --path-output DIR` in DIR/_build/html", pytrace=False)
        return html
    result = book_build
    if result.returncode != 0:
        pytest.fail("the book did not build (see tests/pages/test_book.py):\n" + result.stdout[-3000:] + result.stderr[-3000:],
                    pytrace=False)
    return HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(book_html):
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def _fresh_screenshots():
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)


@pytest.hookimpl(trylast=True)  # after -k / -m have deselected
def pytest_collection_modifyitems(config, items):
    """Visit only the pages the selected tests look at (all of them if a book-wide test is selected)."""
    wanted = set()
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "reports" not in names:
            continue
        callspec = getattr(item, "callspec", None)
        if callspec and "name" in callspec.params:
            wanted.add(callspec.params["name"])
        elif "search" in item.name:
            wanted.add("search.html")
        else:
            wanted = set(PAGES)
            break
    config._attn_pages = [p for p in PAGES if p in wanted]


@pytest.fixture(scope="session")
def reports(request, server, _fresh_screenshots) -> dict[str, PageReport]:
    """Every page (that the selected tests need) visited once, two at a time, in Debian's chromium."""
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: bin/setup installs Debian's chromium"
    pages = getattr(request.config, "_attn_pages", None) or PAGES
    jobs = int(os.environ.get("ATTN_BROWSER_JOBS", "2"))
    return asyncio.run(visit_all(server, pages, CHROMIUM, CHROMIUM_ARGS, concurrency=jobs))


@pytest.fixture(scope="session")
def visit(reports):
    def get(name: str) -> PageReport:
        r = reports[name]
        if r.error:
            pytest.fail(f"{name}: the page could not be visited: {r.error}", pytrace=False)
        return r

    return get
