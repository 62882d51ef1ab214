"""The whole chapter as one PDF (bin/pdf), printed from the built book by the same Chromium: the file
exists, holds every page of the table of contents in order (its outline names each page's title, and each
title is in the text of the pages it points at), and no page was printed blank."""
from __future__ import annotations

import re
import sys

import pytest

from book import ROOT
from browsing import CHROMIUM, toc_pages

sys.path.insert(0, str(ROOT / "bin"))
import book_pdf  # noqa: E402


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


@pytest.fixture(scope="module")
def pdf(book_html, tmp_path_factory):
    from pypdf import PdfReader

    out = tmp_path_factory.mktemp("pdf") / "book.pdf"
    summary = book_pdf.make_pdf(book_html, out)
    return out, summary, PdfReader(str(out))


def test_pdf_uses_the_tests_chromium():
    assert book_pdf.CHROMIUM == CHROMIUM
    assert book_pdf.toc_pages() == toc_pages()


def test_pdf_has_every_page_in_order(pdf):
    out, summary, reader = pdf
    assert out.is_file() and out.stat().st_size > 100_000, f"{out}: {out.stat().st_size} bytes"
    pages = toc_pages()
    outline = [item for item in reader.outline if not isinstance(item, list)]
    assert len(outline) == len(pages), f"{len(outline)} outline entries for {len(pages)} book pages"
    starts = [reader.get_destination_page_number(item) for item in outline]
    assert starts == sorted(starts) and len(set(starts)) == len(starts), f"pages out of order or empty: {starts}"
    ends = starts[1:] + [len(reader.pages)]
    missing = []
    for item, start, end in zip(outline, starts, ends):
        text = _norm(" ".join(reader.pages[k].extract_text() or "" for k in range(start, end)))
        words = [w for w in re.findall(r"[a-z]{4,}", _norm(item.title))][:4]
        if not words or not all(w in text for w in words):
            missing.append(f"{item.title!r} (PDF pages {start + 1}-{end})")
    assert not missing, f"page titles not found in the text of their pages: {missing}"
    assert summary["pages"] == len(reader.pages) >= len(pages)


def test_pdf_pages_are_not_blank(pdf):
    _, _, reader = pdf
    # A page may rightly hold one short line (the end of a code cell): blank means no text and no image.
    blank = [k + 1 for k, page in enumerate(reader.pages) if not (page.extract_text() or "").strip()
             and not page.images]
    assert not blank, f"blank PDF pages: {blank}"
