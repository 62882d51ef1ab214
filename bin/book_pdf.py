"""The whole chapter as one PDF, printed from the built HTML book by the Chromium the browser tests use.

Every page of the table of contents, in its order, is loaded from a local server with the network off,
left as a reader first sees it (explorers in their initial state, solutions folded, light mode), printed
with Chromium's print engine (playwright's ``page.pdf``, which applies the theme's print style sheet: no
sidebars nor buttons), and the pages' PDFs are joined with pypdf, one outline entry per page.

    .venv/bin/python bin/book_pdf.py [HTML_DIR [OUT_PDF]]     (bin/pdf; bin/build-book --pdf)
"""
from __future__ import annotations

import argparse
import functools
import http.server
import io
import re
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
MATHJAX_DONE = ("() => window.MathJax && MathJax.startup && MathJax.startup.promise ? "
                "MathJax.startup.promise.then(() => true) : true")
IMAGES_DONE = "() => [...document.images].every(i => i.complete)"
TITLE = "() => { const h = document.querySelector('main h1, article h1, h1'); return h ? h.textContent.replace(/[#¶]/g, '').trim() : document.title; }"


def toc_pages(root: Path = ROOT) -> list[str]:
    """The table of contents' pages in reading order, as paths in the built book (``chapters/overview.html``)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))

    def files(entries):
        out = []
        for entry in entries or []:
            if "file" in entry:
                out.append(entry["file"])
            for key in ("sections", "chapters", "parts"):
                out += files(entry.get(key))
        return out

    return [re.sub(r"\.(md|ipynb)$", "", f) + ".html" for f in [toc["root"], *files(toc.get("parts")), *files(toc.get("chapters"))]]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(directory: Path):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def print_pages(html: Path, pages: list[str], chromium: str = CHROMIUM) -> list[tuple[str, str, bytes]]:
    """(page, title, PDF bytes) for each page, printed in headless Chromium with no network."""
    from playwright.sync_api import sync_playwright

    printed = []
    with serve(html) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        # generous: a page waits on what it loads, never on a clock, and a busy machine is slow, not broken
        context.set_default_timeout(300_000)
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith((server, "data:")) else r.abort())
        page = context.new_page()
        for name in pages:
            page.goto(server + name, wait_until="load")  # every script, style sheet and image loaded
            page.wait_for_function(IMAGES_DONE)
            page.evaluate(MATHJAX_DONE)
            page.evaluate("() => document.fonts.ready.then(() => true)")
            title = page.evaluate(TITLE)
            pdf = page.pdf(format="A4", print_background=True, outline=False,
                           margin={"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"})
            printed.append((name, title, pdf))
        browser.close()
    return printed


def blank(page) -> bool:
    """A PDF page with no text and no image on it."""
    return not (page.extract_text() or "").strip() and not page.images


def join(printed: list[tuple[str, str, bytes]], out: Path, title: str = "") -> dict:
    """One PDF from the pages' PDFs, an outline entry per page; returns {'pages': n, 'bytes': size}."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for _name, page_title, pdf in printed:
        reader = PdfReader(io.BytesIO(pdf))
        # Chromium sometimes starts a new sheet for the last sliver of a box's border: drop such sheets
        # (no text, no image), but never a page's first
        keep = [k for k, page in enumerate(reader.pages) if k == 0 or not blank(page)]
        writer.append(reader, pages=keep, outline_item=page_title)
    if title:
        writer.add_metadata({"/Title": title})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    return {"pages": len(writer.pages), "bytes": out.stat().st_size}


def make_pdf(html: Path, out: Path, pages: list[str] | None = None) -> dict:
    html = Path(html)
    pages = pages or toc_pages()
    missing = [p for p in pages if not (html / p).is_file()]
    if missing:
        raise SystemExit(f"pdf: pages missing from {html} (build the book first: bin/build-book): {missing[:5]}")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    summary = join(print_pages(html, pages), Path(out), title=config.get("title", ""))
    summary["book_pages"] = len(pages)
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default=str(ROOT / "_build" / "html"), help="the built book (default: _build/html)")
    parser.add_argument("out", nargs="?", help="the PDF to write (default: book.pdf next to the html folder)")
    args = parser.parse_args(argv)
    html = Path(args.html)
    out = Path(args.out) if args.out else html.parent / "book.pdf"
    s = make_pdf(html, out)
    print(f"PDF of {s['book_pages']} book pages: {out} ({s['pages']} PDF pages, {s['bytes'] / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
